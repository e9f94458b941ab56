// node bench/imap-loop.mjs (after npm run build): the agent's loop on the Bridge-like Dovecot
// profile, as the person this server is built for runs it — a timer that wakes `mailwarden
// check-new-mail`, then one server session: list_new_mail, archive, move_to_spam, mark_handled —
// and the single calls around it (first call after start, get_message, get_thread, restore).
//
// One throwaway Dovecot (the bridge profile) holds the demo corpus, reached through the profile's
// own front end (src/sandbox/imap/bridge-front.ts): STARTTLS, gluon's capability list and
// answers, and BENCH_IMAP_DELAY_MS (default 1000, Bridge's measured speed) held per command. The
// front end records every command it serves, so counts are exact; commands run one at a time per
// connection, so wall time is about commands × delay, plus the process start for the CLI rows.
// BENCH_BRIDGE=no-all-mail or no-idle runs the profile's variants (All Mail hidden, IDLE off).
// BENCH_GROW (default 20,000): how many archived messages the last row adds before its first call.
//
// The account is set up as a person sets it up, with `mailwarden accounts add --imap` (its login,
// and the agent label's folder it creates on Bridge, counted in `setup`, not in the loop).
// The loop runs twice. The first run is an account's first: no new-mail mark, nothing learnt yet,
// 217 messages waiting. Then the agent catches up (not counted), 12 new messages arrive, and the
// loop runs again from cold (fresh processes): the steady state of an agent on a timer.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW } from '../dist/sandbox/corpus/index.js';
import { startImapDemo } from '../dist/sandbox/imap-account.js';
import { appendMessage } from '../dist/sandbox/imap/index.js';
import { MAIN, machine, round } from './lib.mjs';

const DELAY_MS = Number(process.env.BENCH_IMAP_DELAY_MS ?? 1000);
const VARIANT = process.env.BENCH_BRIDGE ?? 'default';
const POLICY = { default: { dailyMoveCap: 0 } };

const demo = await startImapDemo({
  profile: 'bridge',
  delayMs: DELAY_MS,
  ...(VARIANT === 'no-all-mail' ? { bridge: { allMail: false } } : {}),
  ...(VARIANT === 'no-idle' ? { bridge: { idle: false } } : {}),
});
const front = demo.proxy;
writeFileSync(join(demo.configDir, 'policy.json'), JSON.stringify(POLICY));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: demo.configDir,
  ...demo.env,
  MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
  TZ: 'UTC',
  MAILWARDEN_CALL_BUDGET_MS: '600000',
};

/** Each recorded command: its verb and a short note (LOGIN's arguments left out). */
function commands(recorded) {
  return recorded.map(({ text }) => {
    const m = /^[A-Za-z0-9.]+ (UID [A-Za-z]+|[A-Za-z]+)(?: (.*))?$/s.exec(text);
    if (!m) return text.slice(0, 50);
    const verb = m[1].toUpperCase();
    return `${verb} ${verb === 'LOGIN' ? '' : (m[2] ?? '').slice(0, 50)}`.trim();
  });
}

