// node bench/imap-writes.mjs (after npm run build): writes and the sweep gate on the Bridge-like
// Dovecot profile, through the built server and the real MCP client. Two throwaway servers hold
// the same demo corpus: one behind the delaying proxy (BENCH_IMAP_DELAY_MS, 200 ms per client
// chunk, over STARTTLS) for wall time, one over plain loopback IMAP behind a recording proxy for
// the exact command count (each tagged line the client sent is one command).
//
//   archive 50:      one archive call of 50 single-message inbox threads, relaxed policy
//   sent refresh:    the write policy learning the Sent folder (first guarded archive) and the
//                    second guarded archive inside the refresh interval
//   check-new-mail:  the cron gate (a process of its own: login included), nothing new / 10 new
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW } from '../dist/sandbox/corpus/index.js';
import { startImapDemo } from '../dist/sandbox/imap-account.js';
import { appendMessage, startImapProxy } from '../dist/sandbox/imap/index.js';
import { MAIN, machine, repointImap, round } from './lib.mjs';

const DELAY_MS = Number(process.env.BENCH_IMAP_DELAY_MS ?? 200);
const CLOCK_ENV = { MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC' };
const RELAXED = { default: { dailyMoveCap: 0, protectCorrespondents: false, inboxOnlyMoves: false } };
const GUARDED = { default: { dailyMoveCap: 0 } };
const LOGIN = new Set(['CAPABILITY', 'STARTTLS', 'ID', 'LOGIN', 'AUTHENTICATE', 'NAMESPACE', 'ENABLE']);

const env = (demo) => ({ PATH: process.env.PATH ?? '', HOME: demo.configDir, ...demo.env, ...CLOCK_ENV });
const setPolicy = (demo, p) => writeFileSync(join(demo.configDir, 'policy.json'), JSON.stringify(p));

/** Each tagged line sent: its verb and the folder selected when it ran. */
function commandsOf(chunks) {
  const out = [];
  let folder = '';
  for (const c of chunks)
    for (const line of c.split('\r\n')) {
      const m = /^[A-Za-z0-9.]+ (UID [A-Za-z]+|[A-Za-z]+)(?: (.*))?$/.exec(line);
      if (!m) continue;
      const verb = m[1].toUpperCase();
      if (verb === 'EXAMINE' || verb === 'SELECT') folder = (m[2] ?? '').replace(/^"([^"]*)".*$/, '$1');
      out.push({
        verb,
        folder,
        args: verb === 'LOGIN' || verb === 'AUTHENTICATE' ? '' : (m[2] ?? '').slice(0, 80),
      });
    }
  return out;
}

/**
 * Commands after login: imapflow's own (CAPABILITY, ID, AUTHENTICATE, and NAMESPACE, which on a
 * server without it — Bridge — becomes LIST "" "" plus LIST/LSUB) are not the call's.
 */
function afterLogin(cmds) {
  let i = 0;
  let loggedIn = false;
  while (i < cmds.length) {
    const v = cmds[i].verb;
    if (v === 'LOGIN' || v === 'AUTHENTICATE') loggedIn = true;
    if (LOGIN.has(v) || (loggedIn && (v === 'LIST' || v === 'LSUB'))) i++;
    else break;
  }
  return cmds.slice(i).filter((c) => c.verb !== 'LOGOUT');
}
const tally = (list) => list.reduce((t, v) => ((t[v] = (t[v] ?? 0) + 1), t), {});

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
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
    if (r.isError) throw new Error(`${name}: ${r.content.map((c) => c.text).join('')}`);
    return r.structuredContent ?? {};
  };
  return { client, call };
}

async function singleInboxThreads(call, n) {
  const out = [];
  let pageToken;
  do {
    const r = await call('search', {
      query: 'in:inbox',
      maxResults: 50,
      ...(pageToken ? { pageToken } : {}),
    });
    for (const t of r.threads) if (t.messageCount === 1) out.push(t.threadId);
    pageToken = r.nextPageToken;
  } while (pageToken && out.length < n);
  return out.slice(0, n);
}

function cli(demo, args) {
  return new Promise((resolve) => {
    const t = performance.now();
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { env: env(demo), encoding: 'utf8' },
      (_e, stdout) =>
        resolve({ code: child.exitCode, out: JSON.parse(stdout), wallMs: round(performance.now() - t) }),
    );
  });
}

