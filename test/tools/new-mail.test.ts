import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { appendMessage, recreateMailbox } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * The sweep loop's new-mail reads through the real server, on the Gmail sandbox and both Dovecot
 * profiles: new mail is listed once, mark_handled hides it, the gate answers without a model,
 * and the mark refuses what would hide mail that has not arrived.
 */

interface Line {
  uid?: number;
  messageId: string;
  threadId: string;
  subject: string;
  from: string;
}
interface Listing {
  mark: Record<string, unknown> | null;
  total: number;
  messages: Line[];
  more: boolean;
  markHandled?: { uid?: number; messageId?: string };
  reset?: { reason: string; excludedDecided: number };
}

function raw(tag: string, subject: string): string {
  return [
    `From: Newcomer <newcomer@arrivals.example>`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${subject}`,
    `Message-ID: <${tag}@arrivals.example>`,
    'Date: Tue, 01 Dec 2026 08:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of ${subject}.`,
    '',
  ].join('\r\n');
}

async function deliver(b: Backend, tag: string, subject: string): Promise<void> {
  if (b.gmail) {
    b.gmail.sandbox.deliver(DEMO_ADDRESS, raw(tag, subject), ['INBOX', 'UNREAD']);
    return;
  }
  await appendMessage((b.imap as NonNullable<Backend['imap']>).server, 'INBOX', raw(tag, subject));
}

async function list(b: Backend, args: Record<string, unknown> = {}): Promise<Listing> {
  const r = await b.call('list_new_mail', args);
  expect(r.isError, r.text).toBe(false);
  return r.structured as unknown as Listing;
}

/** Decides the whole inbox as it stands (the user's first run). */
async function decideAll(b: Backend): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const l = await list(b, { limit: 200 });
    if (l.total === 0) return;
    const m = await b.call('mark_handled', l.markHandled ?? {});
    expect(m.isError, m.text).toBe(false);
  }
  throw new Error('the inbox never ran out of new mail');
}

const fenced = (s: string): string =>
  s.replace(/^\u27E6mail [0-9a-f]+\u27E7|\u27E6\/mail [0-9a-f]+\u27E7$/g, '');

