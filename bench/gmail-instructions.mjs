// node bench/gmail-instructions.mjs (after npm run build; needs valgrind): the CPU ratio of
// bench/gmail-writes.mjs (a one-thread modify_labels against get_profile) counted in machine
// instructions instead of CPU time. The built server runs under callgrind, which counts every
// instruction each of its threads executes (the main thread, V8's compiler and collector threads,
// libuv's pool) whatever else the machine is doing; `callgrind_control --dump` closes a count
// between phases. On this noisy machine the CPU-time ratio of the same build moves between 1.6 and
// 2.6 from run to run (docs/benchmarks.md); the instruction counts move far less, and say where the
// work is.
//
// Phases, in one server process: BENCH_WARM pairs (default 150) in turns, not recorded; then
// BENCH_REPS times (default 2) BENCH_PAIRS get_profile calls (default 100), then BENCH_PAIRS
// writes, each block its own count. Per block: instructions per call, how many of them ran inside
// TurboFan's compile jobs (V8 optimising code that became hot), and how many on the main thread.
// BENCH_NODE_FLAGS: node flags for the server (e.g. "--single-threaded"). Linux, x86-64.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_NOW, DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { benchDir, configFor, connectServer, machine, round } from './lib.mjs';

const WARM = Number(process.env.BENCH_WARM ?? 150);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 100);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
if (valgrind.status !== 0) {
  console.log(
    JSON.stringify({ available: false, why: 'valgrind is not installed (Debian: apt-get install valgrind)' }),
  );
  process.exit(0);
}

// The counts and the server's config dir are removed when the bench exits (bench/lib.mjs).
const dir = benchDir('mailwarden-callgrind-');
const sandbox = await Sandbox.start({ users: [demoCorpus()] });
const configDir = configFor(sandbox, DEMO_ADDRESS);
// Under callgrind everything runs some 50 times slower: generous timeouts throughout.
const { client, pid } = await connectServer(
  {
    MAILWARDEN_CONFIG_DIR: configDir,
    MAILWARDEN_SANDBOX_URL: sandbox.url,
    MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
  },
  {
    wrapper: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg.out')}`],
    nodeFlags: FLAGS,
    timeout: 600_000,
  },
);

async function call(name, args) {
  sandbox.clock.advance(1_000);
  const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
  if (r.isError) throw new Error(`${name} failed: ${r.content.map((c) => c.text).join('')}`);
  return r.structuredContent;
}

await call('get_profile', {});
const threadId = (await call('search', { query: 'in:inbox', maxResults: 1 })).threads[0].threadId;
let writes = 0;
// The write of bench/gmail-writes.mjs: IMPORTANT added and removed in turn, so each call changes it.
const write = () =>
  call('modify_labels', {
    threadId,
    ...(writes++ % 2 === 0 ? { add: ['IMPORTANT'] } : { remove: ['IMPORTANT'] }),
  });
const dump = (tag) => execFileSync('callgrind_control', ['--dump=' + tag, String(pid)], { stdio: 'ignore' });

for (let i = 0; i < WARM; i++) {
  await call('get_profile', {});
  await write();
}
dump('warm');
const tags = [];
for (let rep = 0; rep < REPS; rep++) {
  for (let i = 0; i < PAIRS; i++) await call('get_profile', {});
  dump(`get_profile-${rep}`);
  tags.push({ kind: 'get_profile', rep });
  for (let i = 0; i < PAIRS; i++) await write();
  dump(`modify_labels-${rep}`);
  tags.push({ kind: 'modify_labels', rep });
}
await client.close();
await sandbox.close();

/** A dump's instructions: all of them, inside TurboFan's compile jobs, and on the main thread. */
function counts(file) {
  const text = readFileSync(file, 'utf8');
  const total = Number(/^(?:summary|totals):\s+(\d+)/m.exec(text)?.[1]);
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  const inclusive = (symbol) => {
    const line = annotated.split('\n').find((l) => l.includes(symbol));
    return line === undefined ? 0 : Number(line.trim().split(/\s+/)[0].replaceAll(',', ''));
  };
  return {
    total,
    turbofan: inclusive('PipelineCompilationJob::ExecuteJobImpl'),
    mainThread: inclusive('node::Start('),
  };
}
// Dumps are numbered in order: .1 is the start and the warm-up, then one per block.
const files = readdirSync(dir)
  .filter((f) => /^cg\.out\.\d+$/.test(f))
  .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
  .slice(1);
if (files.length !== tags.length) throw new Error(`expected ${tags.length} dumps, found ${files.length}`);
const M = (n) => round(n / PAIRS / 1e6, 2);
const blocks = files.map((f, i) => {
  const c = counts(join(dir, f));
  return {
    ...tags[i],
    millionInstructionsPerCall: M(c.total),
    inTurbofanCompiles: M(c.turbofan),
    onMainThread: M(c.mainThread),
  };
});
const of = (kind, k) => blocks.filter((b) => b.kind === kind).map((b) => b[k]);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ratio = (k) => round(mean(of('modify_labels', k)) / mean(of('get_profile', k)), 2);
const outside = (kind) => mean(of(kind, 'millionInstructionsPerCall')) - mean(of(kind, 'inTurbofanCompiles'));
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      valgrind: valgrind.stdout.trim(),
      nodeFlags: FLAGS,
      warmPairs: WARM,
      callsPerBlock: PAIRS,
      blocks,
      // modify_labels over get_profile, means over the blocks.
      ratio: {
        allInstructions: ratio('millionInstructionsPerCall'),
        mainThread: ratio('onMainThread'),
        outsideTurbofanCompiles: round(outside('modify_labels') / outside('get_profile'), 2),
      },
    },
    null,
    2,
  ),
);
