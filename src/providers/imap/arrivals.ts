import { createHash } from 'node:crypto';
import type { ImapFlow, MailboxObject } from 'imapflow';
import { MailError, invalidInput } from '../../mail/errors.js';
import { MAX_DECIDED } from '../../mail/inbox-mark.js';
import type { UidArrivals, UidMark, UidMarkAt } from '../mailbox.js';
import { parseImapId } from './ids.js';
import type { Folder } from './query.js';
import { fetchCopies, going, opened, readCopy, searchUids, toMailMessage } from './reader.js';
import type { Copy } from './reader.js';
import type { MailMessage } from '../../mail/types.js';

/*
 * INBOX arrivals for the sweep loop, without the folder model: INBOX is named "INBOX" on every
 * server (RFC 3501 §5.1), so a gate that finds nothing new costs one EXAMINE after login, and
 * one UID SEARCH when UIDNEXT moved.
 */

const INBOX: Folder = { path: 'INBOX', role: 'inbox', labelId: 'INBOX', kind: 'location', name: 'Inbox' };

/** A short, stable hash of a Message-ID (or of a place id for mail without one). */
export function messageIdHash(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('base64url').slice(0, 16);
}

/** A fresh EXAMINE: a connection that already has INBOX open holds its UIDNEXT from then. */
async function reexamine(
  client: ImapFlow,
): Promise<{ uidValidity: string; uidNext: number; exists: number; box: MailboxObject }> {
  try {
    const box = await client.mailboxOpen(INBOX.path, { readOnly: true });
    opened(client);
    return {
      uidValidity: String(box.uidValidity),
      uidNext: Number(box.uidNext),
      exists: box.exists,
      box,
    };
  } catch (e) {
    throw new MailError('upstream_unavailable', `cannot open INBOX: ${(e as Error).message}`, { cause: e });
  }
}

interface Listed {
  uid: number;
  id: string;
  threadId: string;
  internalDate: number;
  message?: MailMessage;
}

/** One FETCH of the UIDs: their links, or (full) each whole message from its INBOX copy. */
async function describe(client: ImapFlow, uids: readonly number[], full = false): Promise<Listed[]> {
  if (uids.length === 0) return [];
  const rows = await fetchCopies(client, INBOX, uids, full ? 'full' : 'links');
  return rows.map(({ copy, bytes }) => listed(copy, bytes, full)).sort((a, b) => a.uid - b.uid);
}

function listed(copy: Copy, bytes: Parameters<typeof readCopy>[1], full: boolean): Listed {
  const m = readCopy(copy, bytes, full);
  return {
    uid: copy.uid,
    id: m.id,
    threadId: m.threadId,
    internalDate: copy.internalDate,
    ...(full ? { message: toMailMessage(m) } : {}),
  };
}

/** A NO or BAD answer: the server refused the command (the connection is fine). */
function refused(e: unknown): boolean {
  const status = (e as { responseStatus?: unknown } | null)?.responseStatus;
  return status === 'NO' || status === 'BAD';
}

/**
 * With no mark to start from, the page is INBOX's oldest messages. Sequence numbers rise with
 * UIDs (RFC 3501 §2.3.1.2), so after the EXAMINE that counted `exists` messages, FETCH 1:n by
 * number is the n lowest UIDs and `exists` is the total: what UID SEARCH ALL and a UID FETCH of
 * its first n answer, in one command. The numbers are this selection's, and a server announces
 * no EXPUNGE while it answers a FETCH by number (§7.4.1), so they cannot shift under it. A count
 * alone (the gate) asks the newest message for its UID and nothing else. Undefined when a message
 * expunged elsewhere since the EXAMINE left a gap (Dovecot answers its number with no body, OK
 * [EXPUNGEISSUED]) or the server refused the FETCH.
 */
async function oldestByPosition(
  client: ImapFlow,
  exists: number,
  limit: number,
  full: boolean,
): Promise<Pick<UidArrivals, 'total' | 'items' | 'newestUid'> | undefined> {
  try {
    if (limit === 0) {
      going(client);
      const rows = await client.fetchAll(String(exists), { uid: true });
      const newest = rows.find((r) => r.seq === exists)?.uid;
      return newest === undefined ? undefined : { total: exists, items: [], newestUid: newest };
    }
    const n = Math.min(limit, exists);
    const rows = await fetchCopies(client, INBOX, `1:${n}`, full ? 'full' : 'links', true);
    if (rows.length !== n) return undefined;
    const items = rows.map(({ copy, bytes }) => listed(copy, bytes, full)).sort((a, b) => a.uid - b.uid);
    // The newest UID is known when the page reaches it; list_new_mail does not need it otherwise,
    // and fetching it with the page would download the newest message whole.
    const newest = n === exists ? items.at(-1)?.uid : undefined;
    return { total: exists, items, ...(newest === undefined ? {} : { newestUid: newest }) };
  } catch (e) {
    if (refused(e)) return undefined;
    throw e;
  }
}

