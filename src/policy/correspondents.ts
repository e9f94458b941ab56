import type { Clock } from '../mail/clock.js';
import { systemClock } from '../mail/clock.js';
import { decodeDomain } from '../mail/domains.js';
import { MailError, isMailError } from '../mail/errors.js';
import { headerValues, parseAddressList } from '../mail/headers.js';
import type { Mailbox } from '../providers/mailbox.js';
import { senderRuleMatches } from './write-policy.js';

/**
 * Protected correspondents: everyone in To or Cc of mail the user sent in the last N days. The
 * agent never moves their mail out of the inbox. docs/architecture.md, promise 2 allows this one piece of
 * learnt state, so it is short-lived and bounded: held in memory only (never written to disk),
 * re-learnt from the live Sent folder at most every `refreshMinutes`, capped at `maxAddresses`.
 */

/**
 * The optional Mailbox method this would like providers to offer: the To and Cc addresses
 * (addr-specs, any case, repeats allowed) of messages in Sent from the last `days` days, newest
 * first. IMAP: one UID SEARCH SINCE in the Sent folder and one FETCH of
 * BODY.PEEK[HEADER.FIELDS (TO CC)]; Gmail: messages.list q=in:sent newer_than:Nd and a
 * format=metadata get per message (5 units each, batched). Without it the set falls back to
 * searchMessages + getThread(metadata), which costs a thread read per conversation.
 */
export interface SentRecipientsSource {
  /** With the Sent version the read saw, where the source has sentVersion. */
  sentRecipients?(days: number, signal?: AbortSignal): Promise<string[] | SentRecipients>;
  /**
   * A token that changes whenever the Sent folder gains or loses a message (IMAP: its
   * UIDVALIDITY, UIDNEXT and MESSAGES, one STATUS). With it the set is learnt again as soon as
   * Sent changed, not only when the refresh interval ends.
   */
  sentVersion?(signal?: AbortSignal): Promise<string | undefined>;
}

export interface SentRecipients {
  addresses: string[];
  version?: string;
}

export type CorrespondentMailbox = Pick<Mailbox, 'searchMessages' | 'getThread'> & {
  readonly batchesReads?: boolean;
} & SentRecipientsSource;

export interface CorrespondentOptions {
  days: number;
  refreshMinutes: number;
  clock?: Clock;
  /** Most recent first; beyond it older correspondents are not protected (status().truncated). */
  maxAddresses?: number;
  /** Fallback only: conversations read per refresh, newest first. */
  maxThreads?: number;
  /** A refresh that takes longer is abandoned (the previous set, if any, stays). */
  timeoutMs?: number;
}

export const MAX_CORRESPONDENTS = 20_000;
export const MAX_SENT_THREADS = 1_000;
/** After a failed refresh with a set in hand, the next attempt waits this long. */
const RETRY_AFTER_FAILURE_MS = 60_000;

/** What the gate needs: does mail from this address stay in the inbox? */
export interface CorrespondentCheck {
  has(address: string): Promise<boolean>;
  /**
   * Learns the set now if it is due or Sent changed, so a slow refresh happens outside the write
   * lock. `call`: the tool call asking; a second ask in the same call trusts the first answer.
   */
  warm?(call?: object): Promise<void>;
  /** Whether a sender rule (an address, or a domain and its subdomains) covers a correspondent. */
  covers?(rule: string): Promise<boolean>;
}

export interface CorrespondentStatus {
  addresses: number;
  truncated: boolean;
  refreshedAt?: string;
  via?: 'sentRecipients' | 'threads';
  lastError?: string;
}

/** Whole-address, case-insensitive; IDNA A-labels and U-labels compare equal. "" if no address. */
export function normalizeCorrespondent(address: string): string {
  const s = address.trim().replace(/^<|>$/g, '');
  const at = s.lastIndexOf('@');
  if (at <= 0 || at === s.length - 1) return '';
  return `${s.slice(0, at).toLowerCase()}@${decodeDomain(s.slice(at + 1)).unicode}`;
}

