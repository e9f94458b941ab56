import type { FetchMessageObject, ImapFlow, MailboxObject, SearchObject } from 'imapflow';
import { snippetOf } from '../../mail/body.js';
import { MailError } from '../../mail/errors.js';
import { headerValue } from '../../mail/headers.js';
import { parseRawMessage } from '../../mail/mime.js';
import type { Header, MailMessage, MimeNode } from '../../mail/types.js';
import { keywordLabelId, userKeyword } from './folders.js';
import { cleanMessageId, messageIdFor, referenceIds, threadIdFor, threadRoot } from './ids.js';
import type { Folder } from './query.js';

/*
 * Reading never changes the mailbox: folders are opened with EXAMINE (read-only, RFC 3501
 * §6.3.2: \Recent is not cleared) and bodies are fetched with BODY.PEEK (imapflow's `source`
 * and `headers` use PEEK), so no \Seen flag is ever set by a read.
 */

/** One copy of a message: where it sits and what the server says of it there. */
export interface Copy {
  folder: Folder;
  uidValidity: string;
  uid: number;
  flags: ReadonlySet<string>;
  internalDate: number;
  size: number;
  modseq?: bigint;
}

/** A message as read from one or more copies (copies share a Message-ID). */
export interface ReadMessage {
  id: string;
  threadId: string;
  /** Message-ID without <>, when usable. */
  messageId?: string;
  /** Every id this message names: its own, References and In-Reply-To. */
  links: string[];
  copies: Copy[];
  headers: Header[];
  root: MimeNode;
  snippet: string;
  full: boolean;
}

/**
 * A server syncs a selected mailbox after a command, not before it (Dovecot does), so the first
 * SEARCH on a folder selected in an earlier call would not see mail that arrived since. Each
 * use of the connection (ImapMailbox.read/write) starts stale: its first reuse of the selected
 * folder sends a NOOP, which lets the server announce what changed; later commands of the same
 * use reuse the selection as it is.
 */
const synced = new WeakSet<ImapFlow>();
export function beginUse(client: ImapFlow): void {
  synced.delete(client);
}

/**
 * Connections whose call was stopped by its budget: the command on the wire finishes (the
 * connection stays healthy for the next call), but the next read step refuses to start.
 */
const stopped = new WeakMap<ImapFlow, unknown>();

export function stopAt(client: ImapFlow, reason: unknown): void {
  stopped.set(client, reason);
}

/** A new use of the connection: the stop of the call before it no longer applies. */
export function resumeAt(client: ImapFlow): void {
  stopped.delete(client);
}

/** Throws the stop reason when the call using this connection was stopped. */
export function going(client: ImapFlow): void {
  if (stopped.has(client)) throw stopped.get(client);
}

/**
 * Lets the server announce what changed in the selected mailbox, once per use: STATUS (and
 * LIST-STATUS) of the selected mailbox answers from the session's own view of it (Dovecot does),
 * which a NOOP brings up to date.
 */
/** The selected mailbox's path while its state is not yet synced in this use, else undefined. */
export function unsyncedSelection(client: ImapFlow): string | undefined {
  return client.mailbox === false || synced.has(client) ? undefined : client.mailbox.path;
}

export async function syncSelected(client: ImapFlow): Promise<void> {
  going(client);
  if (client.mailbox === false || synced.has(client)) return;
  await client.noop();
  synced.add(client);
}

/**
 * `path` is the selected mailbox: examine() will not open it again. Read-write too: a write's
 * judging read selects INBOX for the write that follows, and reads there use BODY.PEEK, which
 * changes no flag (RFC 3501 §6.4.5).
 */
export function holds(client: ImapFlow, path: string): boolean {
  return client.mailbox !== false && client.mailbox.path === path;
}

/** A SELECT or EXAMINE this use just made: its numbers are current, no NOOP needed. */
export function opened(client: ImapFlow): void {
  synced.add(client);
}

/** Opens `path` read-only unless it already is the selected mailbox. */
export async function examine(client: ImapFlow, path: string): Promise<MailboxObject> {
  going(client);
  const current = client.mailbox;
  if (current && holds(client, path)) {
    if (!synced.has(client)) await client.noop();
    synced.add(client);
    return client.mailbox || current;
  }
  try {
    const box = await client.mailboxOpen(path, { readOnly: true });
    synced.add(client);
    return box;
  } catch (e) {
    throw new MailError('not_found', `cannot open folder "${path}": ${(e as Error).message}`, { cause: e });
  }
}

