// node bench/gmail-writes.mjs (after npm run build): the Gmail write path and the tools around it
// on the sandbox demo mailbox, through the built server and the real MCP client, under the
// default write policy (no policy.json). Prints JSON: per tool, the exact HTTP requests by method
// and the Gmail API calls by method (a batch request is one HTTP request carrying many calls;
// each call counts once, and quota units are the calls'), from the sandbox's own counters, and
// the server's CPU per call.
//
// CPU: the server's own time on a CPU, read from outside as the sum over its threads of
// /proc/<pid>/task/*/schedstat (nanoseconds; the main thread, libuv's pool and V8's helpers),
// before and after each call; a row's figure is the median over BENCH_REPS calls. Linux only.
// No latency is injected: wall time is not what this measures.
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_NOW, DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { configFor, connect, connectServer, machine, median, round } from './lib.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 5);

/** Nanoseconds the process `pid` has spent on a CPU, all its threads together. */
function cpuNs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(join(`/proc/${pid}/task`, task, 'schedstat'), 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns;
}

/** The demo mailbox plus newsletters to write on: one thread each, each from its own list. */
function seed() {
  const base = demoCorpus();
  const at = DEFAULT_NOW - 3 * 86_400_000;
  const letters = Array.from({ length: 100 }, (_, i) => ({
    key: `bench-letter-${i}`,
    messages: [
      {
        raw: [
          `From: Letter ${i} <news@letter${i}.bench.example>`,
          `To: ${DEMO_ADDRESS}`,
          `Subject: Issue ${i}`,
          `Message-ID: <letter-${i}@letter${i}.bench.example>`,
          `List-Unsubscribe: <https://letter${i}.bench.example/u>`,
          'Content-Type: text/plain; charset=utf-8',
          '',
          `Issue number ${i}.`,
          '',
        ].join('\r\n'),
        labelIds: ['INBOX', 'UNREAD', 'CATEGORY_PROMOTIONS'],
        internalDate: at + i * 60_000,
      },
    ],
  }));
  return { ...base, threads: [...base.threads, ...letters] };
}

const sandbox = await Sandbox.start({ users: [seed()] });
const configDir = configFor(sandbox, DEMO_ADDRESS);
const { client, pid } = await connectServer({
  MAILWARDEN_CONFIG_DIR: configDir,
  MAILWARDEN_SANDBOX_URL: sandbox.url,
  MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
});
const tools = new Set((await client.listTools()).tools.map((t) => t.name));

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
  if (r.isError) throw new Error(`${name} failed: ${r.content.map((c) => c.text).join('')}`);
  return r.structuredContent;
}

/** One call with the server's CPU and the wall time around it. */
async function timed(name, args) {
  const [cpu0, t0] = [cpuNs(pid), performance.now()];
  const out = await call(name, args);
  return { out, cpuMs: (cpuNs(pid) - cpu0) / 1e6, wallMs: performance.now() - t0 };
}

/** One measured call: the sandbox's request counters, and the server's CPU and wall time around it. */
async function once(name, args) {
  sandbox.clock.advance(61_000); // a fresh minute of Gmail's per-user quota for every call
  sandbox.resetStats();
  const r = await timed(name, args);
  return { ...r, ...counts(sandbox.stats()) };
}

/** HTTP requests and API calls, in total and by method (a method with none of either left out). */
function counts(s) {
  const by = (k) =>
    Object.fromEntries(Object.entries(s.byMethod).flatMap(([m, v]) => (v[k] > 0 ? [[m, v[k]]] : [])));
  return {
    requests: s.requests,
    apiCalls: s.apiCalls,
    byMethod: by('requests'),
    apiCallsByMethod: by('apiCalls'),
  };
}

const rows = {};
/** A write's per-item outcome, so a row never counts a refusal as a write. */
function outcomes(out) {
  const n = (k) => (Array.isArray(out?.[k]) ? out[k].length : undefined);
  const o = { changed: n('changed'), refused: n('refused'), failed: n('failed') };
  if (o.changed === undefined) return {};
  if (out.needsConfirmation !== undefined || out.confirmation !== undefined)
    o.note = JSON.stringify(out).slice(0, 200);
  return { outcome: o };
}
/** `argsFor(i)`: the i-th repetition's arguments (a write needs a fresh target each time). */
async function measure(label, name, argsFor, reps = REPS) {
  if (!tools.has(name)) {
    rows[label] = { tool: name, available: false };
    return;
  }
  const runs = [];
  for (let i = 0; i < reps; i++) runs.push(await once(name, argsFor(i)));
  const perRun = new Set(runs.map((r) => r.requests));
  rows[label] = {
    tool: name,
    args: argsFor(0),
    requests: runs[0].requests,
    ...(perRun.size > 1 ? { requestsPerRun: runs.map((r) => r.requests) } : {}),
    byMethod: runs[0].byMethod,
    apiCalls: runs[0].apiCalls,
    apiCallsByMethod: runs[0].apiCallsByMethod,
    cpuMsMedian: round(median(runs.map((r) => r.cpuMs)), 2),
    cpuMsPerRun: runs.map((r) => round(r.cpuMs, 2)),
    wallMsMedian: round(median(runs.map((r) => r.wallMs)), 2),
    ...outcomes(runs[0].out),
  };
  return runs;
}

