/**
 * Assembles threads of RFC 822 messages and tallies the facts while doing so. Dates are offsets
 * back from `now`, so a different `now` moves every date and changes nothing else.
 */
import type { SeedMessage, SeedThread, SeedUser } from '../seed.js';
import { alignedAuth, dkimSignature, domainOf, gmailTrace, type AuthSpec } from './auth.js';
import { LIST_KEYS, SINGLE_KEYS, type DemoFacts, type DemoKeys, type ListKey, type SingleKey } from './facts.js';
import type { UnsubscribeFact } from './facts.js';
import {
  formatDate,
  formatMailbox,
  formatMailboxes,
  headerText,
  serializeEntity,
  type Entity,
  type Header,
  type Person,
} from './mime.js';
import { OWNER, USER_LABELS } from './people.js';
import { Rng } from './rng.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type Box = 'inbox' | 'archive' | 'spam' | 'trash' | 'sent';
export type Category =
  | 'CATEGORY_PERSONAL'
  | 'CATEGORY_SOCIAL'
  | 'CATEGORY_PROMOTIONS'
  | 'CATEGORY_UPDATES'
  | 'CATEGORY_FORUMS';

export interface ThreadOptions {
  /** Where the thread lives; 'sent' = only the owner's messages, nothing received yet. */
  box: Box;
  category?: Category;
  /** User label ids, put on every message. */
  labels?: string[];
  important?: boolean;
  starred?: boolean;
  staleIndexUnread?: boolean;
}

export interface ReceiveSpec {
  from: Person;
  at: number;
  body: Entity;
  to?: Person[];
  cc?: Person[];
  /** Subject text (encoded when not ASCII); replies default to "Re: " + the first subject. */
  subject?: string;
  /** Exact Subject value: encoded-words in some charset, or deliberate 8-bit bytes. */
  subjectHeader?: string;
  /** Exact From value, for display-name tricks and 8-bit addresses. */
  fromHeader?: string;
  toHeader?: string;
  replyTo?: Person;
  /** Sender headers after Message-ID (List-*, Auto-Submitted, Precedence…). */
  headers?: Header[];
  /** Sender-side headers below Gmail's trace and above From (their Received lines, forgeries). */
  lower?: Header[];
  /** Verdicts Gmail recorded; default aligned pass. null = no Authentication-Results at all. */
  auth?: AuthSpec | null;
  /** Replaces Gmail's trace block (e.g. mail fetched over POP). */
  trace?: Header[];
  unread?: boolean;
  /** Host part of the Message-ID; defaults to the From domain. */
  idHost?: string;
  /** Start a new conversation: no In-Reply-To/References even though the thread has mail. */
  fresh?: boolean;
}

export interface SendSpec {
  to: Person[];
  at: number;
  body: Entity;
  cc?: Person[];
  subject?: string;
  headers?: Header[];
  /** A note the owner mailed to themself: lands in INBOX as well as SENT. */
  selfNote?: boolean;
  unread?: boolean;
}

const stripRe = (s: string): string => s.replace(/^((re|fwd?|aw|sv)(\[\d+\])?:\s*)+/i, '');

export class ThreadWriter {
  readonly messages: SeedMessage[] = [];
  readonly unread: boolean[] = [];
  private readonly ids: string[] = [];
  private firstSubject: string | undefined;
  sentCount = 0;
  receivedCount = 0;

  constructor(
    private readonly b: CorpusBuilder,
    readonly key: string,
    readonly opts: ThreadOptions,
  ) {}

  get lastAt(): number {
    return this.messages.at(-1)?.internalDate ?? 0;
  }

  private subjectFor(subject: string | undefined): string {
    if (this.firstSubject === undefined) {
      if (subject === undefined) throw new Error(`${this.key}: first message needs a subject`);
      this.firstSubject = subject;
      return subject;
    }
    return subject ?? `Re: ${stripRe(this.firstSubject)}`;
  }

  private threading(fresh: boolean | undefined): Header[] {
    const last = this.ids.at(-1);
    if (fresh || last === undefined) return [];
    return [
      ['In-Reply-To', last],
      ['References', this.ids.slice(-8).join('\n ')],
    ];
  }

  private push(raw: string, labels: string[], at: number, unread: boolean, id: string): void {
    if (at <= this.lastAt) throw new Error(`${this.key}: dates must increase within a thread`);
    if (at >= this.b.now || at < this.b.now - 130 * DAY) throw new Error(`${this.key}: date out of range`);
    if (at % SECOND !== 0) throw new Error(`${this.key}: dates are whole seconds`);
    const crlf = raw.replace(/\r?\n/g, '\r\n');
    if (/[^\x00-\xff]/.test(crlf)) throw new Error(`${this.key}: raw must be one char per byte`);
    this.messages.push({ raw: crlf, labelIds: labels, internalDate: at });
    this.unread.push(unread);
    this.ids.push(id);
  }