describe.each(['gmail', 'full', 'bridge'] as BackendKind[])('new mail on %s', (kind) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, { delayMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('without a mark the whole inbox is new; once decided, nothing is', async () => {
    const first = await list(b, { limit: 5 });
    expect(first.mark).toBeNull();
    expect(first.total).toBeGreaterThan(5);
    expect(first.messages).toHaveLength(5);
    expect(first.more).toBe(true);
    // At the default (75) the whole result stays under what clients keep (about 20,000 characters):
    // when 75 lines would not fit, the oldest that do are listed, and markHandled names the last.
    b.gmail?.sandbox.resetStats();
    const full = await b.call('list_new_mail', {});
    if (b.gmail) {
      // Gmail: every inbox thread is read once, in batch requests of at most 50 calls.
      const s = b.gmail.sandbox.stats();
      const reads = s.byMethod['threads.get']?.apiCalls ?? 0;
      expect(reads).toBeGreaterThan(50);
      expect(s.byMethod['threads.get']?.requests ?? 0).toBe(0);
      // Two reads (the listing's, then the page's bodies), each in batches of at most 50 calls.
      expect(s.byMethod['batch']?.requests ?? 0).toBeLessThanOrEqual(Math.ceil(reads / 50) + 1);
      expect(s.requests).toBeLessThan(reads / 5);
    }
    expect(full.text.length).toBeLessThanOrEqual(20_000);
    const lines = (full.structured as unknown as Listing).messages;
    expect(lines.length).toBeGreaterThan(40);
    const mark = (full.structured as unknown as Listing).markHandled;
    const lastLine = lines.at(-1) as Line;
    expect(mark).toEqual(kind === 'gmail' ? { messageId: lastLine.messageId } : { uid: lastLine.uid });
    await decideAll(b);
    const after = await list(b);
    expect(after.total).toBe(0);
    expect(after.messages).toEqual([]);
    expect(after.mark).not.toBeNull();
    const gate = await b.call('check_new_mail', {});
    expect(gate.structured).toMatchObject({ wake: false, found: 0, newest: null, topic: null });
  });

  it('new mail is listed once, oldest first, and mark_handled hides it', async () => {
    await deliver(b, `nm-a-${kind}`, 'First arrival');
    await deliver(b, `nm-b-${kind}`, 'Second arrival');
    const l = await list(b);
    expect(l.total).toBe(2);
    expect(l.messages.map((m) => fenced(m.subject))).toEqual(['First arrival', 'Second arrival']);
    if (kind !== 'gmail') expect(l.messages.every((m) => typeof m.uid === 'number')).toBe(true);

    const gate = await b.call('check_new_mail', {});
    expect(gate.structured['wake']).toBe(true);
    expect(gate.structured['found']).toBe(2);
    const topic = gate.structured['topic'] as string;
    expect(topic).toMatch(kind === 'gmail' ? /^gmail:/ : /^imap:\d+:\d+$/);
    // The same mail does not wake a second run.
    const again = await b.call('check_new_mail', { sinceTopic: topic });
    expect(again.structured).toMatchObject({ wake: false, found: 2, topic });

    // Decide the first only: the second is still new.
    const first = l.messages[0] as Line;
    const m = await b.call(
      'mark_handled',
      kind === 'gmail' ? { messageId: first.messageId } : { uid: first.uid },
    );
    expect(m.isError, m.text).toBe(false);
    expect(m.structured['moved']).toBe('forward');
    const l2 = await list(b);
    expect(l2.messages.map((x) => fenced(x.subject))).toEqual(['Second arrival']);

    // Going back is refused unless asked for.
    const before = await b.call(
      'mark_handled',
      kind === 'gmail' ? { messageId: first.messageId } : { uid: first.uid },
    );
    expect(before.isError).toBe(false);
    expect(before.structured['moved']).toBe('unchanged');
    const second = l2.messages[0] as Line;
    await b.call('mark_handled', kind === 'gmail' ? { messageId: second.messageId } : { uid: second.uid });
    const back = await b.call(
      'mark_handled',
      kind === 'gmail' ? { messageId: first.messageId } : { uid: first.uid },
    );
    expect(back.isError).toBe(true);
    expect(back.text).toMatch(/invalid_input/);
    expect(back.text).toMatch(/backwards/);
    expect((await list(b)).total).toBe(0);
    const ok = await b.call('mark_handled', {
      ...(kind === 'gmail' ? { messageId: first.messageId } : { uid: first.uid }),
      allowBackwards: true,
    });
    expect(ok.structured['moved']).toBe('backward');
    expect((await list(b)).messages.map((x) => fenced(x.subject))).toEqual(['Second arrival']);
    await decideAll(b);
  });

  it('the mark file is 0600 JSON, and a hand-damaged one is a clear error naming it', async () => {
    const files = readdirSync(join(b.configDir, 'marks'));
    expect(files).toHaveLength(1);
    const found = join(b.configDir, 'marks', files[0] as string);
    expect(statSync(found).mode & 0o777).toBe(0o600);
    const good = readFileSync(found, 'utf8');
    expect(JSON.parse(good)).toMatchObject({ version: 1, provider: kind === 'gmail' ? 'gmail' : 'imap' });
    writeFileSync(found, good.slice(0, good.length / 2));
    const r = await b.call('list_new_mail', {});
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/internal_error/);
    expect(r.text).toContain(found);
    writeFileSync(found, good);
    expect((await list(b)).total).toBe(0);
  });

  if (kind !== 'gmail') {
    it('a UID at or above UIDNEXT is refused, naming UIDNEXT', async () => {
      const r = await b.call('mark_handled', { uid: 4_000_000 });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/invalid_input/);
      expect(r.text).toMatch(/UIDNEXT \(\d+\)/);
      expect((await list(b)).total).toBe(0);
    });

    it('a renumbered INBOX (new UIDVALIDITY) is listed again, less the mail already decided', async () => {
      const server = (b.imap as NonNullable<Backend['imap']>).server;
      await recreateMailbox(server, 'INBOX');
      // Mail that was decided comes back under new UIDs; one message is really new.
      await appendMessage(server, 'INBOX', raw(`nm-a-${kind}`, 'First arrival'));
      await appendMessage(server, 'INBOX', raw(`nm-c-${kind}`, 'After the reset'));
      const l = await list(b);
      expect(l.reset?.reason).toMatch(/UIDVALIDITY/);
      expect(l.reset?.excludedDecided).toBe(1);
      expect(l.total).toBe(1);
      expect(l.messages.map((x) => fenced(x.subject))).toEqual(['After the reset']);
      const gate = await b.call('check_new_mail', {});
      expect(gate.structured).toMatchObject({ wake: true, found: 1, reset: true });
      await b.call('mark_handled', l.markHandled ?? {});
      expect((await list(b)).total).toBe(0);
    });
  }

  it('list_new_mail moves nothing: a line a sender rule would move is marked, and the sweep moves it', async () => {
    writeFileSync(
      join(b.configDir, 'policy.json'),
      JSON.stringify({
        default: {
          dailyMoveCap: 0,
          protectCorrespondents: false,
          inboxOnlyMoves: false,
          senderRules: { archive: ['rules.example'] },
        },
      }),
    );
    try {
      const ruled = raw(`nm-r-${kind}`, 'Ruled away').replace(
        'newcomer@arrivals.example',
        'news@mail.rules.example',
      );
      if (b.gmail) b.gmail.sandbox.deliver(DEMO_ADDRESS, ruled, ['INBOX', 'UNREAD']);
      else await appendMessage((b.imap as NonNullable<Backend['imap']>).server, 'INBOX', ruled);
      await deliver(b, `nm-k-${kind}`, 'Kept for the agent');
      const inInbox = async () =>
        (await b.call('search', { query: `rfc822msgid:nm-r-${kind}@arrivals.example in:inbox` })).structured[
          'threads'
        ] as unknown[];
      const l = await list(b);
      expect(
        l.messages.map((x) => fenced(x.subject)),
        JSON.stringify(l),
      ).toEqual(['Ruled away', 'Kept for the agent']);
      const marked = l.messages.map((x) => (x as unknown as { senderRule?: unknown }).senderRule);
      expect(marked).toEqual([{ action: 'archive', rule: 'rules.example' }, undefined]);
      expect((l as unknown as { rules: { matched: number; note: string } }).rules).toMatchObject({
        matched: 1,
        note: expect.stringMatching(/sweep/) as unknown,
      });
      const gate = await b.call('check_new_mail', {});
      expect(gate.structured).toMatchObject({ found: 2 });
      // Listing and checking moved nothing: the sweep does.
      expect(await inInbox()).toHaveLength(1);
      const sweep = await run(envOf(b), [], 'sweep-rules');
      expect(sweep.status, sweep.stdout + sweep.stderr).toBe(0);
      expect(await inInbox()).toEqual([]);
      await decideAll(b);
    } finally {
      writeFileSync(
        join(b.configDir, 'policy.json'),
        JSON.stringify({ default: { dailyMoveCap: 0, protectCorrespondents: false, inboxOnlyMoves: false } }),
      );
    }
  });

  it('mailwarden check-new-mail: JSON out, exit 0 to wake, 1 for nothing, and the topic file stops a second wake', async () => {
    const env = { ...envOf(b) };
    const nothing = await run(env, []);
    expect(nothing.status, nothing.stdout + nothing.stderr).toBe(1);
    expect(JSON.parse(nothing.stdout)).toMatchObject({ wake: false, found: 0 });
    await deliver(b, `nm-d-${kind}`, 'For the gate');
    const topicFile = join(tempDir('mailwarden-topic-'), 'topic');
    const wake = await run(env, ['--topic-file', topicFile]);
    expect(wake.status, wake.stdout + wake.stderr).toBe(0);
    const answer = JSON.parse(wake.stdout) as { wake: boolean; found: number; topic: string };
    expect(answer).toMatchObject({ wake: true, found: 1 });
    expect(readFileSync(topicFile, 'utf8').trim()).toBe(answer.topic);
    const second = await run(env, ['--topic-file', topicFile]);
    expect(second.status).toBe(1);
    expect(JSON.parse(second.stdout)).toMatchObject({ wake: false, found: 1, topic: answer.topic });
  });
});

