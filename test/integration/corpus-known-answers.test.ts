import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { READER_CASES } from '../../src/sandbox/corpus/reader-cases.js';
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
  otherReports?: number;
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
    // Only the topmost report counts: imported mail's top report is another server's.
    const imported = (await thread(k.authImportedForgedBelow)).messages[0]?.authentication;
    expect(imported).toMatchObject({ unchecked: true, otherReports: 2 });
    expect(imported).not.toHaveProperty('dkim');
    const spaced = (await thread(k.authSpacedFieldName)).messages[0]?.authentication;
    expect(spaced).toMatchObject({ spf: 'fail', dmarc: 'fail', otherReports: 1 });
    expect(spaced).not.toHaveProperty('dkim');
    const versioned = (await thread(k.authVersionedOnlyReport)).messages[0]?.authentication;
    expect(versioned).toMatchObject({ dmarc: 'pass', dkimAligned: true, otherReports: 0 });
    expect(versioned).not.toHaveProperty('unchecked');
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

  // Issue 10, classes 4–6: the reader cases of src/sandbox/corpus/reader-cases.ts.
  async function readerView(key: string, extra: Record<string, unknown> = {}): Promise<ReaderView> {
    const r = await b.call('get_thread', { threadId: b.tid(key), ...extra });
    expect(r.isError, r.text).toBe(false);
    return (r.structured as unknown as { messages: ReaderView[] }).messages[0] as ReaderView;
  }

  it('decodes raw 8-bit encoded words, a stray byte, UTF-7 and a bad ISO-2022-JP label as a careful reader does', async () => {
    for (const key of [k.rawBytesInEncodedWord, k.utf8HeaderStrayByte, k.utf7Body, k.iso2022jpStrayBytes]) {
      const expected = DEMO_FACTS.expectedText[key];
      const m = await readerView(key);
      expect(unfence(m.subject), key).toBe(expected?.subject);
      expect(unfence(m.body ?? ''), key).toBe(expected?.body.trim());
    }
    const word = await readerView(k.rawBytesInEncodedWord);
    expect(unfence(word.from)).toBe(
      `${READER_CASES.rawBytesInWord.fromName} <juergen.koehler@teichverein.example>`,
    );
  });

  it('shows every part: a root attachment (partId ""), a root message/rfc822, an inline named text, deep HTML', async () => {
    const pdf = await readerView(k.rootAttachment);
    expect(pdf.emptyBodyReason).toBe('no-text-part');
    expect(pdf.attachments.map((a) => [a.partId, unfence(a.filename)])).toEqual([
      ['', READER_CASES.rootAttachment.filename],
    ]);
    const read = await b.call('read_attachment', { threadId: b.tid(k.rootAttachment), partId: '' });
    expect(read.isError, read.text).toBe(false);
    const entries = read.structured['entries'] as Array<{ text?: string }>;
    expect(unfence(entries[0]?.text ?? '')).toBe(READER_CASES.rootAttachment.bytes);

    const e = READER_CASES.rootEmbedded;
    const fwd = await readerView(k.rootEmbeddedMessage);
    const body = unfence(fwd.body ?? '');
    expect(body).toContain(`From: ${e.innerFrom}`);
    expect(body).toContain(`Subject: ${e.innerSubject}`);
    expect(body).toContain(`Attachments: ${e.innerAttachment} (text/csv`);
    expect(body.endsWith(e.innerBody)).toBe(true);

    const minutes = await readerView(k.inlineNamedText);
    expect(unfence(minutes.body ?? '')).toBe(READER_CASES.inlineNamedText.body.trim());
    expect(minutes.attachments.map((a) => unfence(a.filename))).toEqual([
      READER_CASES.inlineNamedText.filename,
    ]);

    const deep = await readerView(k.deepHtml);
    expect(unfence(deep.body ?? '')).toBe(READER_CASES.deepHtml.words);
    expect(deep.bodySource).toBe('html');
  });

  it('keeps CSS-hidden text out of the body, counts it, and returns it only when asked', async () => {
    const hidden = READER_CASES.cssHidden.hidden;
    const m = await readerView(k.cssHiddenText);
    const body = unfence(m.body ?? '');
    expect(body).toContain(READER_CASES.cssHidden.visible);
    for (const h of hidden) expect(body).not.toContain(h.text);
    expect(m.hiddenText).toEqual({
      chars: hidden.reduce((n, h) => n + h.text.length, 0),
      reasons: hidden.map((h) => h.reason),
    });
    const full = await readerView(k.cssHiddenText, { bodies: 'full', includeHidden: true });
    expect(full.hiddenText?.pieces?.map((p) => ({ reason: p.reason, text: unfence(p.text) }))).toEqual(
      hidden.map((h) => ({ reason: h.reason, text: h.text })),
    );
    for (const p of full.hiddenText?.pieces ?? []) expect(p.text).not.toBe(unfence(p.text)); // fenced
  });
});

interface ReaderView {
  from: string;
  subject: string;
  body?: string;
  bodySource?: string;
  emptyBodyReason?: string;
  hiddenText?: { chars: number; reasons: string[]; pieces?: Array<{ reason: string; text: string }> };
  attachments: Array<{ partId: string; filename: string }>;
}
