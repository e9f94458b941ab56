// node bench/bulk.mjs (after npm run build): bulk_modify over 10,000 matching messages with 50 ms
// injected latency per request, through the built server and the real MCP client. Prints JSON:
// requests by method, quota units and wall time per run. Targets: at most 10 batchModify calls
// plus the list pages; wall time under 40x the injected latency. BENCH_QUERY (default
// category:updates, which every seeded message carries), BENCH_MESSAGES and BENCH_LATENCY_MS
// vary the run.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_ADDRESS } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { configFor, connect, machine, round } from './lib.mjs';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 50);
const FROM = 'digest@bench.example';
const QUERY = process.env.BENCH_QUERY ?? 'category:updates';
const CAP = { maxMessages: MESSAGES };

function raw(i) {
  return [
    `From: Bench Digest <${FROM}>`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: Digest ${i}`,
    `Message-ID: <bench-${i}@bench.example>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Digest number ${i}.`,
    '',
  ].join('\r\n');
}

/** Two messages per thread; every 10th already archived, every 5th unread. */
function seed() {
  const base = Date.UTC(2026, 0, 1);
  const threads = [];
  for (let t = 0; t * 2 < MESSAGES; t++) {
    const messages = [];
    for (const i of [t * 2, t * 2 + 1]) {
      if (i >= MESSAGES) break;
      const labelIds = ['CATEGORY_UPDATES'];
      if (i % 10 !== 0) labelIds.push('INBOX');
      if (i % 5 === 0) labelIds.push('UNREAD');
      messages.push({ raw: raw(i), labelIds, internalDate: base + i * 60_000 });
    }
    threads.push({ key: `bench-${t}`, messages });
  }
  return { email: DEMO_ADDRESS, userLabels: [], threads };
}

const sandbox = await Sandbox.start({ users: [seed()] });
const configDir = configFor(sandbox, DEMO_ADDRESS);
// The benchmark moves 10,000 messages in one call, and moves them back and forth between runs:
// the policy it measures under has no daily cap (the default 50 would refuse the move, and the
// run would measure nothing) and lets the agent move mail that is not in the inbox.
writeFileSync(
  join(configDir, 'policy.json'),
  JSON.stringify({ default: { dailyMoveCap: 0, inboxOnlyMoves: false } }),
);
const env = { MAILWARDEN_CONFIG_DIR: configDir, MAILWARDEN_SANDBOX_URL: sandbox.url };
const client = await connect(env);
await client.callTool({ name: 'get_profile', arguments: {} }); // token refresh outside the timing

async function measure(name, args) {
  sandbox.resetStats();
  const t = performance.now();
  const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
  const wall = performance.now() - t;
  if (r.isError) throw new Error(`${name} failed: ${r.content.map((c) => c.text).join('')}`);
  const s = sandbox.stats();
  const out = r.structuredContent;
  return {
    out,
    row: {
      args: Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'plan')),
      submitted: out.submitted,
      chunks: out.chunks.length,
      requests: s.requests,
      byMethod: Object.fromEntries(Object.entries(s.byMethod).map(([m, v]) => [m, v.requests])),
      quotaUnits: s.quotaUnits,
      wallMs: round(wall),
      wallOverLatency: round(wall / LATENCY_MS, 1),
    },
  };
}

sandbox.setLatency(LATENCY_MS);
const withCheck = await measure('bulk_modify', {
  query: `${QUERY} is:unread`,
  add: ['STARRED'],
  crossCheck: true,
  ...CAP,
});
const plain = await measure('bulk_modify', { query: QUERY, add: ['Bench/Filed'], remove: ['INBOX'], ...CAP });
const withUndo = await measure('bulk_modify', {
  query: QUERY,
  add: ['Bench/Second'],
  remove: ['UNREAD'],
  undo: true,
  ...CAP,
});
const undo = await measure('undo_bulk_modify', { plan: withUndo.out.undoPlan });
const withVerify = await measure('bulk_modify', {
  query: QUERY,
  remove: ['Bench/Filed'],
  verify: true,
  ...CAP,
});
// The same work with no injected latency: what is left is the sandbox's own CPU time (it
// evaluates the query over every message for each list page) plus ours.
sandbox.setLatency(0);
const zero = await measure('bulk_modify', { query: QUERY, add: ['Bench/Zero'], remove: ['INBOX'], ...CAP });
await client.close();
await sandbox.close();

const batch = plain.row.byMethod['messages.batchModify'] ?? 0;
const listPages = plain.row.byMethod['messages.list'] ?? 0;
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      messages: MESSAGES,
      injectedLatencyMs: LATENCY_MS,
      bulkModify: {
        ...plain.row,
        target: '<= 10 batchModify + list pages; wall < 40x injected latency',
        met: batch <= Math.ceil(MESSAGES / 1000) && plain.row.wallOverLatency < 40,
        listPages,
        sameWorkAtZeroLatencyMs: zero.row.wallMs,
        latencyAttributableOverLatency: round((plain.row.wallMs - zero.row.wallMs) / LATENCY_MS, 1),
      },
      bulkModifyWithUndo: { ...withUndo.row, undoPlanGroups: withUndo.out.undoPlan.groups.length },
      undoBulkModify: undo.row,
      bulkModifyWithVerify: { ...withVerify.row, verified: withVerify.out.verified },
      bulkModifyWithCrossCheck: { ...withCheck.row, crossCheck: withCheck.out.crossCheck },
    },
    null,
    2,
  ),
);
