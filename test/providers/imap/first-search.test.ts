import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../../src/mcp/untrusted.js';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { withMailClient } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * The first search after start, as an agent on a timer makes it (`in:inbox is:unread`). On
 * Bridge, where knowing a message's labels costs a STATUS and an index of every label folder,
 * the listing indexes INBOX alone: the threads are gathered live in All Mail, copies are located
 * only where an index already exists, and the result names the folders it did not look in
 * (src/providers/freshness.ts). The unread hits come from the flags the INBOX index read in the
 * same call, so no SEARCH is needed for them. The get_thread and get_message calls after it build
 * the missing indexes a few per call, within what a warm read may cost (src/providers/imap/
 * threads.ts), and name the folders they did not look in until every one is built.
 */

const TAG = `first-${Date.now()}`;
const ask = `${TAG}-ask@example.org`;

function message(headers: string[], body: string): string {
  return [...headers, 'Content-Type: text/plain; charset=utf-8', '', body, ''].join('\r\n');
}

/**
 * Another client's mail before the first call: an unread question (labelled, where a label
 * folder is given), the person's reply in Sent, and a read note that is:unread must leave out.
 */
async function seed(b: Backend, labelFolder?: string): Promise<void> {
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  const asked = new Date(Date.UTC(2026, 10, 30, 9));
  const replied = new Date(Date.UTC(2026, 10, 30, 10));
  const date = asked.toUTCString();
  await withMailClient(server, async (c) => {
    await c.append(
      'INBOX',
      message(
        [
          'From: Grace Example <grace@example.org>',
          `To: ${DEMO_ADDRESS}`,
          `Subject: Question ${TAG}`,
          `Date: ${date}`,
          `Message-ID: <${ask}>`,
        ],
        'Can you send the receipt?',
      ),
      [],
      asked,
    );
    await c.append(
      'Sent',
      message(
        [
          `From: ${DEMO_ADDRESS}`,
          'To: Grace Example <grace@example.org>',
          `Subject: Re: Question ${TAG}`,
          `Date: ${date}`,
          `Message-ID: <${TAG}-reply@example.org>`,
          `In-Reply-To: <${ask}>`,
          `References: <${ask}>`,
        ],
        'Here it is.',
      ),
      ['\\Seen'],
      replied,
    );
    await c.append(
      'INBOX',
      message(
        [
          'From: Grace Example <grace@example.org>',
          `To: ${DEMO_ADDRESS}`,
          `Subject: Already read ${TAG}`,
          `Date: ${date}`,
          `Message-ID: <${TAG}-read@example.org>`,
        ],
        'Seen before.',
      ),
      ['\\Seen'],
    );
    if (labelFolder === undefined) return;
    await c.mailboxOpen('INBOX');
    const uids = (await c.search({ header: { 'message-id': ask } }, { uid: true })) || [];
    await c.messageCopy(uids.join(','), labelFolder, { uid: true });
  });
}

interface Listed {
  threadId: string;
  subject: string;
  messageCount: number;
  labels: string[];
}

const mine = (r: { structured: Record<string, unknown> }) =>
  (r.structured['threads'] as Listed[])
    .map((t) => ({ ...t, subject: unfence(t.subject), labels: t.labels.map(unfence) }))
    .filter((t) => t.subject.includes(TAG));

