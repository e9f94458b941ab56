import { describe, expect, it } from 'vitest';

import {
  asksSomething,
  DAY_MS,
  judgeAwaitingReply,
  judgeAwaitingYou,
  lastWord,
  mergeFollowUps,
  newText,
} from '../../src/mail/follow-ups.js';
import type { FollowUpsResult } from '../../src/mail/follow-ups.js';
import { parseRawMessage } from '../../src/mail/mime.js';
import { parseQuery } from '../../src/mail/query/index.js';
import type { MailMessage, MailThread } from '../../src/mail/types.js';
import { verifyThreads } from '../../src/mail/verify.js';

const OWNER = 'me@home.example';
const NOW = Date.UTC(2026, 10, 30, 9, 0);
const ctx = { owner: OWNER, now: NOW, references: [] as string[] };
const window = { olderThanDays: 3, withinDays: 20 };

interface Spec {
  from?: string;
  to?: string;
  cc?: string;
  bcc?: string;
  daysAgo: number;
  labels: string[];
  headers?: string[];
  body?: string;
}

let seq = 0;
/** A message as threads.get format=full returns it, parsed from RFC 822 text. */
function msg(s: Spec): MailMessage {
  const raw = [
    `From: ${s.from ?? `Me <${OWNER}>`}`,
    ...(s.to === undefined ? [] : [`To: ${s.to}`]),
    ...(s.cc === undefined ? [] : [`Cc: ${s.cc}`]),
    ...(s.bcc === undefined ? [] : [`Bcc: ${s.bcc}`]),
    'Subject: Plans',
    ...(s.headers ?? []),
    'Content-Type: text/plain; charset=utf-8',
    '',
    s.body ?? 'Hello.',
    '',
  ].join('\r\n');
  const { headers, root } = parseRawMessage(raw);
  seq++;
  return {
    id: `m${seq}`,
    threadId: 't',
    labelIds: s.labels,
    internalDate: NOW - s.daysAgo * DAY_MS,
    snippet: '',
    sizeEstimate: raw.length,
    headers,
    root,
  };
}

/** The same message as format=metadata returns it: headers, no parts, no body. */
function metadataOf(m: MailMessage): MailMessage {
  const { body: _body, ...root } = m.root;
  return { ...m, root: { ...root, children: [] } };
}

const thread = (...messages: MailMessage[]): MailThread => ({ id: 'thread-1', messages });
const mine = (s: Omit<Spec, 'labels'> & { labels?: string[] }): MailMessage =>
  msg({ ...s, labels: s.labels ?? ['SENT'] });
const theirs = (s: Omit<Spec, 'labels'> & { labels?: string[] }): MailMessage =>
  msg({
    from: 'Ann Lee <ann@friends.example>',
    to: OWNER,
    ...s,
    labels: s.labels ?? ['INBOX', 'CATEGORY_PERSONAL'],
  });

