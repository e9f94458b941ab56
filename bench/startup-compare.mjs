// node bench/startup-compare.mjs BEFORE_MAIN [MORE_MAIN…] (after npm run build here and in the
// other checkouts): cold start of other builds' servers and this one's (e.g. temp worktrees of
// earlier commits: `git worktree add --detach /tmp/before COMMIT`, copy node_modules, `npm run
// build`; BEFORE_MAIN = /tmp/before/dist/bundle/main.js). Spawn → tools/list answered over stdio by a raw
// JSON-RPC client (bench/lib.mjs rawListToolsMs), MAILWARDEN_STATE unset (state on files), the
// sandbox's config dir; BENCH_RUNS (default 25) runs of each, interleaved run by run and the
// order rotating, so all see the same machine load. Prints JSON: medians, and each / the first.
import { resolve } from 'node:path';
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { MAIN, configFor, machine, median, nodeBaselineMs, rawListToolsMs, round } from './lib.mjs';

const others = process.argv.slice(2);
if (others.length === 0) {
  console.error('usage: node bench/startup-compare.mjs BEFORE_MAIN [MORE_MAIN…] (other builds’ dist/bundle/main.js)');
  process.exit(2);
}
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const sandbox = await Sandbox.start({ users: [demoCorpus()] });
try {
  const env = { MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS), MAILWARDEN_SANDBOX_URL: sandbox.url };
  // The first argument is the baseline; this build is last.
  const builds = [...others.map((m) => resolve(m)), MAIN];
  const ms = builds.map(() => []);
  const node = [];
  // One untimed start of each, so none pays for a cold file cache.
  for (const main of builds) await rawListToolsMs(env, main);
  for (let i = 0; i < RUNS; i++) {
    // Each run starts with another build, so none is always first after the baseline's spawn.
    for (let k = 0; k < builds.length; k++) {
      const b = (i + k) % builds.length;
      ms[b].push(await rawListToolsMs(env, builds[b]));
    }
    node.push(...nodeBaselineMs(1));
  }
  const base = median(ms[0]);
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
        })),
      },
      null,
      2,
    ),
  );
} finally {
  await sandbox.close();
}
