// npm run bench: prints one JSON object with every benchmark; docs/benchmarks.md records them.
// Ratios (ours vs `node -e 0`, wall time vs injected latency) are measured in one run because
// this machine is noisy.
import { rmSync } from 'node:fs';
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { DEFAULT_TIERS, TIERS } from '../dist/policy/tiers.js';
import {
  configFor,
  connect,
  connectV1,
  machine,
  median,
  nodeBaselineMs,
  rawListToolsMs,
  round,
} from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const LATENCY_MS = 50;

/**
 * Spawn → tools/list answered, for `node -e 0`, a raw JSON-RPC client, SDK v1 (whose listTools
 * also compiles every output schema into a validator) and SDK v2, interleaved run by run so all
 * four see the same machine load.
 */
async function coldStarts(env) {
  const times = { node: [], raw: [], v1: [], v2: [] };
  const timed = async (list, fn) => {
    const t = performance.now();
    const client = await fn();
    await client.listTools();
    list.push(performance.now() - t);
    await client.close();
  };
  for (let i = 0; i < RUNS; i++) {
    times.node.push(...nodeBaselineMs(1));
    times.raw.push(await rawListToolsMs(env));
    await timed(times.v1, () => connectV1(env));
    await timed(times.v2, () => connect(env));
  }
  return times;
}

/** Characters a model is shown for a tool in most clients: its description and input schema. */
const modelFacing = (t) => (t.description ?? '').length + JSON.stringify(t.inputSchema).length;

async function listing(env) {
  const client = await connect(env);
  const tools = (await client.listTools()).tools;
  await client.close();
  return {
    tools: tools.length,
    chars: JSON.stringify(tools).length,
    inputChars: tools.reduce((n, t) => n + JSON.stringify(t.inputSchema).length, 0),
    outputChars: tools.reduce((n, t) => n + JSON.stringify(t.outputSchema ?? {}).length, 0),
    descriptionChars: tools.reduce((n, t) => n + (t.description ?? '').length, 0),
    withOutputSchema: tools.filter((t) => t.outputSchema !== undefined).length,
    modelFacingMedian: median(tools.map(modelFacing)),
    modelFacingMax: Math.max(...tools.map(modelFacing)),
  };
}

const sandbox = await Sandbox.start({ users: [demoCorpus()] });
const env = { MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS), MAILWARDEN_SANDBOX_URL: sandbox.url };

const cold = await coldStarts(env);
const defaultTiers = await listing(env);
const allTiers = await listing({ ...env, MAILWARDEN_TOOLS: TIERS.join(',') });

const client = await connect(env);

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
  searches.push({ wall, requests: s.requests, apiCalls: s.apiCalls, quotaUnits: s.quotaUnits });
}
sandbox.setLatency(0);
await client.close();
await sandbox.close();
rmSync(env.MAILWARDEN_CONFIG_DIR, { recursive: true, force: true });

const searchWall = median(searches.map((s) => s.wall));
const textChars = last.content.map((c) => c.text ?? '').join('').length;
const result = {
  date: new Date().toISOString(),
  machine: machine(),
  runs: RUNS,
  coldStart: {
    nodeBaselineMedianMs: round(median(cold.node)),
    raw: {
      medianMs: round(median(cold.raw)),
      ratio: round(median(cold.raw) / median(cold.node), 2),
      target: '<= 3x node -e 0',
    },
    sdkV1: {
      medianMs: round(median(cold.v1)),
      ratio: round(median(cold.v1) / median(cold.node), 2),
      target: '<= 4x node -e 0',
    },
    sdkV2: {
      medianMs: round(median(cold.v2)),
      ratio: round(median(cold.v2) / median(cold.node), 2),
      target: '<= 4x node -e 0',
    },
  },
  search10: {
    query: 'is:unread',
    threads: last.structuredContent.threads.length,
    httpRequests: searches[0].requests,
    apiCalls: searches[0].apiCalls,
    quotaUnits: searches[0].quotaUnits,
    injectedLatencyMs: LATENCY_MS,
    wallMedianMs: round(searchWall),
    wallOverLatency: round(searchWall / LATENCY_MS, 2),
    target: '< 4x injected latency',
  },
  toolsList: {
    default: { tiers: DEFAULT_TIERS.join(','), ...defaultTiers, target: 'chars <= 40,000' },
    allTiers: { tiers: TIERS.join(','), ...allTiers, target: 'chars <= 50,000' },
    modelFacingTarget: 'median description + inputSchema <= 600 characters',
  },
  searchResult: { textChars, structuredChars: JSON.stringify(last.structuredContent).length },
};
console.log(JSON.stringify(result, null, 2));
