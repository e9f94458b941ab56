/**
 * follow_ups' judgement: who owes whom a reply, read from each thread's last word and its live
 * labels (an index hit proves nothing about where a thread is now; docs/facts.md). Pure.
 */
import { extractBody } from './body.js';
import { formatAddress, headerValue, parseAddressList } from './headers.js';
import { stripQuotedHistory } from './quotes.js';
import { messageSignals } from './signals.js';
import type { SignalName } from './signals.js';
import { header } from './summary.js';
import type { MailMessage, MailThread } from './types.js';
import { SIGNAL_HEADERS } from './vocabulary.js';

/** What the judgement reads from a metadata read (threads.get format=metadata). */
export const FOLLOW_UP_HEADERS: readonly string[] = [...SIGNAL_HEADERS, 'To', 'Cc', 'Bcc', 'Subject'];

export const DAY_MS = 86_400_000;

export interface JudgeContext {
  /** The mailbox's own address (getProfile), any case. */
  owner: string;
  now: number;
  /** Sender domains of everything read, for the lookalike check (signals.ts). */
  references: readonly string[];
}

export interface FollowUpItem {
  threadId: string;
  subject: string;
  counterpart: string;
  lastDate: string;
  daysWaiting: number;
  /** Out-of-office replies and bounces that came after the owner's message (not answers). */
  automatedRepliesAfter?: number;
  unread?: boolean;
}

const has = (m: MailMessage, label: string): boolean => m.labelIds.includes(label);
const automated = (m: MailMessage): boolean => messageSignals(m).present.includes('automated');

/**
 * The message a thread is waiting on: the newest one that is not a draft (a reply being written
 * has not been sent) and, after the owner's own message, not an automatic reply: RFC 3834 says
 * an auto-reply answers nothing, so an out-of-office or a bounce leaves the owner still waiting.
 */
export function lastWord(t: MailThread): { message: MailMessage; automatedAfter: number } | undefined {
  const real = t.messages.filter((m) => !has(m, 'DRAFT'));
  let i = real.length - 1;
  while (i > 0 && !has(real[i] as MailMessage, 'SENT') && automated(real[i] as MailMessage)) i--;
  const at = real[i];
  if (!at) return undefined;
  // Only an owner's message makes the skipped ones "replies after"; else the newest counts.
  if (!has(at, 'SENT')) {
    const newest = real[real.length - 1];
    return newest ? { message: newest, automatedAfter: 0 } : undefined;
  }
  return { message: at, automatedAfter: real.length - 1 - i };
}

function addresses(m: MailMessage, names: readonly string[]) {
  return names.flatMap((n) => parseAddressList(headerValue(m.headers, n) ?? ''));
}

/**
 * Everyone but the owner the message went to. Bcc counts too: Gmail keeps it on the sender's
 * copy, and "To: me, Bcc: the team" is a way of writing to the team.
 */
export function otherRecipients(m: MailMessage, owner: string) {
  const self = owner.toLowerCase();
  return addresses(m, ['To', 'Cc', 'Bcc']).filter((a) => a.address.toLowerCase() !== self);
}

const subjectOf = (t: MailThread, m: MailMessage): string =>
  header(t.messages[0]?.headers ?? m.headers, 'Subject') || header(m.headers, 'Subject');

function item(t: MailThread, m: MailMessage, counterpart: string, now: number): FollowUpItem {
  return {
    threadId: t.id,
    subject: subjectOf(t, m),
    counterpart,
    lastDate: new Date(m.internalDate).toISOString(),
    daysWaiting: Math.max(0, Math.floor((now - m.internalDate) / DAY_MS)),
  };
}

const inSpamOrTrash = (m: MailMessage): boolean => has(m, 'SPAM') || has(m, 'TRASH');

export type ReplySkip = 'empty' | 'notYours' | 'noteToSelf' | 'tooRecent' | 'tooOld' | 'spamOrTrash';

