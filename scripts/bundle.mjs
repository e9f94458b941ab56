// Bundles the built CLI (dist/cli/main.js, tsc output) into dist/bundle/: the bin users run.
// Measured on these machines: loading ~150 separate ES modules cost about 90 ms of a ~430 ms
// cold start; one entry plus lazily loaded chunks brings it near 340 ms (docs/benchmarks.md).
// @napi-rs/keyring stays external: it loads a native binary of its own.
import { build } from 'esbuild';

await build({
  entryPoints: { main: 'dist/cli/main.js' },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: 'dist/bundle',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['@napi-rs/keyring'],
  // Some dependencies are CommonJS and call require(); ESM output needs one in scope.
  banner: {
    js: "import { createRequire as __mwRequire } from 'node:module'; const require = __mwRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