export class CorrespondentSet implements CorrespondentCheck {
  private addresses: Set<string> | undefined;
  private truncated = false;
  private via: CorrespondentStatus['via'];
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private failedAt = Number.NEGATIVE_INFINITY;
  private lastError: string | undefined;
  private inflight: Promise<void> | undefined;
  /** The Sent version the set was learnt at (sentVersion), when the source offers one. */
  private learntAt: string | undefined;
  /** Calls whose Sent check is done (weak: a call's key is its AbortSignal). */
  private readonly checkedIn = new WeakSet<object>();
  private days: number;
  private refreshMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly source: CorrespondentMailbox | (() => Promise<CorrespondentMailbox>),
    private readonly options: CorrespondentOptions,
  ) {
    this.days = options.days;
    this.refreshMs = options.refreshMinutes * 60_000;
    this.clock = options.clock ?? systemClock;
  }

  /** Follows a changed policy; a different window of days drops what was learnt. */
  configure(days: number, refreshMinutes: number): void {
    if (days !== this.days) this.invalidate();
    this.days = days;
    this.refreshMs = refreshMinutes * 60_000;
  }

  invalidate(): void {
    this.refreshedAt = Number.NEGATIVE_INFINITY;
    this.addresses = undefined;
    this.learntAt = undefined;
  }

  /**
   * Before a move out is judged: where the source can say whether Sent changed, ask it (one
   * STATUS on IMAP), and learn the set again when it did — a message sent a moment ago from
   * another client protects its recipients in this very call.
   */
  async warm(call?: object): Promise<void> {
    const mailbox = typeof this.source === 'function' ? await this.source() : this.source;
    const asked = call !== undefined && this.checkedIn.has(call);
    if (call !== undefined) this.checkedIn.add(call);
    if (!asked && this.addresses !== undefined && mailbox.sentVersion !== undefined) {
      const version = await mailbox.sentVersion();
      if (version === undefined || version !== this.learntAt) this.refreshedAt = Number.NEGATIVE_INFINITY;
      // A failed refresh must not wait out RETRY_AFTER_FAILURE_MS when Sent has changed.
      if (version !== this.learntAt) this.failedAt = Number.NEGATIVE_INFINITY;
    }
    await this.current();
  }

  async has(address: string): Promise<boolean> {
    const a = normalizeCorrespondent(address);
    return a !== '' && (await this.current()).has(a);
  }

  async covers(rule: string): Promise<boolean> {
    for (const a of await this.current()) if (senderRuleMatches(rule, a)) return true;
    return false;
  }

  /** True when any From address is a correspondent, or there is none (who sent it is unknown). */
  async protects(fromHeader: string): Promise<boolean> {
    const list = parseAddressList(fromHeader)
      .map((a) => normalizeCorrespondent(a.address))
      .filter((a) => a !== '');
    if (list.length === 0) return true;
    const set = await this.current();
    return list.some((a) => set.has(a));
  }

  status(): CorrespondentStatus {
    const out: CorrespondentStatus = { addresses: this.addresses?.size ?? 0, truncated: this.truncated };
    if (Number.isFinite(this.refreshedAt)) out.refreshedAt = new Date(this.refreshedAt).toISOString();
    if (this.via !== undefined) out.via = this.via;
    if (this.lastError !== undefined) out.lastError = this.lastError;
    return out;
  }

  private async current(): Promise<Set<string>> {
    const now = this.clock.now();
    const due = now - this.refreshedAt >= this.refreshMs;
    if (this.addresses && (!due || now - this.failedAt < RETRY_AFTER_FAILURE_MS)) return this.addresses;
    this.inflight ??= this.refresh(now).finally(() => (this.inflight = undefined));
    try {
      await this.inflight;
    } catch (e) {
      // A set learnt earlier still protects the people it names; better than moving nothing.
      if (this.addresses) return this.addresses;
      const why = e instanceof Error ? e.message : String(e);
      throw new MailError(
        isMailError(e) && e.retryable ? e.code : 'upstream_unavailable',
        `moves out of the inbox wait for the list of protected correspondents, which could not be learnt from the Sent folder (${why}); nothing was moved, try again`,
        { retryable: true, cause: e },
      );
    }
    if (!this.addresses) throw new MailError('internal_error', 'protected correspondents were not learnt');
    return this.addresses;
  }

  private async refresh(startedAt: number): Promise<void> {
    const signal = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
    const max = this.options.maxAddresses ?? MAX_CORRESPONDENTS;
    const out = new Set<string>();
    let truncated = false;
    const add = (raw: string): boolean => {
      const parts = /[<>,:;"(\s]/.test(raw.trim()) ? parseAddressList(raw).map((a) => a.address) : [raw];
      for (const p of parts) {
        const a = normalizeCorrespondent(p);
        if (a === '' || out.has(a)) continue;
        if (out.size >= max) {
          truncated = true;
          return false;
        }
        out.add(a);
      }
      return true;
    };
    try {
      const mailbox = typeof this.source === 'function' ? await this.source() : this.source;
      let via: CorrespondentStatus['via'];
      let version: string | undefined;
      if (mailbox.sentRecipients) {
        via = 'sentRecipients';
        const got = await mailbox.sentRecipients(this.days, signal);
        const list = Array.isArray(got) ? got : got.addresses;
        if (!Array.isArray(got)) version = got.version;
        for (const a of list) if (!add(a)) break;
      } else {
        via = 'threads';
        truncated = await this.fromThreads(mailbox, startedAt, signal, add);
      }
      this.addresses = out;
      this.learntAt = version;
      this.truncated = truncated;
      this.via = via;
      this.refreshedAt = startedAt;
      this.lastError = undefined;
    } catch (e) {
      this.failedAt = startedAt;
      this.lastError = e instanceof Error ? e.message : String(e);
      throw e;
    }
  }

  /** The fallback: Sent's conversations, newest first, read as headers only. True if cut short. */
  private async fromThreads(
    mailbox: CorrespondentMailbox,
    now: number,
    signal: AbortSignal,
    add: (raw: string) => boolean,
  ): Promise<boolean> {
    const maxThreads = this.options.maxThreads ?? MAX_SENT_THREADS;
    const query = `in:sent newer_than:${this.days}d`;
    const threadIds: string[] = [];
    const seen = new Set<string>();
    let truncated = false;
    let pageToken: string | undefined;
    do {
      const page = await mailbox.searchMessages(query, {
        maxResults: 500,
        signal,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      for (const ref of page.items) {
        if (seen.has(ref.threadId)) continue;
        if (threadIds.length >= maxThreads) {
          truncated = true;
          break;
        }
        seen.add(ref.threadId);
        threadIds.push(ref.threadId);
      }
      pageToken = truncated ? undefined : page.nextPageToken;
    } while (pageToken !== undefined);
    const since = now - this.days * 86_400_000;
    // A provider that answers concurrent reads together wants them all at once (mailbox.ts).
    const width = mailbox.batchesReads === true ? 100 : 8;
    for (let i = 0; i < threadIds.length; i += width) {
      const threads = await Promise.all(
        threadIds
          .slice(i, i + width)
          .map((id) => mailbox.getThread(id, { format: 'metadata', metadataHeaders: ['To', 'Cc'], signal })),
      );
      for (const t of threads) {
        // Only what the user wrote: the other messages of a conversation name people they did not.
        for (const m of [...t.messages].reverse()) {
          if (!m.labelIds.includes('SENT') || m.internalDate < since) continue;
          for (const v of [...headerValues(m.headers, 'To'), ...headerValues(m.headers, 'Cc')])
            if (!add(v)) return true;
        }
      }
    }
    return truncated;
  }
}