/** (a) The owner wrote last, `olderThanDays` or more ago (and within `withinDays`), to others. */
export function judgeAwaitingReply(
  t: MailThread,
  ctx: JudgeContext,
  window: { olderThanDays: number; withinDays: number },
): { item: FollowUpItem } | { skip: ReplySkip } {
  const last = lastWord(t);
  if (!last) return { skip: 'empty' };
  const m = last.message;
  if (!has(m, 'SENT')) return { skip: 'notYours' };
  if (inSpamOrTrash(m)) return { skip: 'spamOrTrash' };
  const age = ctx.now - m.internalDate;
  if (age < window.olderThanDays * DAY_MS) return { skip: 'tooRecent' };
  if (age > window.withinDays * DAY_MS) return { skip: 'tooOld' };
  const others = otherRecipients(m, ctx.owner);
  if (others.length === 0) return { skip: 'noteToSelf' };
  const counterpart = others.map((a) => formatAddress(a)).join(', ');
  const out = item(t, m, counterpart.length > 300 ? `${counterpart.slice(0, 299)}…` : counterpart, ctx.now);
  if (last.automatedAfter > 0) out.automatedRepliesAfter = last.automatedAfter;
  return { item: out };
}

export type YouSkip =
  'empty' | 'yours' | 'notInInbox' | 'newsletter' | 'automated' | 'notPersonal' | 'tooOld' | 'noQuestion';

/**
 * Gmail's own tabs for mail that is not correspondence. Its classifier sees far more than one
 * message's headers (a social network's "X replied: where was this taken?" has no list or robot
 * header); a provider without categories simply never sets them.
 */
const BULK_CATEGORIES = ['CATEGORY_PROMOTIONS', 'CATEGORY_SOCIAL', 'CATEGORY_UPDATES', 'CATEGORY_FORUMS'];
/** Mail that asks for an answer and would be dangerous to answer: set aside, never listed as waiting. */
export type Suspicion = 'replyToMismatch' | 'displayNameSpoof' | 'lookalikeDomain' | 'claimsYourAddress';

export type YouVerdict =
  | { kind: 'awaiting'; item: FollowUpItem }
  /** Passed every header and label test; the body decides (read the thread in full). */
  | { kind: 'needsBody' }
  | { kind: 'setAside'; reason: Suspicion; item: FollowUpItem }
  | { kind: 'skip'; reason: YouSkip };

const SUSPICIONS: ReadonlyArray<Extract<Suspicion, SignalName>> = [
  'replyToMismatch',
  'displayNameSpoof',
  'lookalikeDomain',
];

/**
 * (b) In the inbox, the last word is a person's (not a list, not a robot, not the owner) and it
 * asks something. `bodies`: whether the thread was read in full; without bodies a thread that
 * passes everything else is `needsBody`, so only those few cost a full read.
 */
export function judgeAwaitingYou(
  t: MailThread,
  ctx: JudgeContext,
  o: { withinDays: number; bodies: boolean },
): YouVerdict {
  const last = lastWord(t);
  if (!last) return { kind: 'skip', reason: 'empty' };
  const m = last.message;
  if (has(m, 'SENT')) return { kind: 'skip', reason: 'yours' };
  if (!has(m, 'INBOX') || inSpamOrTrash(m)) return { kind: 'skip', reason: 'notInInbox' };
  if (ctx.now - m.internalDate > o.withinDays * DAY_MS) return { kind: 'skip', reason: 'tooOld' };
  const signals = messageSignals(m, ctx.references).present;
  if (signals.includes('newsletter')) return { kind: 'skip', reason: 'newsletter' };
  if (signals.includes('automated')) return { kind: 'skip', reason: 'automated' };
  if (BULK_CATEGORIES.some((c) => has(m, c))) return { kind: 'skip', reason: 'notPersonal' };
  const from = parseAddressList(headerValue(m.headers, 'From') ?? '')[0];
  const found = item(t, m, header(m.headers, 'From'), ctx.now);
  if (has(m, 'UNREAD')) found.unread = true;
  const suspicion =
    SUSPICIONS.find((s) => signals.includes(s)) ??
    // Mail "from you" that this mailbox did not send is a classic scam opener, not a person.
    (from?.address.toLowerCase() === ctx.owner.toLowerCase() ? 'claimsYourAddress' : undefined);
  if (suspicion !== undefined) return { kind: 'setAside', reason: suspicion, item: found };
  if (!o.bodies) return { kind: 'needsBody' };
  return asksSomething(newText(m))
    ? { kind: 'awaiting', item: found }
    : { kind: 'skip', reason: 'noQuestion' };
}

