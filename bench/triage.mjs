// node bench/triage.mjs (after npm run build): the scanning read tools over 500 threads with 50 ms
// injected latency per request, through the built server and the real MCP client. Prints JSON:
// requests by method, quota units and wall time per tool. The demo corpus has 211 threads, so the
// mailbox here is the corpus three times over (633 threads), each copy with its own Message-IDs.
import { ServerResponse } from 'node:http';
import { DEFAULT_NOW, DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { TRIAGE_HEADERS } from '../dist/mail/triage.js';
import { configFor, connect, machine, round } from './lib.mjs';

const COPIES = Number(process.env.BENCH_COPIES ?? 3);
const THREADS = 500;
const LATENCY_MS = 50;

/** Every Message-ID, In-Reply-To and References id gets the copy's suffix, so copies never thread together. */
function recopy(raw, copy) {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, end === -1 ? raw.length : end);
  const renamed = head.replace(
    /^(Message-ID|In-Reply-To|References):([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)/gim,
    (_, name, value) => `${name}:${value.replace(/<([^<>@\s]+)@/g, `<$1.copy${copy}@`)}`,
  );
  return renamed + raw.slice(head.length);
}

function seed() {
  const base = demoCorpus();
  const threads = [];
  for (let copy = 0; copy < COPIES; copy++)
    for (const t of base.threads)
      threads.push({
        ...t,
        key: `${t.key}#${copy}`,
        messages: t.messages.map((m) => ({ ...m, raw: recopy(m.raw, copy) })),
      });
  return { ...base, threads };
}

// Bytes the sandbox sends, to weigh format=metadata against format=full: Gmail charges both the
// same 10 units per threads.get, so what a full read costs is payload (and its parsing).
let bytesSent = 0;
for (const fn of ['write', 'end']) {
  const original = ServerResponse.prototype[fn];
  ServerResponse.prototype[fn] = function (chunk, ...rest) {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function')
      bytesSent += Buffer.byteLength(chunk);
    return original.call(this, chunk, ...rest);
  };
}

const user = seed();
const sandbox = await Sandbox.start({ users: [user] });
const env = {
  MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS),
  MAILWARDEN_SANDBOX_URL: sandbox.url,
  MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
};
const client = await connect(env);
const tools = new Set((await client.listTools()).tools.map((t) => t.name));
await client.callTool({ name: 'get_profile', arguments: {} }); // token refresh outside the timing
await client.callTool({ name: 'list_labels', arguments: {} }); // label names cached, as in a session

async function measure(name, args, pick) {
  if (!tools.has(name)) return { tool: name, available: false };
  // Gmail's budget is 15,000 units per user per minute, and the sandbox keeps it: each tool gets a
  // fresh minute, so every run shows what one call costs against that budget.
  sandbox.clock.advance(61_000);
  sandbox.resetStats();
  bytesSent = 0;
  const t = performance.now();
  const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
  const wall = performance.now() - t;
  if (r.isError) throw new Error(`${name} failed: ${r.content.map((c) => c.text).join('')}`);
  const s = sandbox.stats();
  const out = r.structuredContent;
  return {
    tool: name,
    args,
    ...pick(out),
    // HTTP requests (a batch is one) and the API calls they carried (each counted as Gmail does).
    requests: s.requests,
    apiCalls: s.apiCalls,
    byMethod: Object.fromEntries(Object.entries(s.byMethod).map(([m, v]) => [m, v.requests])),
    apiCallsByMethod: Object.fromEntries(Object.entries(s.byMethod).map(([m, v]) => [m, v.apiCalls])),
    quotaUnits: s.quotaUnits,
    shareOfMinuteBudget: round(s.quotaUnits / 15_000, 2),
    reportedUsage: out.usage,
    responseBytes: bytesSent,
    wallMs: round(wall),
    wallOverLatency: round(wall / LATENCY_MS, 1),
    resultChars: JSON.stringify(out).length,
  };
}

sandbox.setLatency(LATENCY_MS);
const scan = { query: 'in:anywhere', maxThreads: THREADS };
const digest = await measure('triage_digest', scan, (o) => ({
  threads: o.threads,
  moreThreadsMatched: o.moreThreadsMatched,
  notJudged: o.notJudged,
}));
const digestHeadersOnly = await measure('triage_digest', { ...scan, readParts: false }, (o) => ({
  threads: o.threads,
  notJudged: o.notJudged,
}));
const subscriptions = await measure('list_subscriptions', scan, (o) => ({
  threadsScanned: o.threadsScanned,
  sendersFound: o.sendersFound,
}));
const followUps = await measure('follow_ups', { maxThreads: THREADS }, (o) => ({
  awaitingReply: o.awaitingReply.length,
  awaitingYou: o.awaitingYou.length,
  scanned: o.scanned,
}));
sandbox.setLatency(0);
await client.close();

/** The alternative not taken: every thread the digest judged, read with format=full. */
async function payloads() {
  sandbox.clock.advance(61_000);
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: sandbox.refreshTokenFor(DEMO_ADDRESS),
    client_id: sandbox.oauthClient.clientId,
    client_secret: sandbox.oauthClient.clientSecret,
  });
  const token = (await (await fetch(`${sandbox.url}/token`, { method: 'POST', body: form })).json())
    .access_token;
  const api = `${sandbox.url}/gmail/v1/users/me/threads`;
  const get = async (path) =>
    (await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } })).text();
  const ids = JSON.parse(await get(`?maxResults=${THREADS}&q=in:anywhere`)).threads.map((t) => t.id);
  const headers = TRIAGE_HEADERS.map((h) => `&metadataHeaders=${h}`).join('');
  const sum = async (suffix) =>
    (await Promise.all(ids.map((id) => get(`/${id}${suffix}`)))).reduce(
      (n, b) => n + Buffer.byteLength(b),
      0,
    );
  return {
    threads: ids.length,
    metadataBytes: await sum(`?format=metadata${headers}`),
    fullBytes: await sum('?format=full'),
  };
}
const payload = await payloads();
await sandbox.close();

console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      mailboxThreads: user.threads.length,
      injectedLatencyMs: LATENCY_MS,
      triageDigest: digest,
      triageDigestHeadersOnly: digestHeadersOnly,
      threadsGetPayload: payload,
      listSubscriptions: subscriptions,
      followUps,
    },
    null,
    2,
  ),
);
