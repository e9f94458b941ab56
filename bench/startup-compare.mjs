// node bench/startup-compare.mjs OTHER_MAIN (after npm run build here and in the other checkout):
// cold start of this build's server against another build's (e.g. a temp worktree of an earlier
// commit: `git worktree add --detach /tmp/before COMMIT`, copy node_modules, `npm run build`,
// OTHER_MAIN = /tmp/before/dist/bundle/main.js). Spawn → tools/list answered over stdio by a raw
// JSON-RPC client (bench/lib.mjs rawListToolsMs), MAILWARDEN_STATE unset (state on files), the
// sandbox's config dir; BENCH_RUNS (default 25) runs of each, interleaved run by run and the
// order alternating, so both see the same machine load. Prints JSON: medians and after / before.
import { resolve } from 'node:path';
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { MAIN, configFor, machine, median, nodeBaselineMs, rawListToolsMs, round } from './lib.mjs';

const other = process.argv[2];
if (other === undefined) {
  console.error('usage: node bench/startup-compare.mjs OTHER_MAIN (another build’s dist/bundle/main.js)');
  process.exit(2);
}
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const sandbox = await Sandbox.start({ users: [demoCorpus()] });
try {
  const env = { MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS), MAILWARDEN_SANDBOX_URL: sandbox.url };
  const builds = { before: resolve(other), after: MAIN };
  const ms = { before: [], after: [], node: [] };
  // One untimed start of each, so neither pays for a cold file cache.
  for (const main of Object.values(builds)) await rawListToolsMs(env, main);
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const b of order) ms[b].push(await rawListToolsMs(env, builds[b]));
    ms.node.push(...nodeBaselineMs(1));
  }
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machine(),
        runs: RUNS,
        before: { main: builds.before, medianMs: round(median(ms.before)) },
        after: { main: builds.after, medianMs: round(median(ms.after)) },
        nodeBaselineMedianMs: round(median(ms.node)),
        ratio: round(median(ms.after) / median(ms.before), 3),
      },
      null,
      2,
    ),
  );
} finally {
  await sandbox.close();
}
