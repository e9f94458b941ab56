import { execFile } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { appendMessage } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { MAIN } from '../helpers/stack.js';

/*
 * The action log and its readers (issue 22, item 5), on every provider: a log deleted while the
 * server runs stops every write with an error that says so and what to do; a restarted server
 * starts a new log that says the old one went missing, and keeps counting the day's moves, so no
 * fresh cap; a sender rule's refusal is logged once per message and process.
 */

async function inboxSingles(b: Backend, n: number): Promise<string[]> {
  const r = await b.call('search', { query: 'in:inbox', maxResults: 50 });
  return (r.structured['threads'] as Array<{ threadId: string; messageCount: number }>)
    .filter((t) => t.messageCount === 1)
    .map((t) => t.threadId)
    .slice(0, n);
}

function cli(b: Backend, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = b.gmail
    ? { MAILWARDEN_CONFIG_DIR: b.configDir, HOME: b.configDir, MAILWARDEN_SANDBOX_URL: b.gmail.sandbox.url }
    : { HOME: b.configDir, ...(b.imap as NonNullable<Backend['imap']>).env };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', TZ: 'UTC', ...env }, encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) => resolve({ status: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

const records = (b: Backend) =>
  readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe.each(['gmail', 'full', 'bridge'] as BackendKind[])('the action log on %s', (kind) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, {
      policy: {
        default: {
          dailyMoveCap: 3,
          protectCorrespondents: false,
          sweepRulesEveryMinutes: 0,
        },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('deleted while the server runs: every write stops and says so; a restart keeps the day’s count', async () => {
    const ids = await inboxSingles(b, 5);
    const first = await b.call('archive', { threadIds: ids.slice(0, 2) });
    expect(first.isError, first.text).toBe(false);
    expect(first.structured['remainingToday']).toBe(1);
    const log = join(b.configDir, 'action-log.jsonl');
    unlinkSync(log);
    for (const [name, args] of [
      ['archive', { threadId: ids[2] }],
      ['mark_read', { threadId: ids[3] }],
    ] as const) {
      const r = await b.call(name, args);
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toMatch(/action log .* is gone: it was deleted while this server ran/);
      expect(r.text).toMatch(/restart the server/);
    }
    // Nothing was written behind the missing log: no new, empty log either.
    expect(existsSync(log)).toBe(false);
    const t = await b.call('get_thread', { threadId: ids[2], bodies: 'none' });
    expect((t.structured['messages'] as Array<{ labels: string[] }>)[0]?.labels).toContain('INBOX');

    const restarted = await b.another();
    try {
      const r = await restarted.call('archive', { threadIds: ids.slice(2, 4) });
      expect(r.isError, r.text).toBe(false);
      const rep = r.structured as { changed: Array<{ threadId: string }>; refused?: Array<{ rule: string }> };
      expect(rep.changed.map((c) => c.threadId)).toEqual([ids[2]]);
      expect(rep.refused?.map((x) => x.rule)).toEqual(['daily-cap']);
    } finally {
      await restarted.close();
    }
    expect(records(b)[0]).toMatchObject({ op: 'actionLogLost' });
  });

  it('a rule’s refusal is logged once per message and process', async () => {
    // A correspondent: someone the owner wrote to, whose mail a rule covers.
    const friend = `friend@corr-${kind}.example`;
    const mail = (from: string, to: string, id: string) =>
      [
        `From: ${from}`,
        `To: ${to}`,
        'Subject: From a correspondent the rules cover',
        `Message-ID: <${id}>`,
        'Date: Mon, 30 Nov 2026 08:00:00 +0000',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Hi.',
        '',
      ].join('\r\n');
    const sent = mail(DEMO_ADDRESS, friend, `to-friend-${kind}@mailwarden.example`);
    const inbound = mail(friend, DEMO_ADDRESS, `once-${kind}@corr.example`);
    if (b.gmail) {
      b.gmail.sandbox.deliver(DEMO_ADDRESS, sent, ['SENT']);
      b.gmail.sandbox.deliver(DEMO_ADDRESS, inbound, ['INBOX', 'UNREAD']);
    } else {
      const server = (b.imap as NonNullable<Backend['imap']>).server;
      await appendMessage(server, 'Sent', sent, { flags: ['\\Seen'] });
      await appendMessage(server, 'INBOX', inbound);
    }
    writeFileSync(
      join(b.configDir, 'policy.json'),
      JSON.stringify({
        default: {
          dailyMoveCap: 0,
          sweepRulesEveryMinutes: 0,
          senderRules: { archive: [`corr-${kind}.example`] },
        },
      }),
    );
    const refusedLines = () =>
      records(b).filter(
        (r) =>
          r['kind'] === 'move' &&
          r['actor'] === 'rule' &&
          r['outcome'] === 'refused' &&
          String(r['messageId']).includes(`once-${kind}@corr.example`),
      ).length;
    const once = await cli(b, ['sweep-rules']);
    expect(once.stdout).toMatch(/protected-correspondent/);
    expect(refusedLines()).toBe(1);
    const twice = await cli(b, ['sweep-rules']);
    expect(twice.stdout).toMatch(/protected-correspondent/);
    // A second process logs it once more (once per process), never more.
    expect(refusedLines()).toBe(2);
  });
});
