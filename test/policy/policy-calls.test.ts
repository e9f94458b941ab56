import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { appendMessage } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { closeStateBackends, moveRecords, stateEnv, withStates } from '../helpers/state-backends.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * The write policy on every provider, through the real server, with its state in files and in
 * PostgreSQL (MAILWARDEN_STATE): the daily cap counted from the action log (across restarts and
 * processes), protected correspondents, mail without a sender, two writers racing, a writer
 * killed mid-write, and (files) a log the cap cannot read.
 */

const k = DEMO_FACTS.keys;

/** Every provider with each state backend. */
const CASES = withStates(['gmail', 'full', 'bridge'] as BackendKind[]);
afterAll(closeStateBackends);

interface Report {
  changed: Array<{ threadId: string }>;
  refused?: Array<{ threadId: string; rule: string; reason: string }>;
  remainingToday?: number;
}

/** Inbox threads with exactly one message, newest first (one move each under the cap). */
async function singleInboxThreads(b: Backend, n: number): Promise<string[]> {
  const out: string[] = [];
  let pageToken: string | undefined;
  do {
    const r = await b.call('search', {
      query: 'in:inbox',
      maxResults: 50,
      ...(pageToken ? { pageToken } : {}),
    });
    for (const t of r.structured['threads'] as Array<{
      threadId: string;
      messageCount: number;
      labels: string[];
    }>)
      if (t.messageCount === 1) out.push(t.threadId);
    pageToken = r.structured['nextPageToken'] as string | undefined;
  } while (pageToken && out.length < n);
  return out.slice(0, n);
}

async function deliver(b: Backend, id: string, headers: string[]): Promise<string> {
  const raw = [
    ...headers,
    `To: ${DEMO_ADDRESS}`,
    'Subject: A message for the policy',
    `Message-ID: <${id}@example.org>`,
    'Date: Mon, 30 Nov 2026 08:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello.',
    '',
  ].join('\r\n');
  if (b.gmail) return b.gmail.sandbox.deliver(DEMO_ADDRESS, raw, ['INBOX', 'UNREAD']).threadId;
  await appendMessage((b.imap as NonNullable<Backend['imap']>).server, 'INBOX', raw);
  return `t${Buffer.from(`${id}@example.org`).toString('base64url')}`;
}

describe.each(CASES)('the write policy on %s, state in %s', (kind, state) => {
  let b: Backend;
  beforeAll(async () => {
    // The cap alone: correspondents are judged in their own test below.
    b = await startBackend(kind, {
      policy: { default: { dailyMoveCap: 50, protectCorrespondents: false } },
      env: await stateEnv(state),
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('the 51st agent move of the day is refused, a restore still works, and a restart does not reset the count', async () => {
    const ids = await singleInboxThreads(b, 52);
    expect(ids.length).toBe(52);
    const first = await b.call('archive', { threadIds: ids.slice(0, 49) });
    expect(first.isError, first.text).toBe(false);
    expect((first.structured as unknown as Report).changed).toHaveLength(49);
    expect((first.structured as unknown as Report).remainingToday).toBe(1);
    // A second process on the same config dir (a restart, a cron job) sees the same day.
    const other = await b.another();
    try {
      const r = await other.call('archive', { threadIds: ids.slice(49, 51) });
      expect(r.isError, r.text).toBe(false);
      const rep = r.structured as unknown as Report;
      expect(rep.changed.map((c) => c.threadId)).toEqual([ids[49]]);
      expect(rep.refused).toEqual([expect.objectContaining({ threadId: ids[50], rule: 'daily-cap' })]);
      expect(rep.refused?.[0]?.reason).toMatch(/0 .*left today|dailyMoveCap/);
    } finally {
      await other.close();
    }
    const refused = await b.call('archive', { threadId: ids[51] });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/daily-cap/);
    const restore = await b.call('restore', { threadId: ids[0] });
    expect(restore.isError, restore.text).toBe(false);
    expect((restore.structured as unknown as Report).changed).toHaveLength(1);
    // What the log holds is what the mailbox shows: the refused thread is still in the inbox.
    const t = await b.call('get_thread', { threadId: ids[51], bodies: 'none' });
    expect((t.structured['messages'] as Array<{ labels: string[] }>)[0]?.labels).toContain('INBOX');
  });

  // The file log's own failure; a database that cannot be reached is test/mcp/replicas.test.ts's.
  if (state === 'files')
    it('a corrupt line in the action log stops moves with an error naming it; restores go on', async () => {
      const log = join(b.configDir, 'action-log.jsonl');
      const lines = readFileSync(log, 'utf8');
      appendFileSync(
        log,
        'this is not a record\n{"op":"noop","account":"x","time":"2026-11-30T08:00:00Z"}\n',
      );
      const ids = await singleInboxThreads(b, 1);
      const r = await b.call('archive', { threadId: ids[0] });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/forbidden_operation/);
      expect(r.text).toMatch(/line \d+/);
      writeFileSync(log, lines);
    });
});

describe.each(CASES)('protected senders on %s, state in %s (guarded defaults)', (kind, state) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, { policy: null, env: await stateEnv(state) });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('mail from someone the owner has written to stays in the inbox, and says why', async () => {
    const key = k.awaitingOwnerReply[0] as string;
    const r = await b.call('archive', { threadId: b.tid(key) });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/protected-correspondent/);
    const t = await b.call('get_thread', { threadId: b.tid(key), bodies: 'none' });
    const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
    expect(labels).toContain('INBOX');
  });

  it("mail without a sender address stays in the inbox; a stranger's newsletter can go", async () => {
    const nobody = await deliver(b, `policy-nosender-${kind}`, []);
    const r = await b.call('archive', { threadIds: [nobody, b.tid(k.oneClickNewsletters[0] as string)] });
    expect(r.isError, r.text).toBe(false);
    const rep = r.structured as unknown as Report;
    expect(rep.refused).toEqual([expect.objectContaining({ threadId: nobody, rule: 'no-sender' })]);
    expect(rep.changed.map((c) => c.threadId)).toEqual([b.tid(k.oneClickNewsletters[0] as string)]);
  });

  it('the action log records each item with its rule and outcome', async () => {
    const records = await moveRecords(b);
    expect(
      records.some((r) => r['outcome'] === 'refused' && r['refusedBy'] === 'protected-correspondent'),
    ).toBe(true);
    expect(records.some((r) => r['outcome'] === 'refused' && r['refusedBy'] === 'no-sender')).toBe(true);
    expect(records.some((r) => r['outcome'] === 'moved' && r['action'] === 'archive')).toBe(true);
  });
});