describe('the first search after start on the Bridge profile', () => {
  let b: Backend;
  let threadId = '';
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0, env: { MAILWARDEN_TOOLS: 'read' }, tiers: ['read'] });
    await seed(b, 'Labels/Receipts');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('costs at most 12 commands with login, indexes INBOX alone and names the folders it did not look in', async () => {
    const front = (b.imap as NonNullable<Backend['imap']>).proxy;
    expect(front).toBeDefined();
    const from = front?.commands().length ?? 0;
    const r = await b.call('search', { query: 'in:inbox is:unread', maxResults: 50 });
    expect(r.isError, r.text).toBe(false);
    const sent = (front?.commands() ?? []).slice(from).map((c) => c.text.replace(/^\S+ /, ''));
    expect(sent.some((t) => /^LOGIN /i.test(t))).toBe(true);
    expect(sent.length).toBeLessThanOrEqual(12);
    // Only INBOX and All Mail are opened; the one whole-folder FETCH is INBOX's.
    expect(sent.filter((t) => /^(EXAMINE|SELECT) /i.test(t))).toEqual([
      'EXAMINE INBOX',
      'EXAMINE "All Mail"',
    ]);
    expect(sent.filter((t) => /^UID FETCH 1:\* /i.test(t))).toHaveLength(1);
    // Unread from the flags INBOX's FETCH just read: no UNSEEN search.
    expect(sent.filter((t) => /UNSEEN/i.test(t))).toEqual([]);

    const [question, ...others] = mine(r);
    expect(others).toEqual([]);
    expect(question?.subject).toBe(`Question ${TAG}`);
    // The reply in Sent joins the thread (found live in All Mail); its SENT label and the
    // question's Receipts label are not shown, and the result says where it did not look.
    expect(question?.messageCount).toBe(2);
    expect(question?.labels).toEqual(['INBOX']);
    const unchecked = (r.structured['uncheckedPlaces'] as string[]).map(unfence);
    expect(unchecked).toEqual(expect.arrayContaining(['Sent', 'Labels/Receipts']));
    expect(unchecked).not.toContain('INBOX');
    const text = await b.call('search', { query: 'in:inbox is:unread', maxResults: 50, format: 'text' });
    expect(text.text).toMatch(
      /not looked in \(labels from these folders are not shown\): .*Labels\/Receipts/,
    );

    threadId = question?.threadId as string;
  });

  it('the first get_thread after it costs at most 6 commands, names the folders it did not look in, and later reads look in each until every label shows', async () => {
    const front = (b.imap as NonNullable<Backend['imap']>).proxy as NonNullable<
      NonNullable<Backend['imap']>['proxy']
    >;
    const read = async (format?: 'text') => {
      const from = front.commands().length;
      const t = await b.call('get_thread', { threadId, bodies: 'none', ...(format ? { format } : {}) });
      expect(t.isError, t.text).toBe(false);
      const sent = front.commands().slice(from);
      return {
        t,
        sent: sent.map((c) => c.text.replace(/^\S+ /, '')),
        labels: (t.structured['messages'] as Array<{ labels: string[] }>).map((m) => m.labels.map(unfence)),
        unchecked: ((t.structured['uncheckedPlaces'] as string[] | undefined) ?? []).map(unfence),
      };
    };
    // The listing indexed INBOX alone. This read builds one more folder's index, Sent first (a
    // conversation's mail outside INBOX is most often the owner's replies): the reply shows SENT.
    // Labels/Receipts is not looked in, so the question shows no Receipts label, and says so.
    let r = await read('text');
    expect(r.sent.length, r.sent.join(' | ')).toBeLessThanOrEqual(6);
    // Two whole-folder FETCHes: All Mail's index (the conversation rounds) and Sent's.
    expect(r.sent.filter((t) => /^UID FETCH 1:\* /i.test(t))).toHaveLength(2);
    const opened = r.sent.filter((t) => /^(EXAMINE|SELECT) /i.test(t) && t !== 'EXAMINE "All Mail"');
    expect(opened).toEqual(['EXAMINE Sent']);
    expect(r.labels).toEqual([['INBOX'], expect.arrayContaining(['SENT'])]);
    expect(r.unchecked).toEqual(expect.arrayContaining(['Labels/Receipts', 'Drafts', 'Trash']));
    expect(r.unchecked).not.toContain('Sent');
    expect(r.unchecked).not.toContain('INBOX');
    expect(r.t.text).toMatch(/not looked in \(labels from these folders are not shown\): .*Labels\/Receipts/);

    // Each later read builds at least one more, within the same 6 commands; a label shows
    // exactly when its folder was looked in.
    const total = r.unchecked.length;
    for (let i = 0; i < total && r.unchecked.length > 0; i++) {
      const before = r.unchecked;
      r = await read();
      expect(r.sent.length, r.sent.join(' | ')).toBeLessThanOrEqual(6);
      expect(r.unchecked.length).toBeLessThan(before.length);
      expect(before).toEqual(expect.arrayContaining(r.unchecked));
      expect(r.labels[0]?.includes('Receipts')).toBe(!r.unchecked.includes('Labels/Receipts'));
    }
    expect(r.t.structured['uncheckedPlaces']).toBeUndefined();
    expect(r.labels).toEqual([
      expect.arrayContaining(['INBOX', 'Receipts']),
      expect.arrayContaining(['SENT']),
    ]);

    // Within the recheck window the next read takes Receipts' check from an earlier call and
    // says so: a label shown from a reused index is marked reused.
    r = await read();
    expect(r.labels[0]).toContain('Receipts');
    expect(r.t.structured['uncheckedPlaces']).toBeUndefined();
    const reused = r.t.structured['reusedChecks'] as { places: string[] };
    expect(reused.places.map(unfence)).toContain('Labels/Receipts');
  });

  it('a later listing asks the server for unread mail and finds the same, plus what arrived', async () => {
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    await withMailClient(server, (c) =>
      c.append(
        'INBOX',
        message(
          [
            'From: Grace Example <grace@example.org>',
            `To: ${DEMO_ADDRESS}`,
            `Subject: Later ${TAG}`,
            `Date: ${new Date().toUTCString()}`,
            `Message-ID: <${TAG}-later@example.org>`,
          ],
          'One more.',
        ),
        [],
      ),
    );
    const r = await b.call('search', { query: 'in:inbox is:unread', maxResults: 50 });
    expect(r.isError, r.text).toBe(false);
    expect(
      mine(r)
        .map((t) => t.subject)
        .sort(),
    ).toEqual([`Later ${TAG}`, `Question ${TAG}`]);
  });
});

