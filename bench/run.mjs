// npm run bench: prints one JSON object with every benchmark; docs/benchmarks.md records them.
// Ratios (ours vs `node -e 0`, wall time vs injected latency) are measured in one run because
// this machine is noisy.
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { configFor, connect, machine, median, nodeBaselineMs, round } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const LATENCY_MS = 50;

async function coldStart(env) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const client = await connect(env);
    await client.listTools();
    times.push(performance.now() - t);
    await client.close();
  }
  return times;
}

const sandbox = await Sandbox.start({ users: [demoCorpus()] });
const env = { MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS), MAILWARDEN_SANDBOX_URL: sandbox.url };

// Interleave so both see the same machine load.
const baseline = nodeBaselineMs(RUNS);
const cold = await coldStart(env);

const client = await connect(env);
const tools = (await client.listTools()).tools;
const toolsListChars = JSON.stringify(tools).length;

await client.callTool({ name: 'get_profile', arguments: {} }); // token refresh outside the timing
sandbox.setLatency(LATENCY_MS);
const searches = [];
let last;
for (let i = 0; i < RUNS; i++) {
  sandbox.resetStats();
  const t = performance.now();
  last = await client.callTool({ name: 'search', arguments: { query: 'is:unread', maxResults: 10 } });
  const wall = performance.now() - t;
  const s = sandbox.stats();
  searches.push({ wall, requests: s.requests, quotaUnits: s.quotaUnits });
}
sandbox.setLatency(0);
await client.close();
await sandbox.close();

const searchWall = median(searches.map((s) => s.wall));
const textChars = last.content.map((c) => c.text ?? '').join('').length;
const result = {
  date: new Date().toISOString(),
  machine: machine(),
  runs: RUNS,
  coldStart: {
    medianMs: round(median(cold)),
    nodeBaselineMedianMs: round(median(baseline)),
    ratio: round(median(cold) / median(baseline), 2),
    target: '<= 4x node -e 0',
  },
  search10: {
    query: 'is:unread',
    threads: last.structuredContent.threads.length,
    httpRequests: searches[0].requests,
    quotaUnits: searches[0].quotaUnits,
    injectedLatencyMs: LATENCY_MS,
    wallMedianMs: round(searchWall),
    wallOverLatency: round(searchWall / LATENCY_MS, 2),
    target: '< 4x injected latency',
  },
  toolsList: { tools: tools.length, chars: toolsListChars },
  searchResult: { textChars, structuredChars: JSON.stringify(last.structuredContent).length },
};
console.log(JSON.stringify(result, null, 2));
