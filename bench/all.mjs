// npm run bench: every benchmark in sequence (each in its own process, so one's sandbox and
// caches cannot help another), printed as one JSON object. docs/benchmarks.md records the runs.
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';

const benches = {
  foundation: 'run.mjs',
  bulk: 'bulk.mjs',
  'gmail-writes': 'gmail-writes.mjs',
  'gmail-instructions': 'gmail-instructions.mjs',
  triage: 'triage.mjs',
  imap: 'imap.mjs',
  deadlines: 'deadlines.mjs',
  'imap-writes': 'imap-writes.mjs',
  'new-mail': 'new-mail.mjs',
  formats: 'formats.mjs',
  'install-size': 'install-size.mjs',
  'imap-loop': 'imap-loop.mjs',
  replicas: 'replicas.mjs',
  'pg-writes': 'pg-writes.mjs',
  lint: 'lint.mjs',
};
// --quick: every benchmark once, small and without injected delays, to prove they all still run
// (test/bench/quick.test.ts runs it in CI). Its numbers are not the recorded ones. The install-size
// benchmark installs from the npm registry and is left out, and so is pg-writes (below).
const quick = process.argv.includes('--quick');
const QUICK_ENV = {
  BENCH_RUNS: '1',
  BENCH_MESSAGES: '200',
  BENCH_LATENCY_MS: '0',
  BENCH_REPS: '2',
  BENCH_COPIES: '1',
  BENCH_IMAP_DELAY_MS: '0',
  BENCH_IMAP_WARM: '1',
  BENCH_IMAP_PROFILES: 'bridge',
  BENCH_IMAP_APART_MS: '0',
  BENCH_GROW: '200',
  BENCH_CLIENTS: '4',
  BENCH_CALLS: '4',
  BENCH_EARLY: '4',
  BENCH_WARM: '4',
  BENCH_PAIRS: '4',
  BENCH_BLOCK: '2',
  BENCH_LINT_SMALL: '1',
};
// pg-writes (a PostgreSQL cluster with fsync on, seven reps) takes about a minute: left out too.
if (quick) {
  delete benches['install-size'];
  delete benches['pg-writes'];
}
const only = process.argv.slice(2).filter((a) => a !== '--quick');
const out = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  },
};
for (const [name, file] of Object.entries(benches)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const text = execFileSync(process.execPath, [resolve(import.meta.dirname, file)], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(quick ? { env: { ...process.env, ...QUICK_ENV } } : {}),
  });
  out[name] = JSON.parse(text);
}
console.log(JSON.stringify(out, null, 2));