/** Up to `n` thread ids for `query`, page by page (search answers at most 50 a page). */
async function inboxThreads(query, n) {
  const ids = [];
  let pageToken;
  do {
    const page = await call('search', { query, maxResults: 50, ...(pageToken ? { pageToken } : {}) });
    ids.push(...page.threads.map((t) => t.threadId));
    pageToken = page.nextPageToken;
  } while (pageToken && ids.length < n);
  return ids.slice(0, n);
}

await call('get_profile', {}); // the token, outside the measurements
const newsletters = await inboxThreads('in:inbox from:bench.example', 80);
const pool = [...newsletters];
// The first move out of the inbox of a session learns the correspondents set from Sent and
// creates the agent label: measured once, apart from the rows below.
const coldMove = await once('archive', { threadId: pool.shift() });
rows['archive 1 thread, first move of the session'] = {
  tool: 'archive',
  requests: coldMove.requests,
  byMethod: coldMove.byMethod,
  apiCalls: coldMove.apiCalls,
  apiCallsByMethod: coldMove.apiCallsByMethod,
  ...outcomes(coldMove.out),
};

const take = (n) => {
  if (pool.length < n) throw new Error(`bench: only ${pool.length} newsletter threads left`);
  return pool.splice(0, n);
};

await measure('get_profile', 'get_profile', () => ({}));
await measure('list_labels', 'list_labels', () => ({}));
await measure('search is:unread 10', 'search', () => ({ query: 'is:unread', maxResults: 10 }));
await measure('get_thread', 'get_thread', () => ({ threadId: newsletters[0] }));
const starred = take(REPS);
await measure('modify_labels 1 thread (add STARRED)', 'modify_labels', (i) => ({
  threadId: starred[i],
  add: ['STARRED'],
}));
// The ratio the issue sets (a one-thread write at most twice get_profile's CPU), the write adding
// and removing IMPORTANT on two threads in turn so every call changes a label. Four phases in one
// process:
//  - early: the first BENCH_EARLY pairs (default 40) taken in turns, while V8 is still compiling
//    the code both calls run (its compiler threads are counted: they are the server's CPU too);
//  - then BENCH_WARM pairs (default 200) in turns, not recorded;
//  - steady, in turns: BENCH_PAIRS pairs (default 150). A call's CPU is what every thread of the
//    server spent while it ran, so background work (a collection, a compilation) that overlaps a
//    call is charged to it: the longer call, the write with its two round trips, collects more
//    of the work the calls of both kinds left behind;
//  - steady, in blocks: BENCH_PAIRS calls of each kind in blocks of BENCH_BLOCK (default 10), the
//    blocks alternating, so the background work a kind's calls cause lands mostly on calls of the
//    same kind. The ratio the target is judged on is this phase's mean over mean.
// Each phase gives the medians and the means: a mean counts the collections and compilations that
// land on a few calls, which a median leaves out.
// The sandbox clock moves 1 s a call here (a minute of quota holds them), not 61 s as above, so no
// token refresh lands inside the pairs.
const EARLY = Number(process.env.BENCH_EARLY ?? 40);
const WARM = Number(process.env.BENCH_WARM ?? 200);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 150);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 10);
const pairThreads = take(2);
async function cpuOf(name, args) {
  sandbox.clock.advance(1_000);
  return timed(name, args);
}
async function inTurns(n, from) {
  const got = { get_profile: [], modify_labels: [] };
  for (let k = 0; k < n; k++) {
    const i = from + k;
    got.get_profile.push(await cpuOf('get_profile', {}));
    const change = Math.floor(i / 2) % 2 === 0 ? { add: ['IMPORTANT'] } : { remove: ['IMPORTANT'] };
    got.modify_labels.push(await cpuOf('modify_labels', { threadId: pairThreads[i % 2], ...change }));
  }
  return got;
}
async function inBlocks(n, from) {
  const got = { get_profile: [], modify_labels: [] };
  for (let done = 0; done < n; done += BLOCK) {
    const size = Math.min(BLOCK, n - done);
    for (let k = 0; k < size; k++) got.get_profile.push(await cpuOf('get_profile', {}));
    for (let k = 0; k < size; k++) {
      const i = from + done + k;
      const change = Math.floor(i / 2) % 2 === 0 ? { add: ['IMPORTANT'] } : { remove: ['IMPORTANT'] };
      got.modify_labels.push(await cpuOf('modify_labels', { threadId: pairThreads[i % 2], ...change }));
    }
  }
  return got;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
// Wall time too: a call's CPU window is its wall time, and a write that waits (as the write
// gathering once did, 15 ms a call) is charged whatever the server's other threads do meanwhile.
function summary(got) {
  const cpu = (xs) => xs.map((x) => x.cpuMs);
  const [p, w] = [cpu(got.get_profile), cpu(got.modify_labels)];
  const wall = (xs) => round(median(xs.map((x) => x.wallMs)), 2);
  return {
    pairs: p.length,
    getProfileCpuMs: { mean: round(mean(p), 2), median: round(median(p), 2) },
    modifyLabelsOneThreadCpuMs: { mean: round(mean(w), 2), median: round(median(w), 2) },
    ratioOfMeans: round(mean(w) / mean(p), 2),
    ratioOfMedians: round(median(w) / median(p), 2),
    wallMsMedian: { getProfile: wall(got.get_profile), modifyLabelsOneThread: wall(got.modify_labels) },
  };
}
const early = summary(await inTurns(EARLY, 0));
await inTurns(WARM, EARLY);
const steady = summary(await inTurns(PAIRS, EARLY + WARM));
const blocks = summary(await inBlocks(PAIRS, EARLY + WARM + PAIRS));
const one = take(REPS);
await measure('archive 1 thread', 'archive', (i) => ({ threadId: one[i] }));
await measure('restore 1 thread', 'restore', (i) => ({ threadId: one[i] }));
const ten = take(10);
await measure('archive 10 threads', 'archive', () => ({ threadIds: ten }), 1);
const spam = take(REPS);
await measure('move_to_spam 1 thread', 'move_to_spam', (i) => ({ threadId: spam[i] }));
await measure('restore 1 thread from spam', 'restore', (i) => ({ threadId: spam[i] }));
const trash = take(REPS);
await measure('trash 1 thread', 'trash', (i) => ({ threadId: trash[i] }));
await measure('untrash 1 thread', 'untrash', (i) => ({ threadId: trash[i] }));
const snoozed = take(REPS);
await measure('snooze 1 thread', 'snooze', (i) => ({ threadId: snoozed[i], until: 'tomorrow 9am' }));
await measure('unsnooze 1 thread', 'unsnooze', (i) => ({ threadId: snoozed[i] }));
await measure('follow_ups', 'follow_ups', () => ({}), 2);
await measure('triage_digest', 'triage_digest', () => ({}), 2);
await measure('list_new_mail', 'list_new_mail', () => ({}), 2);

const labels = sandbox.mailbox(DEMO_ADDRESS).labels;
const agentLabel = labels.find((l) => l.name === 'mailwarden');
const carrying = agentLabel
  ? sandbox.mailbox(DEMO_ADDRESS).messages.filter((m) => m.labelIds.includes(agentLabel.id)).length
  : 0;

await client.close();
await sandbox.close();

/** follow_ups on the demo mailbox as shipped (the rows above run on it plus the newsletters). */
async function followUpsOnDemo() {
  const demo = await Sandbox.start({ users: [demoCorpus()] });
  const c = await connect({
    MAILWARDEN_CONFIG_DIR: configFor(demo, DEMO_ADDRESS),
    MAILWARDEN_SANDBOX_URL: demo.url,
    MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
  });
  await c.callTool({ name: 'get_profile', arguments: {} });
  demo.resetStats();
  const r = await c.callTool({ name: 'follow_ups', arguments: {} }, { timeout: 600_000 });
  const s = demo.stats();
  const o = r.structuredContent;
  await c.close();
  await demo.close();
  return {
    ...counts(s),
    awaitingReply: o.awaitingReply.length,
    awaitingYou: o.awaitingYou.length,
    setAside: o.setAside?.length ?? 0,
    scanned: o.scanned,
  };
}
const followUpsDemo = await followUpsOnDemo();

console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      // CPU per call is inflated by other work on the machine; the load says how much there was.
      loadAverage: loadavg().map((x) => round(x, 1)),
      reps: REPS,
      policy: 'default (no policy.json)',
      rows,
      inTurns: { early, warmPairs: WARM, steady },
      inBlocks: { block: BLOCK, ...blocks },
      oneThreadWriteCpuOverGetProfile: blocks.ratioOfMeans,
      messagesCarryingAgentLabel: carrying,
      followUpsOnDemo: followUpsDemo,
    },
    null,
    2,
  ),
);
