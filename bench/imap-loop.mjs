// node bench/imap-loop.mjs (after npm run build): the agent's loop on the Bridge-like Dovecot
// profile, as the person this server is built for runs it — a timer that wakes `mailwarden
// check-new-mail`, then one server session: list_new_mail, archive, move_to_spam, mark_handled —
// and the single calls around it (first call after start, get_message, get_thread, restore).
//
// One throwaway Dovecot (the bridge profile: no LIST-STATUS, CONDSTORE, keywords; label
// folders) holds the demo corpus. The server reaches it over plain loopback IMAP through a proxy
// that holds every client chunk BENCH_IMAP_DELAY_MS (default 1000, Bridge's measured speed) and
// records it: each tagged line is one IMAP command, so counts are exact and wall time is about
// commands × delay (plus the process start for the CLI rows). Plain, not STARTTLS, so the proxy
// can read the commands: a STARTTLS login costs one command more (STARTTLS itself).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW } from '../dist/sandbox/corpus/index.js';
import { startImapDemo } from '../dist/sandbox/imap-account.js';
import { startImapProxy } from '../dist/sandbox/imap/index.js';
import { MAIN, machine, repointImap, round } from './lib.mjs';

const DELAY_MS = Number(process.env.BENCH_IMAP_DELAY_MS ?? 1000);
const POLICY = { default: { dailyMoveCap: 0 } };

const demo = await startImapDemo({ profile: 'bridge' });
const recorded = [];
const proxy = await startImapProxy({
  target: { host: demo.server.host, port: demo.server.plainPort },
  delayMs: DELAY_MS,
  faults: [{ kind: 'drop', repeat: true, when: { test: (text) => (recorded.push(text), false) } }],
});
await repointImap(demo, proxy.port, 'insecure-loopback');
writeFileSync(join(demo.configDir, 'policy.json'), JSON.stringify(POLICY));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: demo.configDir,
  ...demo.env,
  MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
  TZ: 'UTC',
  MAILWARDEN_CALL_BUDGET_MS: '600000',
};

/** Each tagged command line in the recorded chunks: its verb and a short note. */
function commands(chunks) {
  const out = [];
  for (const c of chunks)
    for (const line of c.split('\r\n')) {
      const m = /^[A-Za-z0-9.]+ (UID [A-Za-z]+|[A-Za-z]+)(?: (.*))?$/.exec(line);
      if (m) out.push(`${m[1].toUpperCase()} ${m[1] === 'LOGIN' ? '' : (m[2] ?? '').slice(0, 50)}`.trim());
    }
  return out;
}

async function measure(label, fn) {
  const from = recorded.length;
  const t = performance.now();
  const out = await fn();
  const wallMs = round(performance.now() - t);
  // Let a finished process's LOGOUT pass before the next count starts.
  await new Promise((r) => setTimeout(r, DELAY_MS + 200));
  const cmds = commands(recorded.slice(from)).filter((c) => c !== 'LOGOUT');
  return {
    call: label,
    commands: cmds.length,
    wallMs,
    wallPerCommandMs: round(wallMs / Math.max(1, cmds.length)),
    list: cmds,
    ...(out ? { answer: out } : {}),
  };
}

async function session() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env,
    stderr: 'ignore',
  });
  const client = new Client(
    { name: 'mailwarden-bench', version: '0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  const call = async (name, args = {}) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 900_000 });
    if (r.isError) throw new Error(`${name}: ${r.content.map((c) => c.text).join('')}`);
    return r.structuredContent ?? {};
  };
  return { client, call };
}

function cli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, encoding: 'utf8' }, (_e, stdout) => {
      try {
        resolve(JSON.parse(stdout));
      } catch {
        resolve({ stdout: stdout.slice(0, 200) });
      }
    });
  });
}

const rows = [];
const loop = [];
try {
  // The loop from cold: the timer's gate in a process of its own, then one session.
  loop.push(await measure('check-new-mail (fresh process)', () => cli(['check-new-mail'])));
  let s = await session();
  let listed;
  loop.push(
    await measure('list_new_mail (first call of the session)', async () => {
      listed = await s.call('list_new_mail', { limit: 20 });
      return { listed: listed.messages.length, total: listed.total };
    }),
  );
  const single = [...new Set(listed.messages.map((m) => m.threadId ?? m.messageId.replace(/^m/, 't')))];
  loop.push(
    await measure('archive 10', async () => {
      const r = await s.call('archive', { threadIds: single.slice(0, 10) });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  loop.push(
    await measure('move_to_spam 2', async () => {
      const r = await s.call('move_to_spam', { threadIds: single.slice(10, 12) });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  loop.push(await measure('mark_handled', () => s.call('mark_handled', listed.markHandled)));
  rows.push(
    await measure('list_new_mail (warm)', async () => {
      const r = await s.call('list_new_mail', { limit: 20 });
      listed = r;
      return { listed: r.messages.length };
    }),
  );
  const threads = [];
  let pageToken;
  do {
    const page = await s.call('search', {
      query: 'in:inbox',
      maxResults: 50,
      ...(pageToken ? { pageToken } : {}),
    });
    threads.push(...page.threads);
    pageToken = page.nextPageToken;
  } while (pageToken && threads.length < 150);
  const inbox = { threads };
  const ones = threads.filter((t) => t.messageCount === 1).map((t) => t.threadId);
  rows.push(
    await measure('archive 1 (warm)', async () => {
      const r = await s.call('archive', { threadId: ones[0] });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  rows.push(
    await measure('archive 50 (warm)', async () => {
      const r = await s.call('archive', { threadIds: ones.slice(1, 51) });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  rows.push(
    await measure('restore 2 of those (warm)', async () => {
      const r = await s.call('restore', { threadIds: ones.slice(0, 2) });
      return { changed: r.changed.length };
    }),
  );
  const long = [...inbox.threads].sort((a, b) => b.messageCount - a.messageCount)[0];
  rows.push(
    await measure(`get_thread of ${long.messageCount} (warm)`, async () => {
      const r = await s.call('get_thread', { threadId: long.threadId });
      return { messageCount: r.messageCount, reusedChecks: r.reusedChecks?.folders?.length ?? 0 };
    }),
  );
  rows.push(
    await measure('get_message (warm)', async () => {
      const r = await s.call('get_message', { messageId: long.last.messageId });
      return { labels: r.labels?.length ?? 0 };
    }),
  );
  await s.client.close();
  s = await session();
  rows.push(
    await measure('first call after start: search in:inbox is:unread, 10 (login included)', async () => {
      const r = await s.call('search', { query: 'in:inbox is:unread', maxResults: 10 });
      return { threads: r.threads.length };
    }),
  );
  await s.client.close();
} finally {
  await proxy.stop();
  await demo.close();
}

const total = loop.reduce((n, r) => n + r.commands, 0);
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      profile: 'bridge',
      delayPerCommandMs: DELAY_MS,
      loop: { calls: loop, totalCommands: total, slowestCallMs: Math.max(...loop.map((r) => r.wallMs)) },
      calls: rows,
    },
    null,
    2,
  ),
);