describe('a bad policy.json stops the server, naming the field', () => {
  for (const [policy, field] of [
    [{ default: { dailyMoveCap: -3 } }, 'default.dailyMoveCap'],
    [{ default: { dailyCap: 5 } }, 'default.dailyCap'],
    [{ accounts: { work: { protectCorrespondents: 'yes' } } }, 'accounts.work.protectCorrespondents'],
  ] as const) {
    it(`${field}`, () => {
      const dir = tempDir('mailwarden-policy-');
      writeFileSync(join(dir, 'policy.json'), JSON.stringify(policy));
      const r = spawnSync(process.execPath, [MAIN, '--demo'], {
        env: { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir },
        encoding: 'utf8',
        timeout: 20_000,
        input: '',
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(field);
    });
  }
});

describe.each(CASES)('two writers racing on %s, state in %s', (kind, state) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, {
      policy: { default: { dailyMoveCap: 50, protectCorrespondents: false } },
      env: await stateEnv(state),
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('two server processes archiving 30 threads each under a cap of 50 move exactly 50', async () => {
    const ids = await singleInboxThreads(b, 60);
    expect(ids.length).toBe(60);
    const other = await b.another();
    try {
      const [x, y] = await Promise.all([
        b.call('archive', { threadIds: ids.slice(0, 30) }),
        other.call('archive', { threadIds: ids.slice(30) }),
      ]);
      const moved = [x, y].flatMap((r) => (r.structured as unknown as Report).changed ?? []);
      const refused = [x, y].flatMap((r) => (r.structured as unknown as Report).refused ?? []);
      expect(moved).toHaveLength(50);
      expect(refused).toHaveLength(10);
      expect(refused.every((r) => r.rule === 'daily-cap')).toBe(true);
      // And the mailbox agrees: exactly the reported 50 left the inbox.
      const still = new Set<string>();
      let pageToken: string | undefined;
      do {
        const r = await b.call('search', {
          query: 'in:inbox',
          maxResults: 50,
          ...(pageToken ? { pageToken } : {}),
        });
        for (const t of r.structured['threads'] as Array<{ threadId: string }>) still.add(t.threadId);
        pageToken = r.structured['nextPageToken'] as string | undefined;
      } while (pageToken);
      expect(ids.filter((id) => !still.has(id)).sort()).toEqual(moved.map((m) => m.threadId).sort());
    } finally {
      await other.close();
    }
  }, 120_000);
});

describe.each(CASES)('a server killed mid-write on %s, state in %s', (kind, state) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, {
      policy: { default: { dailyMoveCap: 50, protectCorrespondents: false } },
      env: await stateEnv(state),
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('SIGKILL between moves: the next process counts at least what left the inbox', async () => {
    const ids = await singleInboxThreads(b, 40);
    const victim = await b.another();
    const pending = victim.call('archive', { threadIds: ids }).catch(() => undefined);
    // Let the call get under way, then kill the process without a chance to finish.
    await new Promise((r) => setTimeout(r, 150));
    process.kill(victim.pid() as number, 'SIGKILL');
    await pending;
    await victim.close();
    const gone = [];
    for (const id of ids) {
      const t = await b.call('get_thread', { threadId: id, bodies: 'none' });
      const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
      if (!labels.includes('INBOX')) gone.push(id);
    }
    // The next archive reports what is left today: the cap counted every move that happened
    // (a pending line is written before each write), so no fresh 50 appear.
    const [probe] = await singleInboxThreads(b, 1);
    const r = await b.call('archive', { threadId: probe });
    const left = (r.structured as unknown as Report).remainingToday;
    expect(left).toBeDefined();
    expect(50 - ((left ?? 50) + 1)).toBeGreaterThanOrEqual(gone.length);
  }, 120_000);
});

describe('create_filter under the guarded defaults (Gmail sandbox)', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('gmail', { policy: null, env: { MAILWARDEN_TOOLS: 'read,manage,filters' } });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('applyToExisting that would move mail out of the inbox is refused, and nothing is written', async () => {
    const before = await b.call('list_filters');
    const r = await b.call('create_filter', {
      criteria: { from: 'news.morningledger.example' },
      removeLabels: ['INBOX'],
      applyToExisting: true,
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/forbidden_operation/);
    expect(r.text).toMatch(/bulk_modify/);
    const after = await b.call('list_filters');
    expect(after.structured['filters']).toEqual(before.structured['filters']);
    const inbox = await b.call('search', { query: 'in:inbox from:news.morningledger.example' });
    expect((inbox.structured['threads'] as unknown[]).length).toBeGreaterThan(0);
  });
});
