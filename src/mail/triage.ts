/**
 * triage_digest's reasoning: a few facts per thread, read from headers and live labels (and from
 * the MIME tree only where the top-level type says attachments or invites could be there), then
 * counts a reader can decide with. A structure for deciding, not a list of threads: every bucket
 * carries at most a few example thread ids. Pure.
 */
import { listAttachments } from './body.js';
import { headerValue, parseAddressList } from './headers.js';
import { hasCalendar, messageSignals, SIGNAL_NAMES } from './signals.js';
import type { SignalName } from './signals.js';
import type { MailMessage, MailThread } from './types.js';
import { SIGNAL_HEADERS } from './vocabulary.js';

/** What the signals need from a metadata read (threads.get format=metadata). */
export const TRIAGE_HEADERS: readonly string[] = SIGNAL_HEADERS;

const DAY_MS = 86_400_000;

/**
 * Top-level types whose children are body text and inline images only. Attachments sit under
 * multipart/mixed (RFC 2046 §5.1.3), delivery reports under multipart/report (RFC 6522), and
 * invites under multipart/mixed as Google and Thunderbird send them. Outlook puts text/calendar
 * inside multipart/alternative, but marks it with Content-Class: urn:content-classes:calendarmessage.
 */
const TEXT_ONLY_CONTAINERS = new Set(['multipart/alternative', 'multipart/related']);

function topType(m: MailMessage): string {
  // The Gmail converter's default when payload.mimeType is missing; the header then decides.
  if (m.root.mimeType !== 'application/octet-stream') return m.root.mimeType;
  const ct = headerValue(m.headers, 'Content-Type');
  return ct === undefined ? m.root.mimeType : (ct.split(';')[0] ?? '').trim().toLowerCase();
}

/** A metadata read leaves the tree closed; true when its parts could change the answer. */
export function partsHidden(m: MailMessage): boolean {
  if (m.root.children.length > 0) return false;
  if (/calendarmessage/i.test(headerValue(m.headers, 'Content-Class') ?? '')) return true;
  const type = topType(m);
  return type.startsWith('multipart/') && !TEXT_ONLY_CONTAINERS.has(type);
}

export function threadNeedsParts(t: MailThread): boolean {
  return t.messages.some(partsHidden);
}

export interface ThreadFacts {
  threadId: string;
  sender: { address: string; name: string };
  /** Newest message, ms. */
  lastAt: number;
  unread: boolean;
  /** Live label ids on any message, UNREAD left out (it is counted apart). */
  labelIds: string[];
  signals: SignalName[];
  /** A non-inline attachment was seen; see partsRead for whether one could be unseen. */
  attachment: boolean;
  /** false: the top-level type said attachments or an invite could be there, unread. */
  partsRead: boolean;
}

const sent = (m: MailMessage): boolean => m.labelIds.includes('SENT');

/**
 * What kind of mail a thread is (newsletter, automated) follows who started it, as in
 * list_subscriptions; what could hurt (spoofing, lookalikes, an invite) counts from any received
 * message, because an attacker can join a thread late. The owner's own messages are left out of
 * both unless the thread has nothing else.
 */
export function threadFacts(t: MailThread, references: readonly string[]): ThreadFacts {
  const received = t.messages.filter((m) => !sent(m));
  const judged = received.length > 0 ? received : t.messages;
  const starter = judged[0];
  const fromValue = starter ? (headerValue(starter.headers, 'From') ?? '') : '';
  const from = parseAddressList(fromValue)[0];
  const present = new Set<SignalName>();
  if (starter) for (const s of messageSignals(starter, references).present) present.add(s);
  for (const m of judged.slice(1)) {
    for (const s of messageSignals(m, references).present)
      if (s !== 'newsletter' && s !== 'automated') present.add(s);
  }
  // On a closed tree these find only what the top-level type shows; partsRead says whether
  // anything could be missing.
  if (judged.some((m) => hasCalendar(m.root))) present.add('calendar');
  const labelIds = new Set<string>();
  for (const m of t.messages) for (const id of m.labelIds) if (id !== 'UNREAD') labelIds.add(id);
  return {
    threadId: t.id,
    sender: { address: (from?.address ?? '').toLowerCase(), name: from?.name ?? '' },
    lastAt: Math.max(0, ...t.messages.map((m) => m.internalDate)),
    unread: t.messages.some((m) => m.labelIds.includes('UNREAD')),
    labelIds: [...labelIds],
    signals: SIGNAL_NAMES.filter((s) => present.has(s)),
    attachment: t.messages.some((m) => listAttachments(m.root).some((a) => !a.inline)),
    partsRead: !threadNeedsParts(t),
  };
}