export async function searchUids(client: ImapFlow, criteria: SearchObject): Promise<number[]> {
  going(client);
  const hasCriteria = Object.keys(criteria).length > 0;
  const result = await client.search(hasCriteria ? criteria : { all: true }, { uid: true });
  if (!Array.isArray(result))
    throw new MailError('upstream_unavailable', 'the IMAP server refused the search');
  return [...result].sort((a, b) => a - b);
}

/** A UID set in IMAP sequence-set syntax with ranges, so a batch is one short command. */
export function uidSet(uids: readonly number[]): string {
  const sorted = [...new Set(uids)].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0];
  let prev = start;
  for (const uid of sorted.slice(1)) {
    if (prev !== undefined && uid === prev + 1) {
      prev = uid;
      continue;
    }
    if (start !== undefined) parts.push(start === prev ? `${start}` : `${start}:${prev}`);
    start = uid;
    prev = uid;
  }
  if (start !== undefined) parts.push(start === prev ? `${start}` : `${start}:${prev}`);
  return parts.join(',');
}

export type ReadFormat = 'full' | 'metadata' | 'links';

const LINK_HEADERS = ['message-id', 'references', 'in-reply-to'];

/** One UID FETCH for a folder's batch: source (full), whole header (metadata) or links only. */
export async function fetchCopies(
  client: ImapFlow,
  folder: Folder,
  /** UIDs, or a range such as "12:*" in IMAP syntax. */
  uids: readonly number[] | string,
  format: ReadFormat,
  /**
   * `uids` are message sequence numbers (a plain FETCH): valid only in the selection they were
   * counted in, which RFC 3501 §7.4.1 keeps stable while no EXPUNGE has been announced.
   */
  bySequence = false,
): Promise<Array<{ copy: Copy; bytes: Buffer }>> {
  if (uids.length === 0) return [];
  going(client);
  const box = await examine(client, folder.path);
  const query =
    format === 'full'
      ? { uid: true, flags: true, internalDate: true, size: true, source: true }
      : {
          uid: true,
          flags: true,
          internalDate: true,
          size: true,
          headers: format === 'links' ? LINK_HEADERS : true,
        };
  const rows: FetchMessageObject[] = await client.fetchAll(
    typeof uids === 'string' ? uids : uidSet(uids),
    query,
    { uid: !bySequence },
  );
  const uidValidity = String(box.uidValidity);
  return rows.flatMap((r) => {
    const bytes: unknown = format === 'full' ? r.source : r.headers;
    // A message another session expunged, not yet announced to this one: Dovecot still answers
    // its number and UID, with NIL for the body (imapflow: false) and OK [EXPUNGEISSUED]. It is
    // gone, so it has no row.
    if (bytes !== undefined && !Buffer.isBuffer(bytes)) return [];
    return [
      {
        copy: {
          folder,
          uidValidity,
          uid: r.uid,
          flags: r.flags ?? new Set(),
          internalDate: dateMs(r.internalDate),
          size: r.size ?? 0,
          ...(r.modseq === undefined ? {} : { modseq: r.modseq }),
        },
        bytes: bytes ?? Buffer.alloc(0),
      },
    ];
  });
}

function dateMs(d: Date | string | undefined): number {
  if (d === undefined) return 0;
  const t = typeof d === 'string' ? Date.parse(d) : d.getTime();
  return Number.isFinite(t) ? t : 0;
}

/** Parses one fetched copy into a message of its own (merged with its other copies later). */
export function readCopy(copy: Copy, bytes: Buffer, full: boolean): ReadMessage {
  // A header block alone still parses: the body is simply empty.
  const parsed = parseRawMessage(bytes);
  const root: MimeNode = full ? parsed.root : { ...parsed.root, children: [], size: 0 };
  if (!full) delete root.body;
  const h = parsed.headers;
  const own = cleanMessageId(headerValue(h, 'Message-ID'));
  const references = headerValue(h, 'References');
  const inReplyTo = headerValue(h, 'In-Reply-To');
  const place = { path: copy.folder.path, uidValidity: copy.uidValidity, uid: copy.uid };
  const links = [
    ...(own === undefined ? [] : [own]),
    ...referenceIds(references),
    ...referenceIds(inReplyTo),
  ];
  const msg: ReadMessage = {
    id: messageIdFor(own, place),
    threadId: threadIdFor(
      own === undefined ? undefined : threadRoot({ messageId: own, references, inReplyTo }),
      place,
    ),
    links,
    copies: [copy],
    headers: h,
    root,
    snippet: full ? snippetOf(parsed.root) : '',
    full,
  };
  if (own !== undefined) msg.messageId = own;
  return msg;
}

