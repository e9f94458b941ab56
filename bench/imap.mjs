// node bench/imap.mjs (after npm run build): the read tools against real IMAP — a throwaway
// Dovecot seeded with the demo corpus (211 threads) in both profiles, `full` (TLS, every
// extension) and `bridge` (a Proton Mail Bridge imitation over STARTTLS) — with a proxy holding
// every client→server chunk BENCH_IMAP_DELAY_MS (200) before forwarding, through the built server
// and the real MCP client. Each tool gets a fresh server process: one cold call (connect, TLS,
// LOGIN, folder list) and then warm calls on the pooled connection.
//
// Counting: the proxy's commandsSeen() counts client *chunks*, not commands (one 'data' event each,
// TLS handshake records and LOGOUT included), and over TLS its bytes cannot be read. So every
// call also runs once more in a trace pass: the same account over plain IMAP on Dovecot's plain
// port (security 'insecure-loopback'), no delay, a proxy fault whose `when.test` records every
// chunk and never matches; each tagged line of that record is one IMAP command. Where a tool
// reports usage.requests (search, triage_digest, follow_ups) that is the provider's own count.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW, DEMO_FACTS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { imapThreadIdForKey, startImapDemo } from '../dist/sandbox/imap-account.js';
import { startImapProxy } from '../dist/sandbox/imap/index.js';
import { MAIN, machine, median, repointImap, round } from './lib.mjs';

const DELAY_MS = Number(process.env.BENCH_IMAP_DELAY_MS ?? 200);
const WARM = Number(process.env.BENCH_IMAP_WARM ?? 3);
const PROFILES = (process.env.BENCH_IMAP_PROFILES ?? 'full,bridge').split(',');
const CLOCK_ENV = { MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC' };

// The longest corpus thread (the corpus has no 10-message thread).
const corpus = demoCorpus();
const longest = [...corpus.threads].sort((a, b) => b.messages.length - a.messages.length)[0];
const longKey = Object.entries(DEMO_FACTS.keys).find(([, v]) => v === longest.key)?.[0] ?? longest.key;

const CALLS = [
  { name: 'search', label: 'search in:inbox', args: { query: 'in:inbox', maxResults: 10 } },
  {
    name: 'search',
    label: 'search in:inbox is:unread',
    args: { query: 'in:inbox is:unread', maxResults: 10 },
  },
  {
    name: 'get_thread',
    label: `get_thread ${longKey}`,
    args: { threadId: imapThreadIdForKey(longest.key), bodies: 'new' },
  },
  { name: 'triage_digest', label: 'triage_digest maxThreads 100', args: { maxThreads: 100 } },
  { name: 'get_profile', label: 'get_profile', args: {} },
  { name: 'list_labels', label: 'list_labels', args: {} },
  // follow_ups is the longest scan (about 150 commands, 30 s a call on Bridge at 200 ms): one
  // warm call keeps the benchmark near five minutes.
  { name: 'follow_ups', label: 'follow_ups', args: {}, warm: 1 },
];

/** What each result says about its size, to show the call did the work asked. */
function pick(name, out) {
  switch (name) {
    case 'search':
      return { threads: out.threads?.length, indexHits: out.verification?.indexHits };
    case 'get_thread':
      return { messageCount: out.messageCount };
    case 'triage_digest':
      return { threads: out.threads, moreThreadsMatched: out.moreThreadsMatched };
    case 'get_profile':
      return { messagesTotal: out.messagesTotal };
    case 'list_labels':
      return { labels: out.labels?.length };
    case 'follow_ups':
      return { awaitingReply: out.awaitingReply?.length, awaitingYou: out.awaitingYou?.length };
    default:
      return {};
  }
}

const env = (demo) => ({ PATH: process.env.PATH ?? '', HOME: demo.configDir, ...demo.env, ...CLOCK_ENV });

async function connect(demo) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: env(demo),
    stderr: 'ignore',
  });
  const client = new Client(
    { name: 'mailwarden-bench', version: '0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  return client;
}

/**
 * IMAP commands in recorded plaintext chunks, one per tagged line, each as its verb plus a short
 * note of what it asked (the folder of an EXAMINE, how many Message-IDs a SEARCH names, how many
 * UIDs and which items a FETCH reads); the arguments of LOGIN/AUTHENTICATE are never kept.
 */
function commands(chunks) {
  const out = [];
  for (const chunk of chunks)
    for (const line of chunk.split('\r\n')) {
      const m = /^[A-Za-z0-9.]+ (UID [A-Za-z]+|[A-Za-z]+)(?: (.*))?$/.exec(line);
      if (!m) continue;
      const verb = m[1].toUpperCase();
      out.push({ verb, note: note(verb, m[2] ?? '') });
    }
  return out;
}

function note(verb, rest) {
  switch (verb) {
    case 'EXAMINE':
    case 'SELECT':
    case 'STATUS':
      return rest.replace(/^"([^"]*)".*$/, '$1').replace(/ \(.*$/, '');
    case 'UID SEARCH': {
      const ids = (rest.match(/HEADER Message-ID|HEADER References|HEADER In-Reply-To/gi) ?? []).length;
      return ids > 0 ? `${ids} HEADER keys` : rest.slice(0, 60);
    }
    case 'UID FETCH': {
      const [set = '', ...items] = rest.split(' ');
      const n = set.split(',').reduce((k, part) => {
        const [a, b] = part.split(':').map(Number);
        return k + (Number.isFinite(b) ? b - a + 1 : 1);
      }, 0);
      const what = /BODY\.PEEK\[\]/i.test(rest)
        ? 'source'
        : /HEADER\.FIELDS/i.test(rest)
          ? 'link headers'
          : /BODY\.PEEK\[HEADER\]/i.test(rest)
            ? 'header'
            : items.join(' ').slice(0, 40);
      return `${n} uids, ${what}`;
    }
    default:
      return '';
  }
}

