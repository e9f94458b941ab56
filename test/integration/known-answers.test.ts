import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { answersFor, messagesOfKey } from '../helpers/corpus-answers.js';

/*
 * One table of known answers about the demo corpus, run against the Gmail sandbox, a full
 * Dovecot and a Bridge-like Dovecot (STARTTLS, self-signed pinned certificate, Proton's folder
 * names, gluon's capability list, a proxy that delays every command).
 */

interface Summary {
  threadId: string;
  unread: boolean;
  messageCount: number;
  labels: string[];
  signals: string[];
}
interface SearchOut {
  threads: Summary[];
  nextPageToken?: string;
  verification: { predicates: string[]; indexHits: number; dropped: number };
}
interface Auth {
  unchecked?: true;
  dmarc?: string;
  spf?: string;
  dkimAligned?: boolean;
}

const KINDS: BackendKind[] = ['gmail', 'full', 'bridge'];
const k = DEMO_FACTS.keys;

describe.each(KINDS)('known answers on %s', (kind) => {
  let b: Backend;
  const answers = answersFor(kind);
  const everything = new Map<string, Summary>();

  async function searchAll(query: string): Promise<Summary[]> {
    const out: Summary[] = [];
    let pageToken: string | undefined;
    for (let i = 0; i < 40; i++) {
      const r = await b.call('search', { query, maxResults: 50, ...(pageToken ? { pageToken } : {}) });
      expect(r.isError, r.text).toBe(false);
      const s = r.structured as unknown as SearchOut;
      out.push(...s.threads);
      pageToken = s.nextPageToken;
      if (pageToken === undefined) break;
    }
    return out;
  }

  async function thread(key: string, bodies = 'text') {
    const r = await b.call('get_thread', { threadId: b.tid(key), bodies });
    expect(r.isError, r.text).toBe(false);
    return r.structured as unknown as {
      threadId: string;
      messageCount: number;
      messages: Array<{
        authentication: Auth;
        body?: string;
        subject: string;
        quotedHistoryRemoved?: boolean;
      }>;
    };
  }

  beforeAll(async () => {
    b = await startBackend(kind, kind === 'bridge' ? { delayMs: 5 } : {});
    await b.client.listTools();
    for (const t of await searchAll('in:anywhere')) everything.set(t.threadId, t);
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('get_profile names the owner and counts the corpus', async () => {
    const r = await b.call('get_profile');
    expect(r.isError, r.text).toBe(false);
    expect(r.structured).toMatchObject({
      emailAddress: DEMO_ADDRESS,
      provider: kind === 'gmail' ? 'gmail' : 'imap',
      messagesTotal: DEMO_FACTS.messageCount,
      threadsTotal: answers.threads,
    });
  });

  it('in:anywhere lists every thread once', () => {
    expect(everything.size).toBe(answers.threads);
  });

  it('in:inbox and in:inbox is:unread give the corpus counts, page by page without repeats', async () => {
    const inbox = await searchAll('in:inbox');
    expect(new Set(inbox.map((t) => t.threadId)).size).toBe(inbox.length);
    expect(inbox.length).toBe(answers.inbox);
    const unread = await searchAll('in:inbox is:unread');
    expect(unread.length).toBe(answers.unreadInbox);
    expect(unread.every((t) => t.unread)).toBe(true);
  });

  it('spam and trash are left out unless named, and found when named', async () => {
    const spam = await searchAll('in:spam');
    expect(spam.length).toBe(answers.spam);
    for (const key of k.spamNotSpam) expect(spam.map((t) => t.threadId)).toContain(b.tid(key));
    const trash = await searchAll('in:trash');
    expect(trash.length).toBe(answers.trash);
    const plain = new Set((await searchAll('')).map((t) => t.threadId));
    for (const key of [...k.realSpam, ...k.trashed]) expect(plain.has(b.tid(key))).toBe(false);
  });

  it('get_thread reads a long quoted thread whole, quoted history removed', async () => {
    const t = await thread(k.longQuoted, 'new');
    expect(t.messageCount).toBe(messagesOfKey(k.longQuoted));
    expect(t.messages.slice(1).every((m) => m.quotedHistoryRemoved === true)).toBe(true);
  });

  it('judges sender authentication from the trusted report only', async () => {
    const below = (await thread(k.forgedAuthBelow)).messages[0]?.authentication;
    expect(below?.dmarc).toBe('fail');
    const none = (await thread(k.noAuthResults)).messages[0]?.authentication;
    expect(none?.unchecked).toBe(true);
    const aligned = (await thread(k.dkimAligned)).messages[0]?.authentication;
    expect(aligned?.dkimAligned).toBe(true);
  });

  it('flags the lookalike, the display-name spoof and the Reply-To mismatch', () => {
    expect(everything.get(b.tid(k.lookalikePhish))?.signals).toContain('lookalikeDomain');
    expect(everything.get(b.tid(k.displayNameSpoof))?.signals).toContain('displayNameSpoof');
    expect(everything.get(b.tid(k.replyToMismatch))?.signals).toContain('replyToMismatch');
  });

  it('decodes the non-UTF-8 charsets', async () => {
    for (const key of [k.charsetKoi8r, k.charsetShiftJis, k.charsetWindows1252]) {
      const expected = DEMO_FACTS.expectedText[key];
      const t = await thread(key);
      expect(unfence(t.messages[0]?.subject ?? '')).toBe(expected?.subject);
      expect(unfence(t.messages[0]?.body ?? '')).toContain(expected?.body.slice(0, 20));
    }
  });

  it('follow_ups finds the threads waiting on a reply, from the Sent mail', async () => {
    const r = await b.call('follow_ups', { olderThanDays: 3, withinDays: 20 });
    expect(r.isError, r.text).toBe(false);
    const rows = r.structured['awaitingReply'] as Array<{ threadId: string }>;
    expect(rows.map((x) => x.threadId).sort()).toEqual(k.awaitingReplyFromOwner.map((x) => b.tid(x)).sort());
  });

  it('list_unsubscribe finds one-click past a personal reply', async () => {
    const r = await b.call('list_unsubscribe', { threadId: b.tid(k.newsletterReplyNewest) });
    expect(r.isError, r.text).toBe(false);
    expect((r.structured['options'] as { oneClick: boolean }).oneClick).toBe(true);
  });

  it('read_attachment reads the XML inside the DMARC zip', async () => {
    const r = await b.call('read_attachment', {
      threadId: b.tid(k.dmarcZip),
      filename: DEMO_FACTS.dmarcFiles.zip,
    });
    expect(r.isError, r.text).toBe(false);
    const entries = r.structured['entries'] as Array<{ name: string }>;
    expect(unfence(entries[0]?.name ?? '')).toBe(DEMO_FACTS.dmarcFiles.xmlInZip);
  });

  it('triage_digest judges every inbox thread', async () => {
    const r = await b.call('triage_digest', { maxThreads: 500 });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['threads']).toBe(answers.inbox);
  });

  it('list_labels shows the system labels and the corpus labels', async () => {
    const r = await b.call('list_labels');
    expect(r.isError, r.text).toBe(false);
    const labels = r.structured['labels'] as Array<{ id: string; name: string }>;
    const ids = labels.map((l) => l.id);
    for (const id of ['INBOX', 'SENT', 'SPAM', 'TRASH', 'UNREAD', 'STARRED']) expect(ids).toContain(id);
    const names = labels.map((l) => unfence(l.name));
    expect(names.some((n) => /^Receipts$/.test(n))).toBe(true);
  });

  it('label:receipts finds the threads the corpus labelled', async () => {
    const hits = await searchAll('label:receipts');
    expect(hits.length).toBe(DEMO_FACTS.labelThreadCounts['Label_4']);
  });

  it('list_subscriptions and list_accounts answer', async () => {
    const subs = await b.call('list_subscriptions', { maxThreads: 100 });
    expect(subs.isError, subs.text).toBe(false);
    const acc = await b.call('list_accounts');
    expect(acc.isError, acc.text).toBe(false);
  });
});