export interface Tally {
  threads: number;
  examples: string[];
}
export interface Bucket extends Tally {
  unread: number;
}
export type AgeName = 'today' | 'thisWeek' | 'thisMonth' | 'older';

export interface SenderRow extends Bucket {
  address: string;
  name: string;
  lastDate: string;
  signals: Partial<Record<SignalName, number>>;
}

export interface Digest {
  threads: number;
  unread: Tally;
  attachments: Tally;
  signals: Record<SignalName, Bucket>;
  ages: Record<AgeName, Bucket>;
  labels: Array<Bucket & { label: string }>;
  labelsFound: number;
  senders: SenderRow[];
  sendersFound: number;
  /** Threads whose attachments and invites were not looked for (their parts were not read). */
  partsNotRead: number;
}

export interface DigestOptions {
  now: number;
  topSenders: number;
  maxLabels: number;
  labelName: (id: string) => string;
  /** Example thread ids per bucket. */
  examples?: number;
}

/**
 * Rolling windows from the newest message, so each bucket is also a query the reader can run
 * next (newer_than:1d, newer_than:7d, newer_than:30d, older_than:30d).
 */
export function ageOf(lastAt: number, now: number): AgeName {
  const age = now - lastAt;
  if (age < DAY_MS) return 'today';
  if (age < 7 * DAY_MS) return 'thisWeek';
  if (age < 30 * DAY_MS) return 'thisMonth';
  return 'older';
}

const tally = (): Tally => ({ threads: 0, examples: [] });
const bucket = (): Bucket => ({ threads: 0, unread: 0, examples: [] });

function count(t: Tally, threadId: string, max: number): void {
  t.threads++;
  if (t.examples.length < max) t.examples.push(threadId);
}

function countBucket(b: Bucket, f: ThreadFacts, max: number): void {
  count(b, f.threadId, max);
  if (f.unread) b.unread++;
}

/** `facts` in listing order (newest first), so examples are the newest of each bucket. */
export function aggregateDigest(facts: readonly ThreadFacts[], o: DigestOptions): Digest {
  const max = o.examples ?? 3;
  const unread = tally();
  const attachments = tally();
  const signals = Object.fromEntries(SIGNAL_NAMES.map((s) => [s, bucket()])) as Record<SignalName, Bucket>;
  const ages: Record<AgeName, Bucket> = {
    today: bucket(),
    thisWeek: bucket(),
    thisMonth: bucket(),
    older: bucket(),
  };
  const labels = new Map<string, Bucket>();
  const senders = new Map<string, SenderRow & { lastAt: number }>();
  let partsNotRead = 0;
  for (const f of facts) {
    if (f.unread) count(unread, f.threadId, max);
    if (f.attachment) count(attachments, f.threadId, max);
    if (!f.partsRead) partsNotRead++;
    for (const s of f.signals) countBucket(signals[s], f, max);
    countBucket(ages[ageOf(f.lastAt, o.now)], f, max);
    for (const id of f.labelIds) {
      const b = labels.get(id) ?? bucket();
      countBucket(b, f, max);
      labels.set(id, b);
    }
    const row = senders.get(f.sender.address) ?? {
      ...bucket(),
      address: f.sender.address,
      name: f.sender.name,
      lastDate: '',
      lastAt: 0,
      signals: {},
    };
    countBucket(row, f, max);
    row.lastAt = Math.max(row.lastAt, f.lastAt);
    for (const s of f.signals) row.signals[s] = (row.signals[s] ?? 0) + 1;
    senders.set(f.sender.address, row);
  }
  const labelRows = [...labels.entries()]
    .map(([id, b]) => ({ label: o.labelName(id), ...b }))
    .sort((a, b) => b.threads - a.threads || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const senderRows = [...senders.values()].sort((a, b) => b.threads - a.threads || b.lastAt - a.lastAt);
  return {
    threads: facts.length,
    unread,
    attachments,
    signals,
    ages,
    labels: labelRows.slice(0, o.maxLabels),
    labelsFound: labelRows.length,
    senders: senderRows.slice(0, o.topSenders).map(({ lastAt, ...row }) => ({
      ...row,
      lastDate: new Date(lastAt).toISOString(),
    })),
    sendersFound: senderRows.length,
    partsNotRead,
  };
}
