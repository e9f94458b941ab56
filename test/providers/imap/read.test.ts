import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../../src/sandbox/corpus/index.js';
import { appendMessage, recreateMailbox, withMailClient } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * What only an IMAP account shows: reading never changes a flag, ids survive another client's
 * moves, what_changed rides CONDSTORE (and says unsupported without it), and the search result
 * says who checked each predicate.
 */

const k = DEMO_FACTS.keys;

/** Every message's flags in every folder, as Dovecot itself reports them (not through IMAP). */
async function flagSnapshot(server: DovecotServer): Promise<string> {
  const out = await server.doveadm(['fetch', '-u', server.user, 'mailbox uid flags', 'all']);
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .sort()
    .join('\n');
}

const message = (id: string, subject: string) =>
  [
    'From: Ada Example <ada@example.org>',
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${id}@example.org>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Are you free for lunch on Thursday?',
    '',
  ].join('\r\n');

describe.each(['full', 'bridge'] as const)('IMAP reads on %s', (profile) => {
  let b: Backend;
  let server: DovecotServer;

  beforeAll(async () => {
    b = await startBackend(profile, {
      env: { MAILWARDEN_TOOLS: 'read,filters' },
      tiers: ['read', 'filters'],
    });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    await b.client.listTools();
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('reading every thread with every read tool changes no flag anywhere', async () => {
    const before = await flagSnapshot(server);
    expect(before).toMatch(/Seen/);
    let pageToken: string | undefined;
    const ids: string[] = [];
    do {
      const r = await b.call('search', {
        query: 'in:anywhere',
        maxResults: 50,
        ...(pageToken ? { pageToken } : {}),
      });
      expect(r.isError, r.text).toBe(false);
      ids.push(...(r.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId));
      pageToken = r.structured['nextPageToken'] as string | undefined;
    } while (pageToken);
    for (const threadId of ids) {
      const r = await b.call('get_thread', { threadId, bodies: 'full' });
      expect(r.isError, r.text).toBe(false);
    }
    for (const [tool, args] of [
      ['get_profile', {}],
      ['list_labels', { counts: true }],
      ['triage_digest', { query: 'in:anywhere', maxThreads: 500 }],
      ['follow_ups', {}],
      ['list_subscriptions', { maxThreads: 300 }],
      ['list_unsubscribe', { threadId: b.tid(k.newsletterReplyNewest) }],
      ['read_attachment', { threadId: b.tid(k.dmarcGzip), filename: DEMO_FACTS.dmarcFiles.gzip }],
    ] as const) {
      const r = await b.call(tool, args);
      expect(r.isError, `${tool}: ${r.text}`).toBe(false);
    }
    expect(await flagSnapshot(server)).toBe(before);
  }, 120_000);

  it('says per predicate whether the server, a local check or nothing checked it', async () => {
    const checkedBy = async (query: string) => {
      const r = await b.call('search', { query });
      expect(r.isError, r.text).toBe(false);
      const v = r.structured['verification'] as { checkedBy: Array<{ predicate: string; by: string }> };
      return {
        by: Object.fromEntries(v.checkedBy.map((c) => [c.predicate, c.by])),
        threads: r.structured['threads'],
      };
    };
    const mixed = await checkedBy('from:colleague has:attachment is:unread');
    expect(mixed.by).toMatchObject({
      'from:colleague': 'server',
      'has:attachment': 'local',
      'is:unread': 'server',
    });
    // IMAP has no categories: nothing can check one, so it matches nothing, and says so.
    const category = await checkedBy('category:updates');
    expect(category.by).toMatchObject({ 'category:updates': 'none' });
    expect(category.threads).toEqual([]);
  });

  it('a thread id from search still opens after another client archived the thread', async () => {
    const key = k.inlineReply;
    const tid = b.tid(key);
    const first = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(first.isError, first.text).toBe(false);
    const count = first.structured['messageCount'];
    await withMailClient(server, async (other) => {
      await other.mailboxOpen('INBOX');
      const uids = (await other.search({ header: { subject: 'Re:' } }, { uid: true })) || [];
      expect(uids.length).toBeGreaterThan(0);
      await other.messageMove(uids.join(','), 'Archive', { uid: true });
    });
    const after = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(after.isError, after.text).toBe(false);
    expect(after.structured['threadId']).toBe(tid);
    expect(after.structured['messageCount']).toBe(count);
  });

  it('get_thread honours lastN and afterMessageId', async () => {
    const all = await b.call('get_thread', { threadId: b.tid(k.longQuoted), bodies: 'none' });
    const messages = all.structured['messages'] as Array<{ id: string }>;
    const last = await b.call('get_thread', { threadId: b.tid(k.longQuoted), bodies: 'none', lastN: 2 });
    expect((last.structured['messages'] as unknown[]).length).toBe(2);
    const after = await b.call('get_thread', {
      threadId: b.tid(k.longQuoted),
      bodies: 'none',
      afterMessageId: messages[5]?.id,
    });
    expect((after.structured['messages'] as Array<{ id: string }>).map((m) => m.id)).toEqual(
      messages.slice(6).map((m) => m.id),
    );
  });

  it('a tool the account cannot serve answers unsupported', async () => {
    const r = await b.call('list_filters');
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/unsupported/);
  });

  if (profile === 'full') {
    it('what_changed lists new mail by CONDSTORE, and a renumbered folder is an error that says so', async () => {
      const p = await b.call('get_profile');
      const cursor = p.structured['historyId'] as string;
      expect(cursor).toMatch(/^i/);
      expect((p.structured['capabilities'] as { history: boolean }).history).toBe(true);
      await appendMessage(server, 'INBOX', message('wc-1', 'Lunch on Thursday?'));
      const w = await b.call('what_changed', { historyId: cursor });
      expect(w.isError, w.text).toBe(false);
      const added = w.structured['added'] as Array<{ messageId: string; labels: string[] }>;
      expect(added).toHaveLength(1);
      expect(added[0]?.messageId).toBe(`m${Buffer.from('wc-1@example.org').toString('base64url')}`);
      expect(added[0]?.labels).toEqual(expect.arrayContaining(['INBOX', 'UNREAD']));
      const next = w.structured['nextHistoryId'] as string;
      const again = await b.call('what_changed', { historyId: next });
      expect(again.structured['added']).toEqual([]);
      await recreateMailbox(server, 'Drafts');
      const bad = await b.call('what_changed', { historyId: next });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/invalid_input/);
      expect(bad.text).toMatch(/UIDVALIDITY/);
    });
  } else {
    it('what_changed says unsupported: Bridge offers no CONDSTORE', async () => {
      const p = await b.call('get_profile');
      expect((p.structured['capabilities'] as { history: boolean }).history).toBe(false);
      const w = await b.call('what_changed', { historyId: p.structured['historyId'] as string });
      expect(w.isError).toBe(true);
      expect(w.text).toMatch(/unsupported/);
      expect(w.text).toMatch(/CONDSTORE/);
    });

    it('the Bridge layout: Proton folder names become the usual labels', async () => {
      const r = await b.call('list_labels');
      const labels = r.structured['labels'] as Array<{ id: string; name: string; type: string }>;
      expect(labels.find((l) => l.id === 'SPAM')).toBeDefined();
      expect(labels.some((l) => unfence(l.id).startsWith('Labels/') && unfence(l.name) === 'Receipts')).toBe(
        true,
      );
      const p = await b.call('get_profile');
      expect((p.structured['capabilities'] as { organisation: string }).organisation).toBe(
        'folders+label-folders',
      );
    });
  }
});
