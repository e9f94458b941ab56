import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../../src/mcp/untrusted.js';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { withMailClient } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * The folder index (src/providers/imap/folder-index.ts) answers where messages sit from what it
 * read in earlier calls, once STATUS shows a folder unchanged. These tests change the mailbox
 * from a second client between calls — a new message, a reply, a move out of INBOX, a copy into
 * a label place, an expunge — and check that the next call shows the mailbox as it is now, on
 * both profiles (full: one LIST-STATUS per call; Bridge: STATUS per folder), with every check
 * live (MAILWARDEN_IMAP_RECHECK_MS=0). The last describe runs Bridge with the default window, in
 * which a read-only call may locate copies from an earlier call's check and must say so.
 */

const mail = (id: string, subject: string, inReplyTo?: string) =>
  [
    'From: Grace Example <grace@example.org>',
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${id}@example.org>`,
    ...(inReplyTo === undefined
      ? []
      : [`In-Reply-To: <${inReplyTo}@example.org>`, `References: <${inReplyTo}@example.org>`]),
    'Content-Type: text/plain; charset=utf-8',
    '',
    'A note for the index test.',
    '',
  ].join('\r\n');

interface ThreadView {
  threadId: string;
  messageCount: number;
  messages: Array<{ id: string; subject: string; labels: string[] }>;
}

describe.each(['full', 'bridge'] as const)('the folder index on %s', (profile) => {
  let b: Backend;
  let server: DovecotServer;
  const labelPlace = profile === 'bridge' ? 'Labels/Receipts' : 'Sent';
  const labelShown = profile === 'bridge' ? 'Receipts' : 'SENT';

  beforeAll(async () => {
    b = await startBackend(profile, {
      env: { MAILWARDEN_TOOLS: 'read', MAILWARDEN_IMAP_RECHECK_MS: '0' },
      tiers: ['read'],
    });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    await b.client.listTools();
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  const inboxThreads = async () => {
    const r = await b.call('search', { query: 'in:inbox', maxResults: 5 });
    expect(r.isError, r.text).toBe(false);
    return r.structured['threads'] as Array<{ threadId: string; subject: string }>;
  };
  const thread = async (threadId: string) => {
    const r = await b.call('get_thread', { threadId, bodies: 'none' });
    expect(r.isError, r.text).toBe(false);
    const t = r.structured as unknown as ThreadView;
    return {
      ...t,
      messages: t.messages.map((m) => ({ ...m, subject: unfence(m.subject), labels: m.labels.map(unfence) })),
    };
  };

  it('sees new mail, a reply, a move, a copy and an expunge made by another client between calls', async () => {
    // Warm the index on every folder a read touches. On Bridge a get_thread builds one missing
    // folder index per call and names the others in uncheckedPlaces: read until none is left.
    const before = await inboxThreads();
    let reads = 0;
    for (let left: unknown = []; left !== undefined; reads++) {
      expect(reads).toBeLessThan(20);
      const r = await b.call('get_thread', { threadId: before[0]?.threadId as string, bodies: 'none' });
      expect(r.isError, r.text).toBe(false);
      left = r.structured['uncheckedPlaces'];
    }
    // Full Dovecot looks everywhere at once (LIST-STATUS).
    if (profile === 'full') expect(reads).toBe(1);
    const tag = `idx-${profile}-${Date.now()}`;
    await withMailClient(server, (c) => c.append('INBOX', mail(`${tag}-a`, `Index probe ${tag}`), []));

    // New mail: the listing from the index shows it first (newest), the thread holds one message.
    const listing = await b.call('search', { query: 'in:inbox', maxResults: 5 });
    // Every check was live: nothing is reported as taken from an earlier one.
    expect(listing.structured['reusedChecks']).toBeUndefined();
    const [newest] = listing.structured['threads'] as Array<{ threadId: string; subject: string }>;
    expect(newest).toBeDefined();
    expect(unfence(newest?.subject ?? '')).toBe(`Index probe ${tag}`);
    expect(newest?.threadId).not.toBe(before[0]?.threadId);
    const tid = newest?.threadId as string;
    let t = await thread(tid);
    expect(t.messageCount).toBe(1);
    expect(t.messages[0]?.labels).toContain('INBOX');

    // A reply arrives: the thread grows.
    await withMailClient(server, (c) =>
      c.append('INBOX', mail(`${tag}-b`, `Re: Index probe ${tag}`, `${tag}-a`), []),
    );
    t = await thread(tid);
    expect(t.messageCount).toBe(2);
    expect(t.messages.every((m) => m.labels.includes('INBOX'))).toBe(true);

    // The reply is moved to Archive: still in the thread, no longer in INBOX.
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('INBOX');
      const uids = (await c.search({ header: { 'message-id': `${tag}-b` } }, { uid: true })) || [];
      expect(uids.length).toBe(1);
      await c.messageMove(uids.join(','), 'Archive', { uid: true });
    });
    t = await thread(tid);
    expect(t.messageCount).toBe(2);
    const reply = t.messages.find((m) => m.subject.startsWith('Re:'));
    expect(reply?.labels).not.toContain('INBOX');

    // The first message is copied into a label place: it shows that label.
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('INBOX');
      const uids = (await c.search({ header: { 'message-id': `${tag}-a` } }, { uid: true })) || [];
      await c.messageCopy(uids.join(','), labelPlace, { uid: true });
    });
    t = await thread(tid);
    const first = t.messages.find((m) => !m.subject.startsWith('Re:'));
    expect(first?.labels).toEqual(expect.arrayContaining(['INBOX', labelShown]));

    // Deleted from INBOX and expunged: gone from the inbox listing, and from the message's labels.
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('INBOX');
      const uids = (await c.search({ header: { 'message-id': `${tag}-a` } }, { uid: true })) || [];
      await c.messageDelete(uids.join(','), { uid: true });
    });
    const listed = await inboxThreads();
    expect(listed.map((x) => unfence(x.subject))).not.toContain(`Index probe ${tag}`);
    t = await thread(tid);
    const gone = t.messages.find((m) => !m.subject.startsWith('Re:'));
    if (profile === 'full') {
      // The copy in Sent is a message of its own there: it stays in the thread, out of INBOX.
      expect(gone?.labels).toContain(labelShown);
      expect(gone?.labels).not.toContain('INBOX');
    } else {
      // A label copy is no place of its own (All Mail leaves label copies out): the thread ends
      // with the reply alone.
      expect(gone).toBeUndefined();
      expect(t.messageCount).toBe(1);
    }
  }, 120_000);

  it('new mail in the folder the connection has selected is seen (STATUS there needs a NOOP first)', async () => {
    // check_new_mail ends with INBOX selected on the connection (EXAMINE INBOX, UID SEARCH).
    const gate = await b.call('check_new_mail', {});
    expect(gate.isError, gate.text).toBe(false);
    const tag = `sel-${profile}-${Date.now()}`;
    await withMailClient(server, (c) => c.append('INBOX', mail(`${tag}-a`, `Selected probe ${tag}`), []));
    const [newest] = await inboxThreads();
    expect(unfence(newest?.subject ?? '')).toBe(`Selected probe ${tag}`);
  }, 120_000);

  it('a renumbered folder (new UIDVALIDITY) is read afresh, not from the old index', async () => {
    const tag = `uv-${profile}-${Date.now()}`;
    const before = await b.call('search', { query: 'in:sent', maxResults: 50 });
    expect((before.structured['threads'] as unknown[]).length).toBeGreaterThan(1);
    // Sent is deleted and made again with one new message: every UID the index held for it now
    // means nothing, and UID 1 is the new message.
    await server.doveadm(['mailbox', 'delete', '-u', server.user, '-s', 'Sent']);
    await server.doveadm(['mailbox', 'create', '-u', server.user, '-s', 'Sent']);
    await withMailClient(server, (c) => c.append('Sent', mail(`${tag}-s`, `Sent probe ${tag}`), ['\\Seen']));
    // `in:sent` alone is answered from the index without a SEARCH: an index kept across the
    // renumbering would list the old Sent mail.
    const r = await b.call('search', { query: 'in:sent', maxResults: 50 });
    expect(r.isError, r.text).toBe(false);
    const threads = r.structured['threads'] as Array<{ subject: string }>;
    expect(threads.map((t) => unfence(t.subject))).toEqual([`Sent probe ${tag}`]);
  }, 120_000);
});

describe('Bridge with the default recheck window (30 s)', () => {
  let b: Backend;
  let server: DovecotServer;

  beforeAll(async () => {
    b = await startBackend('bridge', { env: { MAILWARDEN_TOOLS: 'read,manage' }, tiers: ['read', 'manage'] });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    await b.client.listTools();
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  const labelsOf = (r: { structured: Record<string, unknown> }) =>
    (r.structured['messages'] as Array<{ labels: string[] }>).map((m) => m.labels.map(unfence));

  it('a read may locate copies from an earlier check and says so; a write checks live', async () => {
    const tag = `win-${Date.now()}`;
    await withMailClient(server, (c) => c.append('INBOX', mail(`${tag}-a`, `Window probe ${tag}`), []));
    const listed = await b.call('search', { query: 'in:inbox', maxResults: 5 });
    expect(listed.isError, listed.text).toBe(false);
    const [probe] = listed.structured['threads'] as Array<{ threadId: string; subject: string }>;
    expect(unfence(probe?.subject ?? '')).toBe(`Window probe ${tag}`);
    const tid = probe?.threadId as string;
    const uncheckedOf = (r: { structured: Record<string, unknown> }) =>
      ((r.structured['uncheckedPlaces'] as string[] | undefined) ?? []).map(unfence);
    const label = (folder: string) =>
      withMailClient(server, async (c) => {
        await c.mailboxOpen('INBOX');
        const uids = (await c.search({ header: { 'message-id': `${tag}-a` } }, { uid: true })) || [];
        await c.messageCopy(uids.join(','), folder, { uid: true });
      });
    // The first read after the listing (which indexed INBOX alone) builds one more folder's index
    // (Sent); the label folders are not looked in, and it says so.
    let t = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(labelsOf(t)).toEqual([['INBOX']]);
    expect(uncheckedOf(t)).toEqual(expect.arrayContaining(['Labels/Receipts', 'Labels/Travel']));

    // Another client labels it Receipts (a copy in Labels/Receipts). The next read still does
    // not look there (it builds Drafts'): no Receipts label, and Labels/Receipts named unchecked.
    await label('Labels/Receipts');
    t = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    expect(labelsOf(t)[0]).not.toContain('Receipts');
    expect(uncheckedOf(t)).toContain('Labels/Receipts');

    // A write right after never takes what a read left out: mark_read looks in every place live
    // (building every index), and after it the label is there for reads too, nothing unchecked.
    let w = await b.call('mark_read', { threadId: tid });
    expect(w.isError, w.text).toBe(false);
    expect((w.structured['changed'] as unknown[]).length).toBe(1);
    t = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(labelsOf(t)[0]).toEqual(expect.arrayContaining(['INBOX', 'Receipts']));
    expect(t.structured['uncheckedPlaces']).toBeUndefined();

    // Another client labels it Travel. Within the window the read located copies from the
    // write's check: it does not show the new label, and it says which folders it did not ask
    // again and how old their check was.
    await label('Labels/Travel');
    t = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    expect(labelsOf(t)[0]).not.toContain('Travel');
    expect(t.structured['uncheckedPlaces']).toBeUndefined();
    const reused = t.structured['reusedChecks'] as { places: string[]; oldestSeconds: number };
    // Folder names other than INBOX are mail-made (issue 23): fenced.
    expect(reused.places.map(unfence)).toContain('Labels/Travel');
    expect(reused.oldestSeconds).toBeGreaterThanOrEqual(0);
    expect(reused.oldestSeconds).toBeLessThanOrEqual(30);
    // The text format says it too.
    const text = await b.call('get_thread', { threadId: tid, bodies: 'none', format: 'text' });
    expect(text.text).toMatch(/labels from .*Labels\/Travel.*located with a folder check up to \d+ s old/);

    // A write never takes an earlier check: mark_unread reads every place live, and reports the
    // thread as it is; after it, the label is there for reads too.
    w = await b.call('mark_unread', { threadId: tid });
    expect(w.isError, w.text).toBe(false);
    expect((w.structured['changed'] as unknown[]).length).toBe(1);
    t = await b.call('get_thread', { threadId: tid, bodies: 'none' });
    expect(labelsOf(t)[0]).toEqual(expect.arrayContaining(['INBOX', 'Receipts', 'Travel']));
  }, 120_000);

  it('the folders a search reads its hits from are always asked live', async () => {
    const warm = await b.call('search', { query: 'in:inbox', maxResults: 5 });
    expect(warm.isError, warm.text).toBe(false);
    const tag = `live-${Date.now()}`;
    await withMailClient(server, (c) => c.append('INBOX', mail(`${tag}-a`, `Live probe ${tag}`), []));
    for (const query of ['in:inbox', 'in:inbox is:unread']) {
      const r = await b.call('search', { query, maxResults: 5 });
      const subjects = (r.structured['threads'] as Array<{ subject: string }>).map((x) => unfence(x.subject));
      expect(subjects, query).toContain(`Live probe ${tag}`);
    }
  }, 120_000);
});

describe('full Dovecot with the default recheck window: LIST-STATUS keeps every check live', () => {
  let b: Backend;
  let server: DovecotServer;

  beforeAll(async () => {
    b = await startBackend('full', { env: { MAILWARDEN_TOOLS: 'read' }, tiers: ['read'] });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    await b.client.listTools();
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('a copy another client makes shows in the next read, which reports no reused check', async () => {
    const tag = `ls-${Date.now()}`;
    await withMailClient(server, (c) => c.append('INBOX', mail(`${tag}-a`, `Listed probe ${tag}`), []));
    const listed = await b.call('search', { query: 'in:inbox', maxResults: 5 });
    const [probe] = listed.structured['threads'] as Array<{ threadId: string; subject: string }>;
    expect(unfence(probe?.subject ?? '')).toBe(`Listed probe ${tag}`);
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('INBOX');
      const uids = (await c.search({ header: { 'message-id': `${tag}-a` } }, { uid: true })) || [];
      await c.messageCopy(uids.join(','), 'Sent', { uid: true });
    });
    const t = await b.call('get_thread', { threadId: probe?.threadId as string, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    expect(t.structured['reusedChecks']).toBeUndefined();
    const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) =>
      m.labels.map(unfence),
    );
    expect(labels).toContain('SENT');
  }, 120_000);
});