async function measure(label, fn) {
  const from = front.commands().length;
  const bytesFrom = front.bytesToClients();
  const t = performance.now();
  const out = await fn();
  const wallMs = round(performance.now() - t);
  // Let a finished process's LOGOUT pass before the next count starts.
  await new Promise((r) => setTimeout(r, DELAY_MS + 200));
  const cmds = commands(front.commands().slice(from)).filter((c) => c !== 'LOGOUT');
  return {
    call: label,
    commands: cmds.length,
    downloadedBytes: front.bytesToClients() - bytesFrom,
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

/** `mailwarden accounts add` for the demo's account, the password on stdin: the setup a person runs. */
function addAccount() {
  const { host, port, user } = demo.settings;
  const args = ['accounts', 'add', demo.account, '--imap', '--host', host, '--port', String(port)];
  const child = spawn(process.execPath, [MAIN, ...args, '--starttls', '--user', user, '--password-stdin'], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end(`${demo.server.password}\n`);
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve({ output: out.trim().split('\n') }) : reject(new Error(`accounts add: ${err}`)),
    ),
  );
}

/** The loop from cold: the timer's gate in a process of its own, then one server session. */
async function runLoop() {
  const calls = [];
  calls.push(await measure('check-new-mail (fresh process)', () => cli(['check-new-mail'])));
  const s = await session();
  let listed;
  calls.push(
    await measure('list_new_mail (first call of the session)', async () => {
      listed = await s.call('list_new_mail', { limit: 20 });
      return { listed: listed.messages.length, total: listed.total };
    }),
  );
  const single = [...new Set(listed.messages.map((m) => m.threadId ?? m.messageId.replace(/^m/, 't')))];
  calls.push(
    await measure('archive 10', async () => {
      const r = await s.call('archive', { threadIds: single.slice(0, 10) });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  calls.push(
    await measure('move_to_spam 2', async () => {
      const r = await s.call('move_to_spam', { threadIds: single.slice(10, 12) });
      return { changed: r.changed.length, refused: r.refused.length };
    }),
  );
  calls.push(await measure('mark_handled', () => s.call('mark_handled', listed.markHandled)));
  const total = calls.reduce((n, r) => n + r.commands, 0);
  return { s, loop: { calls, totalCommands: total, slowestCallMs: Math.max(...calls.map((r) => r.wallMs)) } };
}

/** New mail from senders nobody wrote to, as a timer's next wake finds it. */
async function deliver(n) {
  const at = new Date(DEFAULT_NOW);
  for (let i = 1; i <= n; i++) {
    const raw =
      `From: Bulletin ${i} <news@bulletin${i}.example>\r\nTo: demo@example.com\r\n` +
      `Subject: Weekly bulletin ${i}\r\nMessage-ID: <bench-loop-${i}@bulletin${i}.example>\r\n` +
      `Date: ${at.toUTCString()}\r\nContent-Type: text/plain\r\n\r\nThis week's bulletin, number ${i}.\r\n`;
    await appendMessage(demo.server, 'INBOX', raw, { internalDate: at });
  }
}

/**
 * `n` small archived messages written straight into Archive's maildir (LAYOUT=fs), the way a
 * long-lived mailbox holds years of mail: Dovecot gives them UIDs on its next look.
 */
function growArchive(n) {
  const dir = join(demo.server.mailDir, 'Archive', 'cur');
  mkdirSync(dir, { recursive: true });
  const at = DEFAULT_NOW - 400 * 86_400_000;
  for (let i = 0; i < n; i++) {
    const when = new Date(at + i * 60_000);
    const raw =
      `From: Sender ${i % 500} <s${i % 500}@archive${i % 97}.example>\r\nTo: demo@example.com\r\n` +
      `Subject: Archived note ${i}\r\nMessage-ID: <bench-grow-${i}@archive.example>\r\n` +
      `Date: ${when.toUTCString()}\r\nContent-Type: text/plain\r\n\r\n${'An old note, long since read. '.repeat(20)}\r\n`;
    writeFileSync(join(dir, `${Math.floor(when.getTime() / 1000)}.M${i}P1.bench:2,S`), raw);
  }
  return n;
}

const rows = [];
let setup;
let firstRun;
let steady;
try {
  setup = await measure('accounts add --imap (setup, once per account)', addAccount);
  const first = await runLoop();
  firstRun = first.loop;
  let s = first.s;
  rows.push(
    await measure('list_new_mail (warm)', async () => {
      const r = await s.call('list_new_mail', { limit: 20 });
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
      return {
        messageCount: r.messageCount,
        reusedChecks: r.reusedChecks?.places?.length ?? 0,
        uncheckedPlaces: r.uncheckedPlaces?.length ?? 0,
      };
    }),
  );
  // The same read a minute later, as an agent's calls come: the folder checks of the first are
  // within the recheck window (MAILWARDEN_IMAP_RECHECK_MS, default 300 s) and are reused, said so.
  await new Promise((r) => setTimeout(r, Number(process.env.BENCH_IMAP_APART_MS ?? 60_000)));
  rows.push(
    await measure(`get_thread of ${long.messageCount}, a minute later (warm)`, async () => {
      const r = await s.call('get_thread', { threadId: long.threadId });
      return {
        messageCount: r.messageCount,
        reusedChecks: r.reusedChecks?.places?.length ?? 0,
        uncheckedPlaces: r.uncheckedPlaces?.length ?? 0,
      };
    }),
  );
  rows.push(
    await measure('get_message (warm)', async () => {
      const r = await s.call('get_message', { messageId: long.last.messageId });
      return {
        labels: r.message?.labels ?? r.labels,
        reusedChecks: r.reusedChecks?.places?.length ?? 0,
        uncheckedPlaces: r.uncheckedPlaces?.length ?? 0,
      };
    }),
  );
  // The agent catches up (not counted): every message so far is handled, so the next wake
  // finds exactly the new mail, as a timer's loop does once the backlog is gone.
  const gate = await cli(['check-new-mail']);
  const page = await s.call('list_new_mail', { limit: 1 });
  await s.call('mark_handled', { uid: gate.newest.uid });
  await s.client.close();
  await deliver(12);
  const again = await runLoop();
  steady = again.loop;
  await again.s.client.close();
  const firstCall = async (label) => {
    s = await session();
    rows.push(
      await measure(label, async () => {
        const r = await s.call('search', { query: 'in:inbox is:unread', maxResults: 10 });
        return { threads: r.threads.length, uncheckedPlaces: r.uncheckedPlaces?.length ?? 0 };
      }),
    );
    await s.client.close();
  };
  await firstCall('first call after start: search in:inbox is:unread, 10 (login included)');
  // The same first call once the mailbox has grown by 20,000 archived messages: what it
  // downloads must not grow with them.
  const grown = growArchive(Number(process.env.BENCH_GROW ?? 20_000));
  await firstCall(`first call after start, ${grown} more messages in Archive`);
} finally {
  await demo.close();
}

console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      profile: 'bridge',
      variant: VARIANT,
      delayPerCommandMs: DELAY_MS,
      setup,
      loop: { firstRun, steady },
      calls: rows,
    },
    null,
    2,
  ),
);