/** Where a forwarded message starts (Gmail, Apple Mail, Outlook): its questions are not the sender's. */
const FORWARD_MARK =
  /^(?:-{5,}\s*Forwarded message\s*-{5,}|Begin forwarded message:|-{5,}\s*Original Message\s*-{5,})\s*$/im;

/** What the sender wrote themselves: quoted history, quoted lines and forwarded mail cut. */
export function newText(m: MailMessage): string {
  const text = stripQuotedHistory(extractBody(m.root).text).text;
  const mark = FORWARD_MARK.exec(text);
  const own = mark ? text.slice(0, mark.index) : text;
  return own
    .split(/\r?\n/)
    .filter((line) => !/^[ \t]*>/.test(line))
    .join('\n');
}

/**
 * A question mark in the sender's own words, in the scripts that have their own (fullwidth
 * U+FF1F, Arabic U+061F, Greek U+037E). Links are removed first: a URL's query string is not a
 * question.
 */
export function asksSomething(text: string): boolean {
  return /[?\uFF1F\u061F\u037E]/u.test(text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/giu, ' '));
}

interface Scanned {
  query: string;
  indexHits: number;
  corrected: number;
  moreMatched: boolean;
}

/** follow_ups' result, strings already fenced; `account` only on a fanned-out result. */
export interface FollowUpsResult {
  owner: string;
  asOf: string;
  awaitingReply: Array<FollowUpItem & { account?: string }>;
  awaitingYou: Array<FollowUpItem & { account?: string }>;
  setAside: Array<FollowUpItem & { reason: Suspicion; account?: string }>;
  scanned: { sent: Scanned; inbox: Scanned & { bodiesRead: number } };
  notJudged: { gone: number };
  usage: { requests: number; quotaUnits: number };
  accounts?: Array<{ account: string; ok: boolean; error?: { code: string; message: string } }>;
}

export type AccountPart =
  | { account: string; ok: true; result: FollowUpsResult }
  | { account: string; ok: false; error: { code: string; message: string } };

/** Newest first, as Gmail lists threads; ISO 8601 in UTC sorts as text. */
export function newestFirst<T extends { lastDate: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.lastDate < b.lastDate ? 1 : a.lastDate > b.lastDate ? -1 : 0));
}

/** account "all": one list each, newest first, every row tagged with its account; counts summed. */
export function mergeFollowUps(parts: readonly AccountPart[]): FollowUpsResult {
  const ok = parts.flatMap((p) => (p.ok ? [{ account: p.account, r: p.result }] : []));
  const tag = <T extends { lastDate: string }>(rows: (r: FollowUpsResult) => T[]) =>
    newestFirst(ok.flatMap(({ account, r }) => rows(r).map((row) => ({ ...row, account }))));
  const total = (n: (r: FollowUpsResult) => number): number => ok.reduce((s, { r }) => s + n(r), 0);
  const scan = (list: 'sent' | 'inbox'): Scanned => ({
    query: ok[0]?.r.scanned[list].query ?? '',
    indexHits: total((r) => r.scanned[list].indexHits),
    corrected: total((r) => r.scanned[list].corrected),
    moreMatched: ok.some(({ r }) => r.scanned[list].moreMatched),
  });
  return {
    owner: ok.map(({ r }) => r.owner).join(', '),
    asOf: ok[0]?.r.asOf ?? '',
    awaitingReply: tag((r) => r.awaitingReply),
    awaitingYou: tag((r) => r.awaitingYou),
    setAside: tag((r) => r.setAside),
    scanned: {
      sent: scan('sent'),
      inbox: { ...scan('inbox'), bodiesRead: total((r) => r.scanned.inbox.bodiesRead) },
    },
    notJudged: { gone: total((r) => r.notJudged.gone) },
    usage: { requests: total((r) => r.usage.requests), quotaUnits: total((r) => r.usage.quotaUnits) },
    accounts: parts.map((p) =>
      p.ok
        ? { account: p.account, ok: true }
        : { account: p.account, ok: false, error: { code: p.error.code, message: p.error.message } },
    ),
  };
}