  private labelsFor(received: boolean, unread: boolean): string[] {
    const o = this.opts;
    const out: string[] = [];
    if (o.box === 'spam') out.push('SPAM');
    else {
      if (received && o.box === 'inbox') out.push('INBOX');
      if (received && o.category) out.push(o.category);
      if (o.box === 'trash') out.push('TRASH');
      out.push(...(o.labels ?? []));
    }
    if (!received) out.unshift('SENT');
    if (unread) out.push('UNREAD');
    if (o.important && o.box !== 'spam') out.push('IMPORTANT');
    if (o.starred && received && o.box !== 'spam' && o.box !== 'trash') out.push('STARRED');
    return out;
  }

  receive(s: ReceiveSpec): this {
    if (this.opts.box === 'sent') throw new Error(`${this.key}: a 'sent' thread receives nothing`);
    const rng = this.b.ids;
    const fromDomain = domainOf(s.from.email);
    const auth = s.auth === undefined ? alignedAuth(s.from.email) : s.auth;
    const id = `<${rng.alnum(10)}.${rng.hex(8)}@${s.idHost ?? fromDomain}>`;
    const trace = s.trace ?? gmailTrace(OWNER.email, s.at, auth, rng, `mail.${fromDomain}`);
    const dkim: Header[] = (auth?.dkim ?? [])
      .filter((k) => k.result !== 'none')
      .map((k) => ['DKIM-Signature', dkimSignature(k.d, k.s, rng)]);
    const headers: Header[] = [
      ...trace,
      ...dkim,
      ...(s.lower ?? []),
      ['From', s.fromHeader ?? formatMailbox(s.from)],
      ['To', s.toHeader ?? formatMailboxes(s.to ?? [OWNER])],
    ];
    if (s.cc?.length) headers.push(['Cc', formatMailboxes(s.cc)]);
    if (s.replyTo) headers.push(['Reply-To', formatMailbox(s.replyTo)]);
    const subject = this.subjectFor(s.subject);
    headers.push(
      ['Subject', s.subjectHeader ?? headerText(subject)],
      ['Date', formatDate(s.at, s.from.tz ?? 0)],
      ['Message-ID', id],
      ...this.threading(s.fresh),
      ...(s.headers ?? []),
      ['MIME-Version', '1.0'],
    );
    const unread = s.unread ?? false;
    this.push(serializeEntity({ headers: [...headers, ...s.body.headers], body: s.body.body }), this.labelsFor(true, unread), s.at, unread, id);
    this.receivedCount++;
    return this;
  }

  send(s: SendSpec): this {
    const rng = this.b.ids;
    const id = `<CA${rng.alnum(3)}+${rng.alnum(28)}@mail.gmail.com>`;
    const headers: Header[] = [
      ['MIME-Version', '1.0'],
      ['Date', formatDate(s.at, OWNER.tz ?? 0)],
      ...this.threading(false),
      ['Message-ID', id],
      ['Subject', headerText(this.subjectFor(s.subject))],
      ['From', formatMailbox(OWNER)],
      ['To', formatMailboxes(s.to)],
    ];
    if (s.cc?.length) headers.push(['Cc', formatMailboxes(s.cc)]);
    headers.push(...(s.headers ?? []));
    const unread = s.unread ?? false;
    const labels = this.labelsFor(false, unread);
    if (s.selfNote) labels.splice(1, 0, 'INBOX', 'CATEGORY_PERSONAL');
    this.push(serializeEntity({ headers: [...headers, ...s.body.headers], body: s.body.body }), labels, s.at, unread, id);
    if (s.selfNote) this.receivedCount++;
    else this.sentCount++;
    return this;
  }
}

export class CorpusBuilder {
  readonly now: number;
  /** Ids, tokens and signatures: one stream consumed in thread order. */
  readonly ids = new Rng('mailwarden-demo/ids');
  private readonly threads: SeedThread[] = [];
  private readonly single = new Map<SingleKey, string>();
  private readonly lists = new Map<ListKey, string[]>(LIST_KEYS.map((k) => [k, []]));
  private readonly t = {
    messages: 0,
    sent: 0,
    inbox: 0,
    unreadInbox: 0,
    spam: 0,
    trash: 0,
    updates: 0,
    stale: [] as string[],
    trueUnreadUpdates: [] as string[],
    labels: new Map<string, number>(USER_LABELS.map((l) => [l.id, 0])),
    eightBit: [] as string[],
  };
  readonly unsubscribe: Record<string, UnsubscribeFact> = {};
  readonly expectedText: Record<string, { subject: string; body: string }> = {};
  dmarcFiles = { zip: '', gzip: '', xmlInZip: '' };