describe('mailwarden check-new-mail against a mailbox that is down', () => {
  it('Gmail: exit 3 with the error as JSON, never "nothing new"', async () => {
    const b = await startBackend('gmail');
    try {
      const r = await run({ ...envOf(b), MAILWARDEN_SANDBOX_URL: 'http://127.0.0.1:9' }, []);
      expect(r.status, r.stdout + r.stderr).toBe(3);
      const out = JSON.parse(r.stdout) as { wake: boolean; error: { code: string } };
      expect(out.wake).toBe(false);
      expect(['network_error', 'upstream_unavailable']).toContain(out.error.code);
    } finally {
      await b.close();
    }
  }, 120_000);

  it('IMAP: exit 3 once the server has stopped', async () => {
    const b = await startBackend('full');
    try {
      await (b.imap as NonNullable<Backend['imap']>).server.stop();
      const r = await run(envOf(b), []);
      expect(r.status, r.stdout + r.stderr).toBe(3);
      const out = JSON.parse(r.stdout) as { wake: boolean; error: { code: string; message: string } };
      expect(out.wake).toBe(false);
      expect(out.error.code).toMatch(/network_error|upstream_unavailable/);
    } finally {
      await b.close().catch(() => undefined);
    }
  }, 120_000);
});

describe("the README's gate line, as written", () => {
  it('wakes on the demo mailbox once, then not for the same mail', async () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    const line = /\n(mailwarden check-new-mail --demo [^\n]*)\n/.exec(readme)?.[1];
    expect(line).toBeDefined();
    const dir = tempDir('mailwarden-readme-');
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'mailwarden'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`, {
      mode: 0o755,
    });
    const topic = join(dir, 'topic');
    const cmd = (line as string).replace('/tmp/mailwarden-topic', topic);
    const sh = (): Promise<string> =>
      new Promise((resolve) =>
        execFile(
          '/bin/sh',
          ['-c', cmd],
          {
            env: {
              PATH: `${bin}:${process.env['PATH'] ?? ''}`,
              HOME: dir,
              MAILWARDEN_CONFIG_DIR: join(dir, 'cfg'),
            },
            encoding: 'utf8',
            timeout: 60_000,
          },
          (_e, stdout) => resolve(stdout),
        ),
      );
    const first = await sh();
    expect(first).toMatch(/"wake":true/);
    expect(first.trim().endsWith('exit 0')).toBe(true);
    const second = await sh();
    expect(second).toMatch(/"wake":false/);
    expect(second.trim().endsWith('exit 1')).toBe(true);
  }, 120_000);
});

function envOf(b: Backend): Record<string, string> {
  if (b.gmail)
    return {
      MAILWARDEN_CONFIG_DIR: b.configDir,
      HOME: b.configDir,
      MAILWARDEN_SANDBOX_URL: b.gmail.sandbox.url,
      TZ: 'UTC',
    };
  return { HOME: b.configDir, ...(b.imap as NonNullable<Backend['imap']>).env, TZ: 'UTC' };
}

/** Asynchronous: the Gmail sandbox and the Bridge proxy answer from this very process. */
async function run(
  env: Record<string, string>,
  args: string[],
  command = 'check-new-mail',
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, command, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }),
    );
  });
}
