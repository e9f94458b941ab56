// node bench/new-mail.mjs (after npm run build): the sweep loop's reads on the Gmail demo sandbox
// (the built server with --demo, over stdio, real MCP client) and on the Bridge-like Dovecot at
// BENCH_IMAP_DELAY_MS (200) per client chunk: check_new_mail with nothing new and with 10 new
// (its usage.requests: Gmail API requests, IMAP commands), and the characters of list_new_mail's
// text copy at its default of 75 lines (clients cut results at about 20,000).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW } from '../dist/sandbox/corpus/index.js';
import { startImapDemo } from '../dist/sandbox/imap-account.js';
import { appendMessage } from '../dist/sandbox/imap/index.js';
import { DEMO_ACCOUNT_ADDRESS, startDemoSandbox } from '../dist/cli/runtime.js';
import { MAIN, benchDir, machine, round } from './lib.mjs';

const DELAY_MS = Number(process.env.BENCH_IMAP_DELAY_MS ?? 200);
const CLOCK_ENV = { MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC' };

async function connect(env, args) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, ...args],
    env,
    stderr: 'ignore',
  });
  const client = new Client(
    { name: 'mailwarden-bench', version: '0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  const call = async (name, a) => {
    const t = performance.now();
    const r = await client.callTool({ name, arguments: a }, { timeout: 600_000 });
    const wallMs = round(performance.now() - t);
    if (r.isError) throw new Error(`${name}: ${r.content.map((c) => c.text).join('')}`);
    return { out: r.structuredContent ?? {}, text: r.content.map((c) => c.text ?? '').join(''), wallMs };
  };
  return { client, call };
}

/** list_new_mail at 75 without a mark, then the gate after deciding everything, then 10 new. */
async function run(name, s, deliverTen) {
  const listed = await s.call('list_new_mail', {});
  const size = { lines: listed.out.messages.length, total: listed.out.total, textChars: listed.text.length };
  const gate = await s.call('check_new_mail', {});
  await s.call(
    'mark_handled',
    gate.out.newest.uid ? { uid: gate.out.newest.uid } : { messageId: gate.out.newest.messageId },
  );
  const nothing = await s.call('check_new_mail', {});
  await deliverTen();
  const ten = await s.call('check_new_mail', {});
  return {
    backend: name,
    listNewMail75: size,
    checkNothingNew: {
      found: nothing.out.found,
      requests: nothing.out.usage.requests,
      wallMs: nothing.wallMs,
    },
    checkTenNew: { found: ten.out.found, requests: ten.out.usage.requests, wallMs: ten.wallMs },
  };
}

const raw = (i) =>
  `From: new${i}@example.net\r\nTo: demo@example.com\r\nSubject: New ${i}\r\nMessage-ID: <bench-nm-${i}@example.net>\r\n\r\nhi\r\n`;

const results = [];

// Gmail: the demo server's own sandbox, in the server process: nothing outside it can deliver
// new mail to it, so the 10-new case is measured on IMAP only (the gate with 10 new: the tests).
{
  const dir = benchDir('mailwarden-bench-nm-');
  const env = { PATH: process.env.PATH ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir, ...CLOCK_ENV };
  const s = await connect(env, ['--demo']);
  try {
    const listed = await s.call('list_new_mail', {});
    const gate = await s.call('check_new_mail', {});
    await s.call('mark_handled', { messageId: gate.out.newest.messageId });
    const nothing = await s.call('check_new_mail', {});
    results.push({
      backend: 'gmail sandbox (demo)',
      listNewMail75: {
        lines: listed.out.messages.length,
        total: listed.out.total,
        textChars: listed.text.length,
      },
      checkFirstRun: { found: gate.out.found, requests: gate.out.usage.requests, wallMs: gate.wallMs },
      checkNothingNew: {
        found: nothing.out.found,
        requests: nothing.out.usage.requests,
        wallMs: nothing.wallMs,
      },
    });
  } finally {
    await s.client.close();
  }
}

// Gmail, as cron runs it: `mailwarden check-new-mail` in a process of its own against a sandbox in
// this process (so mail can be delivered between runs and every request counted), with an
// account set up the way a reference-server user would (`import-reference` of plaintext files).
{
  const sb = await startDemoSandbox();
  const dir = benchDir('mailwarden-bench-gate-');
  const ref = join(dir, 'reference');
  mkdirSync(ref);
  writeFileSync(
    join(ref, 'credentials.json'),
    JSON.stringify({
      installed: { client_id: sb.oauthClient.clientId, client_secret: sb.oauthClient.clientSecret },
    }),
  );
  writeFileSync(
    join(ref, 'token.json'),
    JSON.stringify({
      refresh_token: sb.refreshTokenFor(DEMO_ACCOUNT_ADDRESS),
      scope: 'https://www.googleapis.com/auth/gmail.modify',
    }),
  );
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: join(dir, 'cfg'),
    MAILWARDEN_TOKEN_PASSPHRASE: 'bench-passphrase',
    MAILWARDEN_SANDBOX_URL: sb.url,
    ...CLOCK_ENV,
  };
  const cli = (args) =>
    new Promise((resolve) => {
      const t = performance.now();
      const child = execFile(
        process.execPath,
        [MAIN, ...args],
        { env, encoding: 'utf8' },
        (_e, stdout, stderr) =>
          resolve({ code: child.exitCode, stdout, stderr, wallMs: round(performance.now() - t) }),
      );
    });
  try {
    const imported = await cli(['import-reference', ref]);
    if (imported.code !== 0) throw new Error(`import-reference: ${imported.stdout}${imported.stderr}`);
    // Decide the whole inbox once (the user's first run).
    const s = await connect(env, []);
    const gate = await s.call('check_new_mail', {});
    await s.call('mark_handled', { messageId: gate.out.newest.messageId });
    await s.client.close();
    const measure = async () => {
      sb.resetStats();
      const r = await cli(['check-new-mail']);
      const out = JSON.parse(r.stdout);
      return {
        exit: r.code,
        found: out.found,
        requests: sb.stats().requests,
        byMethod: sb.stats().byMethod,
        wallMs: r.wallMs,
      };
    };
    const nothing = await measure();
    for (let i = 0; i < 10; i++) sb.deliver(DEMO_ACCOUNT_ADDRESS, raw(i), ['INBOX', 'UNREAD']);
    const ten = await measure();
    results.push({
      backend: 'gmail sandbox, mailwarden check-new-mail (own process, token refresh included)',
      nothing,
      ten,
    });
  } finally {
    await sb.close();
  }
}

{
  const demo = await startImapDemo({ profile: 'bridge', delayMs: DELAY_MS });
  const env = { PATH: process.env.PATH ?? '', HOME: demo.configDir, ...demo.env, ...CLOCK_ENV };
  const s = await connect(env, []);
  try {
    results.push(
      await run(`imap bridge-like, ${DELAY_MS} ms per command`, s, async () => {
        for (let i = 0; i < 10; i++) await appendMessage(demo.server, 'INBOX', raw(i));
      }),
    );
  } finally {
    await s.client.close();
    await demo.close();
  }
}

console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: machine(),
      note: 'requests: the tool result usage.requests (Gmail API requests; IMAP commands on the warm pooled connection, no login)',
      results,
    },
    null,
    2,
  ),
);