describe('awaiting a reply (the owner wrote last)', () => {
  it('lists mail to someone else, with the counterpart and whole days waiting', () => {
    const v = judgeAwaitingReply(
      thread(mine({ to: 'Ann Lee <ann@friends.example>', daysAgo: 5.5 })),
      ctx,
      window,
    );
    expect(v).toEqual({
      item: expect.objectContaining({
        counterpart: 'Ann Lee <ann@friends.example>',
        daysWaiting: 5,
        subject: 'Plans',
      }),
    });
  });

  it('leaves out a note to self, whatever its labels', () => {
    const note = mine({ to: `Me <${OWNER}>`, daysAgo: 6, labels: ['SENT', 'INBOX'] });
    expect(judgeAwaitingReply(thread(note), ctx, window)).toEqual({ skip: 'noteToSelf' });
    const upper = mine({ to: OWNER.toUpperCase(), cc: OWNER, daysAgo: 6 });
    expect(judgeAwaitingReply(thread(upper), ctx, window)).toEqual({ skip: 'noteToSelf' });
  });

  it('counts a note to self that also went to others (Cc or Bcc) as waiting on them', () => {
    const cc = mine({ to: OWNER, cc: 'Bo <bo@work.example>', daysAgo: 6 });
    expect(judgeAwaitingReply(thread(cc), ctx, window)).toMatchObject({
      item: { counterpart: 'Bo <bo@work.example>' },
    });
    const bcc = mine({ to: OWNER, bcc: 'team@work.example', daysAgo: 6 });
    expect(judgeAwaitingReply(thread(bcc), ctx, window)).toMatchObject({
      item: { counterpart: 'team@work.example' },
    });
  });

  it("treats the owner's reply-all (own address in Cc) as waiting on the others", () => {
    const t = thread(
      theirs({ to: `${OWNER}, bo@work.example`, daysAgo: 9 }),
      mine({ to: 'ann@friends.example', cc: `bo@work.example, ${OWNER}`, daysAgo: 8 }),
    );
    expect(judgeAwaitingReply(t, ctx, window)).toMatchObject({
      item: { counterpart: 'ann@friends.example, bo@work.example', daysWaiting: 8 },
    });
  });

  it("is answered when someone else's reply-all came after the owner's message", () => {
    const t = thread(
      mine({ to: 'ann@friends.example, bo@work.example', daysAgo: 8 }),
      theirs({ from: 'bo@work.example', to: `ann@friends.example, ${OWNER}`, daysAgo: 7 }),
    );
    expect(judgeAwaitingReply(t, ctx, window)).toEqual({ skip: 'notYours' });
  });

  it('keeps waiting through an out-of-office reply, and says one came', () => {
    const t = thread(
      mine({ to: 'ann@friends.example', daysAgo: 6 }),
      theirs({ daysAgo: 6, headers: ['Auto-Submitted: auto-replied'], body: 'I am away.' }),
    );
    expect(judgeAwaitingReply(t, ctx, window)).toMatchObject({ item: { automatedRepliesAfter: 1 } });
  });

  it('ignores a draft at the end: a reply being written has not been sent', () => {
    const t = thread(
      mine({ to: 'ann@friends.example', daysAgo: 4 }),
      mine({ to: 'ann@friends.example', daysAgo: 0, labels: ['DRAFT'] }),
    );
    expect(lastWord(t)?.message.id).toBe(t.messages[0]?.id);
    expect(judgeAwaitingReply(t, ctx, window)).toHaveProperty('item');
  });

  it('keeps to the window and leaves trashed mail out', () => {
    const at = (daysAgo: number, labels = ['SENT']) =>
      judgeAwaitingReply(thread(mine({ to: 'ann@friends.example', daysAgo, labels })), ctx, window);
    expect(at(2.9)).toEqual({ skip: 'tooRecent' });
    expect(at(3)).toHaveProperty('item');
    expect(at(20)).toHaveProperty('item');
    expect(at(20.1)).toEqual({ skip: 'tooOld' });
    expect(at(5, ['SENT', 'TRASH'])).toEqual({ skip: 'spamOrTrash' });
  });
});

describe('awaiting the owner (a person asked last)', () => {
  const you = (t: MailThread, bodies = true) => judgeAwaitingYou(t, ctx, { withinDays: 30, bodies });

  it('lists a person asking something, and says whether it is unread', () => {
    const t = thread(theirs({ daysAgo: 2, body: 'Are you coming on Friday?', labels: ['INBOX', 'UNREAD'] }));
    expect(you(t)).toMatchObject({
      kind: 'awaiting',
      item: { counterpart: 'Ann Lee <ann@friends.example>', daysWaiting: 2, unread: true },
    });
  });

  it('does not list a newsletter, a robot or a social-network notification, question or not', () => {
    const news = theirs({ daysAgo: 1, headers: ['List-Id: <news.shop.example>'], body: 'Ready for winter?' });
    const robot = theirs({ from: 'no-reply@shop.example', daysAgo: 1, body: 'Did you forget something?' });
    const social = theirs({
      daysAgo: 1,
      body: 'Theo replied: where was this?',
      labels: ['INBOX', 'CATEGORY_SOCIAL'],
    });
    expect(you(thread(news))).toEqual({ kind: 'skip', reason: 'newsletter' });
    expect(you(thread(robot))).toEqual({ kind: 'skip', reason: 'automated' });
    expect(you(thread(social))).toEqual({ kind: 'skip', reason: 'notPersonal' });
  });

  it('but a person answering inside a newsletter thread is a person', () => {
    const t = thread(
      theirs({ daysAgo: 6, headers: ['List-Unsubscribe: <mailto:u@list.example>'] }),
      mine({ to: 'list@list.example', daysAgo: 5.5 }),
      theirs({ from: 'Clara <clara@list.example>', daysAgo: 5, body: 'Could you bring a table?' }),
    );
    expect(you(t)).toMatchObject({ kind: 'awaiting', item: { counterpart: 'Clara <clara@list.example>' } });
  });

  it('needs the body only once every header and label test passed', () => {
    const asks = theirs({ daysAgo: 1, body: 'Lunch?' });
    expect(you(thread(metadataOf(asks)), false)).toEqual({ kind: 'needsBody' });
    expect(you(thread(metadataOf(mine({ to: 'x@y.example', daysAgo: 1 }))), false)).toEqual({
      kind: 'skip',
      reason: 'yours',
    });
    expect(you(thread(theirs({ daysAgo: 1, body: 'Here are the photos.' })))).toEqual({
      kind: 'skip',
      reason: 'noQuestion',
    });
  });

  it('goes by the live labels: a thread the index still lists in the inbox but that was archived is out', () => {
    const archived = thread(theirs({ daysAgo: 1, body: 'Lunch?', labels: ['CATEGORY_PERSONAL'] }));
    expect(verifyThreads(parseQuery('in:inbox'), [archived]).dropped).toHaveLength(1);
    expect(you(archived)).toEqual({ kind: 'skip', reason: 'notInInbox' });
  });

  it('sets aside mail that asks but looks spoofed, instead of listing it as waiting', () => {
    const replyTo = theirs({
      daysAgo: 1,
      headers: ['Reply-To: pay@elsewhere.example'],
      body: 'Can you pay today?',
    });
    expect(you(thread(replyTo))).toMatchObject({ kind: 'setAside', reason: 'replyToMismatch' });
    const fromMe = theirs({ from: `Me <${OWNER}>`, daysAgo: 1, body: 'Did you see this?' });
    expect(you(thread(fromMe))).toMatchObject({ kind: 'setAside', reason: 'claimsYourAddress' });
  });
});