const verbs = (cmds) => cmds.map((c) => c.verb);
/** What imapflow sends to log in (and STARTTLS/CAPABILITY where the transport needs them). */
const LOGIN = new Set(['CAPABILITY', 'STARTTLS', 'ID', 'LOGIN', 'AUTHENTICATE', 'NAMESPACE', 'ENABLE']);
const described = (cmds) => cmds.map((c) => (c.note ? `${c.verb} ${c.note}` : c.verb));

function tally(list) {
  const t = {};
  for (const v of list) t[v] = (t[v] ?? 0) + 1;
  return t;
}

/** Runs every call in CALLS on a fresh server process each: one cold call, then WARM warm ones. */
async function runCalls(demo, proxy, recorded) {
  const results = [];
  for (const call of CALLS) {
    const client = await connect(demo);
    const runs = [];
    for (let i = 0; i <= (call.warm ?? WARM); i++) {
      const chunksBefore = proxy.commandsSeen();
      const recBefore = recorded?.length ?? 0;
      const t = performance.now();
      const r = await client.callTool({ name: call.name, arguments: call.args }, { timeout: 600_000 });
      const wall = performance.now() - t;
      if (r.isError) throw new Error(`${call.label} failed: ${r.content.map((c) => c.text).join('')}`);
      const out = r.structuredContent ?? {};
      const run = {
        wallMs: round(wall),
        proxyChunks: proxy.commandsSeen() - chunksBefore,
        ...(out.usage ? { usageRequests: out.usage.requests } : {}),
        ...(i === 0 ? pick(call.name, out) : {}),
      };
      if (recorded) run.commands = commands(recorded.slice(recBefore));
      runs.push(run);
    }
    await client.close();
    // Let the closing server's LOGOUT (or socket close) pass before the next count starts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    results.push({ call, runs });
  }
  return results;
}