describe('get_message after the first search on the Bridge profile', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0, env: { MAILWARDEN_TOOLS: 'read' }, tiers: ['read'] });
    await seed(b, 'Labels/Receipts');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('costs at most 4 commands and names the folders it did not look in; get_thread builds them', async () => {
    const front = (b.imap as NonNullable<Backend['imap']>).proxy as NonNullable<
      NonNullable<Backend['imap']>['proxy']
    >;
    const r = await b.call('search', { query: 'in:inbox is:unread', maxResults: 50 });
    expect(r.isError, r.text).toBe(false);
    const listed = (r.structured['threads'] as Array<Listed & { last: { messageId: string } }>).filter((t) =>
      unfence(t.subject).includes(TAG),
    );
    const question = listed[0];
    expect(question).toBeDefined();
    // The thread's last message is the reply in Sent; the question is the first.
    const thread = await b.call('get_thread', { threadId: question?.threadId as string, bodies: 'none' });
    const firstId = (thread.structured['messages'] as Array<{ id: string }>)[0]?.id as string;
    const message = async () => {
      const from = front.commands().length;
      const m = await b.call('get_message', { messageId: firstId, bodies: 'none' });
      expect(m.isError, m.text).toBe(false);
      return {
        sent: front.commands().length - from,
        labels: (m.structured['message'] as { labels: string[] }).labels.map(unfence),
        unchecked: ((m.structured['uncheckedPlaces'] as string[] | undefined) ?? []).map(unfence),
      };
    };
    let m = await message();
    expect(m.sent).toBeLessThanOrEqual(4);
    expect(m.labels).toEqual(['INBOX']);
    expect(m.unchecked).toContain('Labels/Receipts');
    // Reading the thread until it has looked everywhere builds every index: then get_message
    // shows the label and leaves nothing unchecked.
    for (let i = 0; i < 15; i++) {
      const t = await b.call('get_thread', { threadId: question?.threadId as string, bodies: 'none' });
      if (t.structured['uncheckedPlaces'] === undefined) break;
    }
    m = await message();
    expect(m.labels).toEqual(expect.arrayContaining(['INBOX', 'Receipts']));
    expect(m.unchecked).toEqual([]);
  });
});

describe('triage_digest after start on the Bridge profile', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0, env: { MAILWARDEN_TOOLS: 'read' }, tiers: ['read'] });
    await seed(b, 'Labels/Receipts');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('its label buckets leave out the folders it did not look in, and it names them', async () => {
    const r = await b.call('triage_digest', {});
    expect(r.isError, r.text).toBe(false);
    const labels = (r.structured['labels'] as Array<{ label: string }>).map((l) => unfence(l.label));
    expect(labels).toContain('INBOX');
    expect(labels).not.toContain('Receipts');
    const unchecked = ((r.structured['uncheckedPlaces'] as string[] | undefined) ?? []).map(unfence);
    expect(unchecked).toEqual(expect.arrayContaining(['Labels/Receipts']));
    const text = await b.call('triage_digest', { format: 'text' });
    expect(text.text).toMatch(
      /not looked in \(labels from these folders are not shown\): .*Labels\/Receipts/,
    );
  });
});

describe('the first search after start on full Dovecot (LIST-STATUS)', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('full', { delayMs: 0, env: { MAILWARDEN_TOOLS: 'read' }, tiers: ['read'] });
    await seed(b);
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('locates every copy and leaves nothing unchecked', async () => {
    const r = await b.call('search', { query: 'in:inbox is:unread', maxResults: 50 });
    expect(r.isError, r.text).toBe(false);
    const [question, ...others] = mine(r);
    expect(others).toEqual([]);
    expect(question?.messageCount).toBe(2);
    expect(question?.labels).toEqual(expect.arrayContaining(['INBOX', 'SENT']));
    expect(r.structured['uncheckedPlaces']).toBeUndefined();

    // get_thread: every place looked in (one LIST-STATUS), every label shown.
    const t = await b.call('get_thread', { threadId: question?.threadId as string, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    const labels = (t.structured['messages'] as Array<{ labels: string[] }>).map((m) =>
      m.labels.map(unfence),
    );
    expect(labels).toEqual([['INBOX'], expect.arrayContaining(['SENT'])]);
    expect(t.structured['uncheckedPlaces']).toBeUndefined();
    expect(t.structured['reusedChecks']).toBeUndefined();

    // triage_digest: every label folder looked in, Receipts-free here, nothing unchecked.
    const d = await b.call('triage_digest', {});
    expect(d.isError, d.text).toBe(false);
    expect(d.structured['uncheckedPlaces']).toBeUndefined();
  });
});