  constructor(now: number) {
    this.now = Math.floor(now / SECOND) * SECOND;
  }

  rng(theme: string): Rng {
    return new Rng(`mailwarden-demo/${theme}`);
  }

  /** A moment `days` (fractions allowed) plus hours/minutes before now, in whole seconds. */
  ago(days: number, hours = 0, minutes = 0): number {
    return this.now - Math.round((days * DAY + hours * HOUR + minutes * MINUTE) / SECOND) * SECOND;
  }

  thread(key: string, opts: ThreadOptions, build: (t: ThreadWriter) => void): string {
    if (this.threads.some((th) => th.key === key)) throw new Error(`duplicate thread key ${key}`);
    const w = new ThreadWriter(this, key, opts);
    build(w);
    if (w.messages.length === 0) throw new Error(`${key}: empty thread`);
    const anyUnread = w.unread.some(Boolean);
    if (opts.box === 'inbox' && w.receivedCount === 0) throw new Error(`${key}: inbox thread without INBOX mail`);
    if (opts.box === 'sent' && opts.category) throw new Error(`${key}: sent-only threads have no category`);
    const t = this.t;
    t.messages += w.messages.length;
    t.sent += w.sentCount;
    if (opts.box === 'inbox') t.inbox++;
    if (opts.box === 'inbox' && anyUnread) t.unreadInbox++;
    if (opts.box === 'spam') t.spam++;
    if (opts.box === 'trash') t.trash++;
    if (opts.category === 'CATEGORY_UPDATES') {
      if (opts.box !== 'inbox') throw new Error(`${key}: updates threads live in INBOX`);
      t.updates++;
      if (anyUnread) t.trueUnreadUpdates.push(key);
    }
    if (opts.staleIndexUnread) {
      if (opts.category !== 'CATEGORY_UPDATES' || anyUnread) throw new Error(`${key}: stale set is read updates`);
      t.stale.push(key);
    }
    for (const l of opts.labels ?? []) {
      const n = t.labels.get(l);
      if (n === undefined) throw new Error(`${key}: unknown label ${l}`);
      t.labels.set(l, n + 1);
    }
    const thread: SeedThread = { key, messages: w.messages };
    if (opts.staleIndexUnread) thread.staleIndexUnread = true;
    this.threads.push(thread);
    return key;
  }

  mark(name: SingleKey, key: string): string {
    if (this.single.has(name)) throw new Error(`key ${name} set twice`);
    this.single.set(name, key);
    return key;
  }

  add(name: ListKey, key: string): string {
    this.lists.get(name)?.push(key);
    return key;
  }

  eightBit(key: string): void {
    this.t.eightBit.push(key);
  }

  finish(): { user: SeedUser; facts: DemoFacts } {
    const keys = {} as Record<string, string | string[]>;
    for (const k of SINGLE_KEYS) {
      const v = this.single.get(k);
      if (v === undefined) throw new Error(`scenario ${k} missing`);
      keys[k] = v;
    }
    for (const k of LIST_KEYS) {
      const v = this.lists.get(k) ?? [];
      if (v.length === 0) throw new Error(`scenario list ${k} empty`);
      keys[k] = v;
    }
    const t = this.t;
    const facts: DemoFacts = {
      address: OWNER.email,
      now: this.now,
      threadCount: this.threads.length,
      messageCount: t.messages,
      sentMessageCount: t.sent,
      inboxThreadCount: t.inbox,
      unreadInboxThreadCount: t.unreadInbox,
      spamThreadCount: t.spam,
      trashThreadCount: t.trash,
      updatesThreadCount: t.updates,
      staleUnreadKeys: t.stale,
      trueUnreadUpdatesKeys: t.trueUnreadUpdates,
      labelThreadCounts: Object.fromEntries(t.labels),
      keys: keys as DemoKeys,
      eightBitHeaderKeys: t.eightBit,
      unsubscribe: this.unsubscribe,
      expectedText: this.expectedText,
      dmarcFiles: this.dmarcFiles,
    };
    return { user: { email: OWNER.email, userLabels: USER_LABELS.map((l) => ({ ...l })), threads: this.threads }, facts };
  }
}
