// npm run lint: eslint, prettier --check and tsc --noEmit, the three at once. Each builds or reads
// the project on its own, so on a 2-core machine running them side by side takes about as long
// as the slowest (eslint's type-aware pass) instead of the sum. Every rule still runs; the output
// of each tool is printed whole, in a fixed order, and any failure fails the lint.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const bin = (name) => resolve(import.meta.dirname, '../node_modules/.bin', name);
const tools = [
  ['eslint', [bin('eslint'), '.']],
  ['prettier', [bin('prettier'), '--check', '.']],
  ['tsc', [bin('tsc'), '--noEmit']],
];

const runs = tools.map(
  ([name, [cmd, ...args]]) =>
    new Promise((done) => {
      const started = performance.now();
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', (e) => done({ name, code: 1, out: `${out}${e.message}\n`, ms: 0 }));
      child.on('close', (code) => done({ name, code: code ?? 1, out, ms: performance.now() - started }));
    }),
);

let failed = false;
for (const r of await Promise.all(runs)) {
  const status = r.code === 0 ? 'ok' : `failed (exit ${r.code})`;
  console.log(`== ${r.name}: ${status}, ${(r.ms / 1000).toFixed(1)} s`);
  if (r.out.trim() !== '') console.log(r.out.trimEnd());
  if (r.code !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
