// node bench/startup-compare.mjs BEFORE_MAIN [MORE_MAIN…] (after npm run build here and in the
// other checkouts): cold start of other builds' servers and this one's (e.g. temp worktrees of
// earlier commits: `git worktree add --detach /tmp/before COMMIT`, copy node_modules, `npm run
// build`; BEFORE_MAIN = /tmp/before/dist/bundle/main.js). Spawn → tools/list answered over stdio by a raw
// JSON-RPC client (bench/lib.mjs rawListToolsMs), MAILWARDEN_STATE unset (state on files), the
// sandbox's config dir; BENCH_RUNS (default 25) runs of each, interleaved run by run and the
// order rotating, so all see the same machine load. Prints JSON: the medians of the wall time and
// of the server's own CPU time (steadier on a busy machine), and each / the first.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { MAIN, configFor, machine, median, nodeBaselineMs, rawListToolsMs, round } from './lib.mjs';

const others = process.argv.slice(2);
if (others.length === 0) {
  console.error(
    'usage: node bench/startup-compare.mjs BEFORE_MAIN [MORE_MAIN…] (other builds’ dist/bundle/main.js)',
  );
  process.exit(2);
}
const RUNS = Number(process.env.BENCH_RUNS ?? 25);

/**
 * CPU milliseconds (user + system) of this process's children that have ended, from /proc/self/stat
 * (cutime, cstime; clock ticks of 10 ms): read around one server's start, it is that server's CPU,
 * which other work on a busy machine delays but does not add to, as it does to the wall time.
 */
function childCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5), counted from 1 with pid and comm being 1 and 2.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}
const sandbox = await Sandbox.start({ users: [demoCorpus()] });
try {
  const env = {
    MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS),
    MAILWARDEN_SANDBOX_URL: sandbox.url,
  };
  // The first argument is the baseline; this build is last.
  const builds = [...others.map((m) => resolve(m)), MAIN];
  const ms = builds.map(() => []);
  const cpu = builds.map(() => []);
  const node = [];
  // One untimed start of each, so none pays for a cold file cache.
  for (const main of builds) await rawListToolsMs(env, main);
  for (let i = 0; i < RUNS; i++) {
    // Each run starts with another build, so none is always first after the baseline's spawn.
    for (let k = 0; k < builds.length; k++) {
      const b = (i + k) % builds.length;
      const before = childCpuMs();
      ms[b].push(await rawListToolsMs(env, builds[b]));
      cpu[b].push(childCpuMs() - before);
    }
    node.push(...nodeBaselineMs(1));
  }
  const base = median(ms[0]);
  const baseCpu = median(cpu[0]);
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machine(),
        runs: RUNS,
        nodeBaselineMedianMs: round(median(node)),
        builds: builds.map((main, b) => ({
          main,
          medianMs: round(median(ms[b])),
          ratioToFirst: round(median(ms[b]) / base, 3),
          medianCpuMs: median(cpu[b]),
          meanCpuMs: round(cpu[b].reduce((x, y) => x + y, 0) / RUNS),
          cpuRatioToFirst: round(median(cpu[b]) / baseCpu, 3),
        })),
      },
      null,
      2,
    ),
  );
} finally {
  await sandbox.close();
}