/** One pass on one server: `measure(label, fn)` brackets each step. */
async function pass(demo, measure) {
  setPolicy(demo, RELAXED);
  let s = await connect(demo);
  const ids = await singleInboxThreads(s.call, 52);
  const fifty = ids.slice(0, 50);
  await measure('archive 50 single-message threads', () => s.call('archive', { threadIds: fifty }));
  await s.client.close();

  setPolicy(demo, GUARDED);
  s = await connect(demo);
  // Either outcome will do (a thread from a correspondent is refused): both judge with the Sent set.
  const judged = (id) => s.call('archive', { threadId: id }).catch(() => ({}));
  await measure('first guarded archive (learns Sent)', () => judged(ids[50]));
  await measure('second guarded archive (Sent set still fresh)', () => judged(ids[51]));
  // Decide the whole inbox, so the gate has nothing new.
  const gate = await s.call('check_new_mail', {});
  if (gate.newest?.uid) await s.call('mark_handled', { uid: gate.newest.uid });
  await s.client.close();

  await measure('check-new-mail, nothing new', () => cli(demo, ['check-new-mail']));
  for (let i = 0; i < 10; i++)
    await appendMessage(
      demo.server,
      'INBOX',
      `From: new${i}@example.net\r\nSubject: new ${i}\r\nMessage-ID: <bench-new-${i}@example.net>\r\n\r\nhi\r\n`,
    );
  await measure('check-new-mail, 10 new', () => cli(demo, ['check-new-mail']));
}

const measured = await startImapDemo({ profile: 'bridge', delayMs: DELAY_MS });
const traced = await startImapDemo({ profile: 'bridge' });
const recorded = [];
const tracer = await startImapProxy({
  target: { host: traced.server.host, port: traced.server.plainPort },
  faults: [{ kind: 'drop', repeat: true, when: { test: (text) => (recorded.push(text), false) } }],
});
await repointImap(traced, tracer.port, 'insecure-loopback');

const rows = new Map();
try {
  await pass(measured, async (label, fn) => {
    const before = measured.proxy.commandsSeen();
    const t = performance.now();
    const out = await fn();
    rows.set(label, {
      call: label,
      wallMs: round(performance.now() - t),
      proxyChunks: measured.proxy.commandsSeen() - before,
      ...(out?.out ? { answer: out.out } : {}),
    });
  });
  await pass(traced, async (label, fn) => {
    const from = recorded.length;
    await fn();
    // Let a finished CLI process's LOGOUT arrive before counting.
    await new Promise((r) => setTimeout(r, 300));
    const cmds = commandsOf(recorded.slice(from));
    const row = rows.get(label);
    row.commands = cmds.length;
    const after = afterLogin(cmds);
    row.afterLogin = after.length;
    row.inSent = after.filter((c) => c.folder === 'Sent').length;
    row.sentCommands = after.filter((c) => c.folder === 'Sent').map((c) => `${c.verb} ${c.args}`);
    row.byCommand = tally(after.map((c) => c.verb));
  });
} finally {
  await tracer.stop();
  await traced.close();
  await measured.close();
}

const list = [...rows.values()];
/** The Sent-set refresh in a call's trace: its SEARCH SINCE and To/Cc FETCH, and the EXAMINE before. */
const refreshOf = (row) => {
  const n = row.sentCommands.filter((c) => /^UID SEARCH SINCE|HEADER\.FIELDS \(to cc\)/i.test(c)).length;
  return n > 0 ? n + 1 : 0;
};
const get = (l) => list.find((r) => r.call === l);
const archive = get('archive 50 single-message threads');
const moveCmds =
  (archive.byCommand['UID MOVE'] ?? 0) +
  (archive.byCommand['UID COPY'] ?? 0) +
  (archive.byCommand['UID STORE'] ?? 0) +
  (archive.byCommand['UID EXPUNGE'] ?? 0);
const first = get('first guarded archive (learns Sent)');
const second = get('second guarded archive (Sent set still fresh)');
const nothing = get('check-new-mail, nothing new');
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      profile: 'bridge',
      delayPerClientChunkMs: DELAY_MS,
      calls: list,
      targets: [
        {
          call: archive.call,
          target: '<= 5 IMAP commands for the batch plus the verifying search',
          measured: {
            writeCommands: moveCmds,
            allAfterLogin: archive.afterLogin,
            byCommand: archive.byCommand,
            wallMs: archive.wallMs,
          },
        },
        {
          call: 'Sent refresh',
          target: '<= 3 commands, at most once per refresh interval',
          measured: {
            firstArchive: refreshOf(first),
            secondArchive: refreshOf(second),
            note: 'the refresh: EXAMINE Sent, UID SEARCH SINCE, one header FETCH of To/Cc; other commands in Sent are the thread reads',
          },
          met: refreshOf(first) <= 3 && refreshOf(second) === 0,
        },
        {
          call: nothing.call,
          target: '<= 4 commands after login with nothing new',
          measured: { afterLogin: nothing.afterLogin, byCommand: nothing.byCommand, wallMs: nothing.wallMs },
          met: nothing.afterLogin <= 4,
        },
      ],
    },
    null,
    2,
  ),
);
