import { MailError } from './errors.js';

/*
 * The sweep's mark: how far through the inbox an agent on a timer has decided, per account, so
 * list_new_mail shows each arrival once. Pure: the file itself is src/store/inbox-mark.ts.
 *
 * IMAP: INBOX's UIDVALIDITY and the highest UID decided. UIDs only grow within one UIDVALIDITY
 * (RFC 3501 §2.3.1.1), so "above the mark" is exact and costs one UID SEARCH. A different
 * UIDVALIDITY (Bridge renumbers INBOX after a reset or a fresh sync) makes the UID meaningless:
 * the inbox is listed again, less the messages the mark remembers as decided (`decided`, hashes
 * of their Message-IDs, so mail the sweep left in the inbox is not listed twice).
 *
 * Gmail: the internal date (ms) of the newest message decided plus the ids decided at exactly
 * that millisecond. Gmail has no UIDs; a historyId would also do, but history expires after
 * about a week without a run and then says nothing, while a date never expires, names one
 * message (mark_handled takes a message), and is what "arrived after" means. The cost: a
 * message whose internal date is older than the mark (an import of old mail) is not new.
 */

export const MARK_VERSION = 1;
/** Decided Message-IDs kept for a UIDVALIDITY change; older ones are listed again at worst. */
export const MAX_DECIDED = 2000;

export interface ImapMark {
  version: 1;
  provider: 'imap';
  account: string;
  uidValidity: string;
  /** Highest INBOX UID decided (0: none yet). */
  uid: number;
  /** Hashes (messageIdHash) of Message-IDs decided and left in the inbox, newest last. */
  decided: string[];
  updatedAt: string;
}

export interface GmailMark {
  version: 1;
  provider: 'gmail';
  account: string;
  /** Internal date (ms since the epoch) of the newest message decided. */
  internalDate: number;
  /** Message ids decided whose internal date is exactly `internalDate`. */
  ids: string[];
  updatedAt: string;
}

export type InboxMark = ImapMark | GmailMark;

function corrupt(path: string, why: string): MailError {
  return new MailError(
    'internal_error',
    `the new-mail mark ${path} is damaged (${why}), so what is new cannot be told. Nothing was listed. Fix it by hand, or delete it: the next list_new_mail then lists the whole inbox again (and mark_handled sets a new mark).`,
    { retryable: false },
  );
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** Validates a mark file's text; anything off is a clear internal_error naming the file. */
export function parseMark(text: string, path: string, account: string): InboxMark {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw corrupt(path, 'not valid JSON');
  }
  if (!isObj(o)) throw corrupt(path, 'not a JSON object');
  if (o['version'] !== MARK_VERSION) throw corrupt(path, `version is not ${MARK_VERSION}`);
  if (o['account'] !== account) throw corrupt(path, `it is for account ${JSON.stringify(o['account'])}`);
  if (typeof o['updatedAt'] !== 'string') throw corrupt(path, 'updatedAt is missing');
  if (o['provider'] === 'imap') {
    const uid = o['uid'];
    if (typeof o['uidValidity'] !== 'string' || !/^\d+$/.test(o['uidValidity']))
      throw corrupt(path, 'uidValidity is not a number in a string');
    if (typeof uid !== 'number' || !Number.isInteger(uid) || uid < 0 || uid > 0xffffffff)
      throw corrupt(path, 'uid is not a UID');
    if (!strings(o['decided'])) throw corrupt(path, 'decided is not a list of strings');
    return {
      version: 1,
      provider: 'imap',
      account,
      uidValidity: o['uidValidity'],
      uid,
      decided: o['decided'],
      updatedAt: o['updatedAt'],
    };
  }
  if (o['provider'] === 'gmail') {
    const at = o['internalDate'];
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0)
      throw corrupt(path, 'internalDate is not a time');
    if (!strings(o['ids'])) throw corrupt(path, 'ids is not a list of strings');
    return {
      version: 1,
      provider: 'gmail',
      account,
      internalDate: at,
      ids: o['ids'],
      updatedAt: o['updatedAt'],
    };
  }
  throw corrupt(path, 'provider is neither "imap" nor "gmail"');
}

/** A Gmail message's place in arrival order: internal date, then id (ties are rare but real). */
export interface Arrival {
  id: string;
  internalDate: number;
}

export function compareArrivals(a: Arrival, b: Arrival): number {
  if (a.internalDate !== b.internalDate) return a.internalDate - b.internalDate;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a Gmail message is above the mark (not yet decided). */
export function aboveGmailMark(mark: GmailMark | undefined, m: Arrival): boolean {
  if (mark === undefined) return true;
  if (m.internalDate !== mark.internalDate) return m.internalDate > mark.internalDate;
  return !mark.ids.includes(m.id);
}

/**
 * The Gmail mark once everything up to `m` is decided. Other messages of the same millisecond
 * stay undecided unless the current mark already held them, so a tie never hides mail.
 */
export function gmailMarkAt(
  account: string,
  m: Arrival,
  current: GmailMark | undefined,
  now: number,
): GmailMark {
  const ids = current?.internalDate === m.internalDate ? [...current.ids, m.id] : [m.id];
  return {
    version: 1,
    provider: 'gmail',
    account,
    internalDate: m.internalDate,
    ids: [...new Set(ids)].sort(),
    updatedAt: new Date(now).toISOString(),
  };
}