async function profileRun(profile) {
  const demo = await startImapDemo({ profile, delayMs: DELAY_MS });
  const own = [];
  try {
    // Measured pass: the profile's own transport (full: TLS; bridge: STARTTLS), delayed.
    let proxy = demo.proxy;
    if (proxy === undefined) {
      proxy = await startImapProxy({
        target: { host: demo.server.host, port: demo.server.tlsPort },
        delayMs: DELAY_MS,
      });
      own.push(proxy);
      await repointImap(demo, proxy.port, 'tls');
    }
    const tStart = performance.now();
    const measured = await runCalls(demo, proxy, undefined);
    const measuredMs = performance.now() - tStart;

    // Trace pass: plain IMAP on the plain port, no delay, every chunk recorded.
    const recorded = [];
    const recorder = { kind: 'drop', repeat: true, when: { test: (text) => (recorded.push(text), false) } };
    const tracer = await startImapProxy({
      target: { host: demo.server.host, port: demo.server.plainPort },
      faults: [recorder],
    });
    own.push(tracer);
    await repointImap(demo, tracer.port, 'insecure-loopback');
    const traced = await runCalls(demo, tracer, recorded);

    const calls = measured.map(({ call, runs }, i) => {
      const trace = traced[i].runs;
      const cold = runs[0];
      const warm = runs.slice(1);
      const warmTrace = trace.slice(1);
      const coldVerbs = verbs(trace[0].commands);
      const warmVerbs = verbs(warmTrace[0].commands);
      return {
        call: call.label,
        tool: call.name,
        args: call.args,
        ...Object.fromEntries(
          Object.entries(cold).filter(([k]) => !['wallMs', 'proxyChunks', 'usageRequests'].includes(k)),
        ),
        cold: {
          wallMs: cold.wallMs,
          proxyChunks: cold.proxyChunks,
          ...(cold.usageRequests === undefined ? {} : { usageRequests: cold.usageRequests }),
          commands: coldVerbs.length,
          afterLogin: coldVerbs.filter((v) => !LOGIN.has(v)).length,
          byCommand: tally(coldVerbs),
        },
        warm: {
          wallMedianMs: round(median(warm.map((r) => r.wallMs))),
          // Wall time not spent waiting on the injected delay (one delay per client chunk).
          wallOverDelayMedianMs: round(median(warm.map((r) => r.wallMs - r.proxyChunks * DELAY_MS))),
          wallMs: warm.map((r) => r.wallMs),
          proxyChunks: warm.map((r) => r.proxyChunks),
          ...(warm[0].usageRequests === undefined ? {} : { usageRequests: warm.map((r) => r.usageRequests) }),
          commands: warmTrace.map((r) => r.commands.length),
          byCommand: tally(warmVerbs),
          trace: described(warmTrace[0].commands),
        },
        coldTrace: described(trace[0].commands),
      };
    });
    return { profile, measuredPassMs: round(measuredMs), calls };
  } finally {
    for (const p of own) await p.stop();
    await demo.close();
  }
}

function targets(byProfile) {
  const out = [];
  for (const p of byProfile) {
    const get = (label) => p.calls.find((c) => c.call === label);
    for (const label of ['search in:inbox', 'search in:inbox is:unread']) {
      const c = get(label);
      const cmds = Math.max(...c.warm.commands);
      out.push({
        profile: p.profile,
        call: label,
        target: '<= 5 IMAP commands after login and < 2 s (warm)',
        measured: {
          commands: cmds,
          wallMedianMs: c.warm.wallMedianMs,
          coldCommandsAfterLogin: c.cold.afterLogin,
          coldWallMs: c.cold.wallMs,
        },
        met: cmds <= 5 && c.warm.wallMedianMs < 2000,
      });
    }
    const t = get(`get_thread ${longKey}`);
    const seq = t.warm.byCommand;
    const searches = seq['UID SEARCH'] ?? 0;
    const fetches = seq['UID FETCH'] ?? 0;
    out.push({
      profile: p.profile,
      call: `get_thread ${longKey} (${t.messageCount} messages; the corpus has no 10-message thread)`,
      target: '<= 3 search rounds plus one batched fetch (read here as <= 3 UID SEARCH and 1 UID FETCH)',
      measured: { uidSearch: searches, uidFetch: fetches, commands: t.warm.commands[0], byCommand: seq },
      met: searches <= 3 && fetches <= 1,
    });
    const d = get('triage_digest maxThreads 100');
    const dc = Math.max(...d.warm.commands);
    out.push({
      profile: p.profile,
      call: `triage_digest maxThreads 100 (judged ${d.threads} threads)`,
      target: '<= 10 IMAP commands',
      measured: { commands: dc, coldCommands: d.cold.commands, wallMedianMs: d.warm.wallMedianMs },
      met: dc <= 10,
    });
  }
  return out;
}

// The profiles run side by side (their own Dovecot, proxies and server processes): the wall time
// is almost all injected delay, and one after the other would take twice as long.
const SEQUENTIAL = process.env.BENCH_IMAP_SEQUENTIAL === '1';
const tAll = performance.now();
const byProfile = [];
if (SEQUENTIAL) for (const profile of PROFILES) byProfile.push(await profileRun(profile));
else byProfile.push(...(await Promise.all(PROFILES.map(profileRun))));
const totalMs = performance.now() - tAll;

console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      delayPerClientChunkMs: DELAY_MS,
      warmCalls: WARM,
      warmCallsFollowUps: CALLS.find((c) => c.name === 'follow_ups').warm,
      profilesRan: SEQUENTIAL ? 'one after the other' : 'side by side',
      totalMs: round(totalMs),
      corpusThreads: corpus.threads.length,
      longestThread: { key: longKey, messages: longest.messages.length },
      counting:
        "commands: tagged lines in a plaintext trace pass of the same calls (no delay); proxyChunks: commandsSeen() delta in the measured pass, i.e. client data events incl. TLS handshake records; usageRequests: the tool result's usage.requests",
      profiles: byProfile,
      targets: targets(byProfile),
    },
    null,
    2,
  ),
);