export async function inboxSince(
  client: ImapFlow,
  mark: UidMark | undefined,
  limit: number,
  full = false,
): Promise<UidArrivals> {
  const box = await reexamine(client);
  const { uidValidity, uidNext } = box;
  const reset = mark !== undefined && mark.uidValidity !== uidValidity;
  const base = { uidValidity, uidNext, reset, excludedDecided: 0 };
  const valid = mark !== undefined && !reset;
  if ((valid && uidNext <= mark.uid + 1) || box.exists === 0) return { ...base, total: 0, items: [] };
  // UIDs only grow (RFC 3501 §2.3.1.1): above the mark there are at most UIDNEXT - mark - 1
  // messages. When that fits in the page, one FETCH of everything above the mark is the listing
  // and its count; the SEARCH that would count first is spared.
  if (valid && uidNext - (mark.uid + 1) <= limit) {
    const from = mark.uid + 1;
    const rows = await fetchCopies(client, INBOX, `${from}:*`, full ? 'full' : 'links');
    const items = rows
      // "N:*" names the last message even when every UID is below N (RFC 3501 §6.4.8).
      .filter(({ copy }) => copy.uid >= from)
      .map(({ copy, bytes }) => listed(copy, bytes, full))
      .sort((a, b) => a.uid - b.uid);
    const newest = items.at(-1)?.uid;
    return { ...base, total: items.length, items, ...(newest === undefined ? {} : { newestUid: newest }) };
  }
  // No mark, or a renumbered INBOX with nothing remembered as decided: the whole inbox is new.
  if (!valid && !(reset && mark.decided.length > 0)) {
    let page = await oldestByPosition(client, box.exists, limit, full);
    if (page === undefined) {
      // A gap: a NOOP lets the server announce the expunge (RFC 3501 §7.4.1), and the numbers
      // it leaves are read once more.
      going(client);
      await client.noop();
      const exists = client.mailbox === false ? 0 : client.mailbox.exists;
      if (exists === 0) return { ...base, total: 0, items: [] };
      page = await oldestByPosition(client, exists, limit, full);
    }
    if (page !== undefined) return { ...base, ...page };
  }
  let uids = valid
    ? (await searchUids(client, { uid: `${mark.uid + 1}:*` })).filter((u) => u > mark.uid)
    : await searchUids(client, {});
  let excludedDecided = 0;
  let items: Listed[];
  if (reset && mark.decided.length > 0 && uids.length > 0) {
    // Every UID changed: tell decided mail by its Message-ID instead (one header FETCH of all).
    const decided = new Set(mark.decided);
    const all = await describe(client, uids);
    const open = all.filter((m) => !decided.has(messageIdHash(m.id)));
    excludedDecided = all.length - open.length;
    uids = open.map((m) => m.uid);
    items = open.slice(0, limit);
    if (full)
      items = await describe(
        client,
        items.map((i) => i.uid),
        true,
      );
  } else {
    items = await describe(client, uids.slice(0, limit), full);
  }
  const newestUid = uids.at(-1);
  return {
    ...base,
    excludedDecided,
    total: uids.length,
    items,
    ...(newestUid === undefined ? {} : { newestUid }),
  };
}

export async function uidMarkAt(
  client: ImapFlow,
  target: { uid: number } | { messageId: string },
  /**
   * INBOX's UID → message rows this server already holds, when the fresh EXAMINE proves them
   * complete (folder-index.ts): a UID's Message-ID never changes, so they stand in for the SEARCH
   * and the FETCH below.
   */
  known?: (box: MailboxObject) => ReadonlyMap<number, { id: string }> | undefined,
): Promise<UidMarkAt> {
  const box = await reexamine(client);
  const { uidValidity, uidNext } = box;
  let uid: number;
  if ('uid' in target) {
    uid = target.uid;
    if (uid >= uidNext)
      throw invalidInput(
        'uid',
        `UID ${uid} is at or above INBOX's UIDNEXT (${uidNext}): no message with that UID has arrived yet, and a mark there would hide mail that has not been listed. Use a uid from list_new_mail.`,
      );
  } else {
    const p = parseImapId(target.messageId, 'messageId');
    if (p.kind !== 'message')
      throw invalidInput('messageId', 'this is not a message id; pass a messageId from list_new_mail');
    const found = await searchUids(client, { header: { 'message-id': p.messageId } });
    const last = found.at(-1);
    if (last === undefined)
      throw new MailError(
        'not_found',
        `message ${target.messageId.slice(0, 40)} is not in the inbox; pass the uid from list_new_mail instead`,
      );
    uid = last;
  }
  const rows = known?.(box.box);
  if (rows !== undefined) {
    const kept = [...rows.keys()]
      .filter((u) => u <= uid)
      .sort((a, b) => a - b)
      .slice(-MAX_DECIDED);
    const decided = kept.map((u) => messageIdHash((rows.get(u) as { id: string }).id));
    return { uidValidity, uidNext, uid, decided };
  }
  const below = box.exists === 0 ? [] : await searchUids(client, { uid: `1:${uid}` });
  const kept = below.filter((u) => u <= uid).slice(-MAX_DECIDED);
  const decided = kept.length === 0 ? [] : (await describe(client, kept)).map((m) => messageIdHash(m.id));
  return { uidValidity, uidNext, uid, decided };
}
