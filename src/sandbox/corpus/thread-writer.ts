/**
 * One thread being written: message headers in the order Gmail stores them, threading headers,
 * Gmail label ids per message, and the checks that keep the corpus honest (dates increase, stay
 * in range and whole seconds; raw text is one char per byte).
 */
import type { SeedMessage } from '../seed.js';
import { alignedAuth, dkimSignature, domainOf, gmailTrace, type AuthSpec } from './auth.js';
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
import { OWNER } from './people.js';
import type { Rng } from './rng.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type Box = 'inbox' | 'archive' | 'spam' | 'trash' | 'sent';
export type Category =
  'CATEGORY_PERSONAL' | 'CATEGORY_SOCIAL' | 'CATEGORY_PROMOTIONS' | 'CATEGORY_UPDATES' | 'CATEGORY_FORUMS';

export interface ThreadOptions {
  /** Where the thread lives; 'sent' = only the owner's messages, nothing received yet. */
  box: Box;
  category?: Category;
  /** User label ids, put on every message. */
  labels?: readonly string[];
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
  /**
   * How the message reached the mailbox (default smtp: Gmail's trace and report on top).
   * import: no header of Gmail's at all (mail uploaded from an old mailbox); pop: see `trace`.
   */
  via?: 'smtp' | 'import';
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

/** What a thread needs from the corpus being built. */
export interface ThreadHost {
  readonly now: number;
  /** Ids, tokens and signatures: one stream consumed in thread order. */
  readonly ids: Rng;
}

const stripRe = (s: string): string => s.replace(/^((re|fwd?|aw|sv)(\[\d+\])?:\s*)+/i, '');

export class ThreadWriter {
  readonly messages: SeedMessage[] = [];
  readonly unread: boolean[] = [];
  private readonly ids: string[] = [];
  private firstSubject: string | undefined;
  sentCount = 0;
  /** Messages delivered into the mailbox: received ones and notes to self. */
  deliveredCount = 0;

  constructor(
    private readonly b: ThreadHost,
    readonly key: string,
    readonly opts: ThreadOptions,
  ) {}

  get lastMessageId(): string | undefined {
    return this.ids.at(-1);
  }

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
    if (/[\u0100-\uffff]/.test(crlf)) throw new Error(`${this.key}: raw must be one char per byte`);
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
    const trace =
      s.trace ?? (s.via === 'import' ? [] : gmailTrace(OWNER.email, s.at, auth, rng, `mail.${fromDomain}`));
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
    this.push(
      serializeEntity({ headers: [...headers, ...s.body.headers], body: s.body.body }),
      this.labelsFor(true, unread),
      s.at,
      unread,
      id,
    );
    this.deliveredCount++;
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
    this.push(
      serializeEntity({ headers: [...headers, ...s.body.headers], body: s.body.body }),
      labels,
      s.at,
      unread,
      id,
    );
    this.sentCount++;
    if (s.selfNote) this.deliveredCount++;
    return this;
  }
}