describe('what counts as a question', () => {
  it('reads only what the sender wrote: not quoted lines, not history, not a forward', () => {
    const inline = theirs({ daysAgo: 1, body: 'Answers inline.\n\n> Can we move it?\nYes.\n' });
    expect(asksSomething(newText(inline))).toBe(false);
    const history = theirs({
      daysAgo: 1,
      body: 'Done.\n\nOn Mon, 1 Jan 2026, Me wrote:\n> Could you do it?\n',
    });
    expect(asksSomething(newText(history))).toBe(false);
    const fwd = theirs({
      daysAgo: 1,
      body: 'FYI.\n\n---------- Forwarded message ---------\nFrom: Sales\n\nInterested in our offer?\n',
    });
    expect(asksSomething(newText(fwd))).toBe(false);
  });

  it('finds questions in other scripts and ignores URL query strings', () => {
    expect(asksSomething('来週の金曜日、東京で会えますか？')).toBe(true);
    expect(asksSomething('هل ستأتي غدا؟')).toBe(true);
    expect(asksSomething('Photos: https://photos.example/a?id=1&x=2')).toBe(false);
  });
});

describe('account "all"', () => {
  const result = (owner: string, lastDate: string): FollowUpsResult => ({
    owner,
    asOf: '2026-11-30T09:00:00.000Z',
    awaitingReply: [{ threadId: `r-${owner}`, subject: 's', counterpart: 'c', lastDate, daysWaiting: 4 }],
    awaitingYou: [],
    setAside: [],
    scanned: {
      sent: { query: 'q', indexHits: 2, corrected: 1, moreMatched: false },
      inbox: { query: 'q', indexHits: 3, corrected: 0, moreMatched: true, bodiesRead: 1 },
    },
    notJudged: { gone: 0 },
    usage: { requests: 5, quotaUnits: 40 },
  });

  it('tags rows with their account, newest first, sums the counts and reports a failed account', () => {
    const merged = mergeFollowUps([
      { account: 'home', ok: true, result: result('a@home.example', '2026-11-20T00:00:00.000Z') },
      { account: 'work', ok: true, result: result('b@work.example', '2026-11-25T00:00:00.000Z') },
      { account: 'old', ok: false, error: { code: 'needs_reauth', message: 'sign in again' } },
    ]);
    expect(merged.awaitingReply.map((r) => r.account)).toEqual(['work', 'home']);
    expect(merged.scanned.sent).toMatchObject({ indexHits: 4, corrected: 2, moreMatched: false });
    expect(merged.scanned.inbox).toMatchObject({ moreMatched: true, bodiesRead: 2 });
    expect(merged.usage).toEqual({ requests: 10, quotaUnits: 80 });
    expect(merged.accounts).toEqual([
      { account: 'home', ok: true },
      { account: 'work', ok: true },
      { account: 'old', ok: false, error: { code: 'needs_reauth', message: 'sign in again' } },
    ]);
  });
});