/** Copies with the same Message-ID are one message (a note to self in INBOX and Sent; Labels/X). */
export function mergeCopies(list: readonly ReadMessage[]): ReadMessage[] {
  const byId = new Map<string, ReadMessage>();
  for (const m of list) {
    const seen = byId.get(m.id);
    if (seen === undefined) {
      byId.set(m.id, { ...m, copies: [...m.copies] });
      continue;
    }
    for (const c of m.copies) {
      if (!seen.copies.some((x) => x.folder.path === c.folder.path && x.uid === c.uid)) seen.copies.push(c);
    }
    // Prefer the full read, and the copy in a real location for the content.
    if (!seen.full && m.full)
      Object.assign(seen, { root: m.root, snippet: m.snippet, full: true, headers: m.headers });
  }
  return [...byId.values()];
}

/** Live label ids from where the copies sit and their flags (docs/architecture.md, "The Mailbox contract"). */
export function labelIdsOf(m: ReadMessage): string[] {
  const out = new Set<string>();
  for (const c of m.copies) {
    if (c.folder.labelId !== undefined) out.add(c.folder.labelId);
  }
  // Flags can differ between copies (label folders on Bridge); a message is unread when its
  // primary copy is: prefer a location copy's flags.
  const primary = m.copies.find((c) => c.folder.kind === 'location') ?? m.copies[0];
  const flags = primary?.flags ?? new Set<string>();
  if (!flags.has('\\Seen')) out.add('UNREAD');
  if (m.copies.some((c) => c.flags.has('\\Flagged'))) out.add('STARRED');
  if (flags.has('\\Draft')) out.add('DRAFT');
  for (const c of m.copies) {
    for (const f of c.flags) {
      const k = userKeyword(f);
      if (k !== undefined) out.add(keywordLabelId(k));
    }
  }
  return [...out];
}

export function toMailMessage(m: ReadMessage): MailMessage {
  const primary = m.copies.find((c) => c.folder.kind === 'location') ?? m.copies[0];
  return {
    id: m.id,
    threadId: m.threadId,
    labelIds: labelIdsOf(m),
    internalDate: primary?.internalDate ?? 0,
    snippet: m.snippet,
    sizeEstimate: primary?.size ?? 0,
    headers: m.headers,
    root: m.root,
    // Views (All Mail, Starred) are not where a message lives; a move names its real copies.
    places: m.copies
      .filter((c) => c.folder.kind !== 'virtual')
      .map((c) => ({ folder: c.folder.path, uidValidity: c.uidValidity, uid: c.uid })),
    ...userFolders(m),
  };
}

/** The user folders (not label folders, not roles) a message's copies live in. */
function userFolders(m: ReadMessage): { folders?: string[] } {
  const ids = m.copies.flatMap((c) =>
    c.folder.kind === 'location' && c.folder.role === undefined && c.folder.labelId !== undefined
      ? [c.folder.labelId]
      : [],
  );
  return ids.length > 0 ? { folders: [...new Set(ids)] } : {};
}

/**
 * CREATE a folder, subscribed. imapflow's mailboxCreate sends SUBSCRIBE after the CREATE so that
 * clients showing only subscribed folders show it. gluon (Proton Mail Bridge's IMAP server)
 * creates every mailbox subscribed already and answers NO "already subscribed" to a SUBSCRIBE of
 * one (internal/db_impl/sqlite3/write_ops.go, internal/state/state.go `Subscribe`), so there
 * the SUBSCRIBE is a wasted command (a second, on Bridge) and is not sent. gluon is known by the
 * ID answer Bridge gives (vendor "Proton AG").
 */
export async function createFolder(client: ImapFlow, path: string): Promise<void> {
  if (!subscribesOnCreate(client)) {
    await client.mailboxCreate(path);
    return;
  }
  const inner = client as unknown as { run: (command: string, ...args: unknown[]) => Promise<unknown> };
  const run = inner.run;
  // mailboxCreate's SUBSCRIBE goes through the client's own run(): answered here, not sent.
  inner.run = (command, ...args) =>
    command === 'SUBSCRIBE' ? Promise.resolve(true) : run.call(client, command, ...args);
  try {
    await client.mailboxCreate(path);
  } finally {
    delete (inner as { run?: unknown }).run;
  }
}

/** Whether the server subscribes what it creates (gluon, by its ID answer). */
function subscribesOnCreate(client: ImapFlow): boolean {
  const info = (client as unknown as { serverInfo?: Record<string, unknown> | null }).serverInfo;
  return typeof info?.['vendor'] === 'string' && /^proton ag$/i.test(info['vendor']);
}
