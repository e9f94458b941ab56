import type { ImapFlow, SearchObject } from 'imapflow';
import { examine, fetchCopies, mergeCopies, readCopy, searchUids } from './reader.js';
import type { Copy, ReadFormat, ReadMessage } from './reader.js';
import type { Folder, FolderModel } from './query.js';
import { folderByRole } from './folders.js';
import { withFlags } from './folder-index.js';
import type { FolderIndex } from './folder-index.js';
import { noteUncheckedPlace } from '../freshness.js';

/*
 * Threads without THREAD (Proton Bridge has neither THREAD nor SORT): a conversation is the set
 * of messages connected by Message-ID, In-Reply-To and References (RFC 5322 §3.6.4), rebuilt by
 * searching in rounds — first for messages naming the root, then for messages naming a message
 * or named in the round before, at most MAX_ROUNDS — so a reply that names only its parent (a
 * client that writes In-Reply-To but no References) still joins, and so does the start of a long
 * thread whose later messages list only their latest references. Every thread asked for in one call
 * shares each round's commands.
 *
 * Where the server has an All Mail view (\All, RFC 6154: Proton Bridge, Gmail, a Dovecot with a
 * virtual mailbox) the rounds run there, one SEARCH each, and the content is one FETCH from it.
 * All Mail does not say where a message lives, so one more pass asks each folder it covers
 * (INBOX, Sent, Drafts, user and label folders; Archive is what is left) which of the found
 * messages it holds: that is what the labels are made of. Without All Mail every round asks every
 * folder but the virtual views.
 *
 * With a folder index (folder-index.ts) the rounds in All Mail and the location pass are answered
 * from it once STATUS has shown each folder unchanged; the content is still one live FETCH from
 * All Mail, and the located copies take their flags from it.
 */

/** The folder index and the tool call it checks folders for. */
export interface IndexUse {
  index: FolderIndex;
  signal?: AbortSignal;
  /**
   * A listing on a server without LIST-STATUS (src/providers/freshness.ts): no folder but INBOX
   * is indexed for it; the rounds run live in All Mail, and copies are located only in folders
   * already indexed, the others named as not looked in.
   */
  lazy?: boolean;
  /**
   * A read of one thread or message on a server without LIST-STATUS (src/providers/freshness.ts):
   * a folder without an index gets one only while the call stays within `commands` (counted by
   * `spent`, login left out) — or, with `progress`, when the call has built no index yet — and
   * the others are named as not looked in.
   */
  budget?: { commands: number; spent: () => number; progress: boolean };
}

/*
 * What a warm read may cost on a server where each command takes a second (issue 21: get_thread
 * at most 6, get_message at most 4). Without building anything, get_thread costs 3 to 5 on the
 * Bridge profile (All Mail's check and catch-up, the thread's FETCH, a STATUS of what a write
 * touched, a folder-list renewal a minute after the last), get_message 2 to 3. Building a missing
 * folder index costs an EXAMINE and a header FETCH of the whole folder (BUILD_COMMANDS; 1 for an
 * empty folder, 3 for one too large to index, which is searched live), so a call builds one or
 * two, and successive calls build the rest. So that they do even where every call spends its
 * commands on checks (MAILWARDEN_IMAP_RECHECK_MS=0 asks each indexed folder every call), a
 * get_thread that has built no index yet (All Mail's counts) builds one beyond its commands.
 */
export const THREAD_READ_COMMANDS = 6;
export const MESSAGE_READ_COMMANDS = 4;
const BUILD_COMMANDS = 2;

/**
 * The order in which a budgeted read builds missing indexes, most likely to hold the thread
 * first. Folders this server's writes put mail into come first: the agent reads what it just
 * moved or labelled (a thread moved to Spam should show SPAM on the next read). Then Sent, since
 * a conversation's messages outside INBOX are most often the owner's replies; then Drafts, Trash
 * and Spam and the other location folders, which say where a message is (one whose folder went
 * unchecked shows no place at all, its All Mail copy alone); then the label folders. LIST order
 * within each group. A folder too large to index is asked live each time, so it comes last and
 * cannot hold the rotation up.
 */
function buildOrder(folders: readonly Folder[], index: FolderIndex): Folder[] {
  const rank = (f: Folder): number => {
    if (index.unindexable(f.path)) return 6;
    if (index.wroteInto(f.path)) return 0;
    if (f.role === 'sent') return 1;
    if (f.role === 'drafts') return 2;
    if (f.role === 'trash' || f.role === 'junk') return 3;
    return f.kind === 'location' ? 4 : 5;
  };
  return [...folders].sort((a, b) => rank(a) - rank(b));
}

/** Whether this use may take `path`'s index: always, except a lazy listing's unindexed folders. */
export function mayIndex(use: IndexUse, folder: Folder): boolean {
  return use.lazy !== true || folder.role === 'inbox' || use.index.holdsFolder(folder.path);
}

export const MAX_ROUNDS = 3;

/** Message-IDs per SEARCH: three HEADER keys each keeps a command near 10 kB (servers cap lines). */
const IDS_PER_SEARCH = 60;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

const linkCriteria = (ids: readonly string[]): SearchObject => ({
  or: ids.flatMap((id) => [
    { header: { 'message-id': id } },
    { header: { references: id } },
    { header: { 'in-reply-to': id } },
  ]),
});

const idCriteria = (ids: readonly string[]): SearchObject => ({
  or: ids.map((id) => ({ header: { 'message-id': id } })),
});

/** IMAP HEADER search is a substring match; keep only messages that name an id exactly. */
function namesAny(m: ReadMessage, ids: ReadonlySet<string>): boolean {
  return m.links.some((l) => ids.has(l));
}

async function searchChunked(
  client: ImapFlow,
  ids: readonly string[],
  make: (ids: readonly string[]) => SearchObject,
) {
  const out = new Set<number>();
  for (const part of chunks(ids, IDS_PER_SEARCH))
    for (const u of await searchUids(client, make(part))) out.add(u);
  return [...out];
}

/** Rounds of link searches over `folders`, reading each new hit in `format` as it is found. */
async function rounds(
  client: ImapFlow,
  folders: readonly Folder[],
  roots: readonly string[],
  format: ReadFormat,
  /** Later rounds ask only the first folder (All Mail) and folders that held a match. */
  narrow: boolean,
): Promise<ReadMessage[]> {
  const searched = new Set<string>();
  const found: ReadMessage[] = [];
  const fetched = new Map<string, Set<number>>();
  let frontier = [...new Set(roots)];
  let active = folders;
  for (let round = 0; frontier.length > 0 && round < MAX_ROUNDS; round++) {
    for (const id of frontier) searched.add(id);
    const wanted = new Set(frontier);
    const fresh: ReadMessage[] = [];
    const hit = new Set<string>();
    for (const folder of active) {
      const box = await examine(client, folder.path);
      if (box.exists === 0) continue;
      const seen = fetched.get(folder.path) ?? new Set<number>();
      fetched.set(folder.path, seen);
      const uids = (await searchChunked(client, frontier, linkCriteria)).filter((u) => !seen.has(u));
      for (const u of uids) seen.add(u);
      for (const { copy, bytes } of await fetchCopies(client, folder, uids, format)) {
        const m = readCopy(copy, bytes, format === 'full');
        if (namesAny(m, wanted)) {
          fresh.push(m);
          hit.add(folder.path);
        }
      }
    }
    found.push(...fresh);
    // With All Mail first, later rounds look there and where conversations were found: Spam or
    // Trash, when they held none of them (most of the time), are not asked again.
    const [main] = folders;
    if (narrow) active = folders.filter((f) => f === main || hit.has(f.path));
    // Next: every id the new messages name that nobody has searched for yet — their own and the
    // ones they reference, since a message quoting the eighth-latest ids only (common clients
    // cap References) leads back to the start of the conversation only through its references.
    frontier = [...new Set(fresh.flatMap((m) => m.links))].filter((id) => !searched.has(id));
  }
  return found;
}

/** The rounds in one folder answered from the index, then one FETCH of what they found. */
async function indexedRounds(
  client: ImapFlow,
  folder: Folder,
  roots: readonly string[],
  format: ReadFormat,
  use: IndexUse,
): Promise<ReadMessage[] | undefined> {
  const uids = await use.index.linked(client, folder, roots, MAX_ROUNDS, use.signal);
  if (uids === undefined) return undefined;
  return (await fetchCopies(client, folder, uids, format)).map(({ copy, bytes }) =>
    readCopy(copy, bytes, format === 'full'),
  );
}

/** Where each found message lives: every folder All Mail covers is asked (or its index). */
function locate(
  client: ImapFlow,
  folders: readonly Folder[],
  found: readonly ReadMessage[],
  use: IndexUse | undefined,
) {
  const ids = [...new Set(found.flatMap((m) => (m.messageId === undefined ? [] : [m.messageId])))];
  // Flags live on the message, not on where it is seen: the All Mail copy just fetched lends its.
  const lent = new Map<string, Copy['flags']>();
  for (const m of found) {
    const c = m.copies[0];
    if (m.messageId !== undefined && c !== undefined && !lent.has(m.messageId))
      lent.set(m.messageId, c.flags);
  }
  return locateByMessageId(client, folders, ids, use, lent);
}

/**
 * Every copy of these Message-IDs in `folders`. A folder the index holds costs nothing when its
 * copies can borrow flags (`lent`) and one FETCH of its copies otherwise; one asked live costs a
 * (chunked) SEARCH and a FETCH.
 */
export async function locateByMessageId(
  client: ImapFlow,
  folders: readonly Folder[],
  ids: readonly string[],
  use?: IndexUse,
  lent?: ReadonlyMap<string, Copy['flags']>,
) {
  const located: ReadMessage[] = [];
  if (ids.length === 0) return located;
  const wanted = new Set(ids);
  const lookIn = async (folder: Folder): Promise<void> => {
    const indexed = use === undefined ? undefined : await use.index.uidsOf(client, folder, ids, use.signal);
    if (indexed !== undefined) {
      const unlent: number[] = [];
      for (const { uid, row } of indexed) {
        const flags = row.messageId === undefined ? undefined : lent?.get(row.messageId);
        if (flags === undefined) unlent.push(uid);
        else located.push(withFlags(row, flags));
      }
      for (const { copy, bytes } of await fetchCopies(client, folder, unlent, 'links'))
        located.push(readCopy(copy, bytes, false));
      return;
    }
    const box = await examine(client, folder.path);
    if (box.exists === 0) return;
    const uids = await searchChunked(client, ids, idCriteria);
    for (const { copy, bytes } of await fetchCopies(client, folder, uids, 'links')) {
      const m = readCopy(copy, bytes, false);
      if (m.messageId !== undefined && wanted.has(m.messageId)) located.push(m);
    }
  };
  const signal = use?.signal;
  const budget = use?.budget;
  if (use === undefined || signal === undefined || (use.lazy !== true && budget === undefined)) {
    for (const folder of folders) await lookIn(folder);
    return located;
  }
  if (use.lazy === true || budget === undefined) {
    for (const folder of folders)
      if (mayIndex(use, folder)) await lookIn(folder);
      else noteUncheckedPlace(signal, folder.path);
    return located;
  }
  // Budgeted: the folders with an index first (their checks are part of what the call spends),
  // then the missing ones in build order while the call's commands allow.
  const missing = buildOrder(
    folders.filter((f) => f.role !== 'inbox' && !use.index.holdsFolder(f.path)),
    use.index,
  );
  for (const folder of folders) if (!missing.includes(folder)) await lookIn(folder);
  for (const folder of missing) {
    const cost = use.index.unindexable(folder.path) ? BUILD_COMMANDS + 1 : BUILD_COMMANDS;
    const owed = budget.progress && use.index.builtIn(signal) === 0;
    if (owed || budget.spent() + cost <= budget.commands) await lookIn(folder);
    else noteUncheckedPlace(signal, folder.path);
  }
  // In the folders' order, as the other paths give them (labels keep their order across calls).
  const order = new Map(folders.map((f, i) => [f.path, i]));
  const rank = (m: ReadMessage) => order.get(m.copies[0]?.folder.path ?? '') ?? folders.length;
  return located.sort((a, b) => rank(a) - rank(b));
}

export async function gatherThreads(
  client: ImapFlow,
  model: FolderModel,
  roots: readonly string[],
  format: ReadFormat,
  /** Locate copies in Archive too (writes need every UID; reads know Archive by elimination). */
  everyPlace = false,
  use?: IndexUse,
): Promise<ReadMessage[]> {
  const all = folderByRole(model, 'all');
  const places = model.folders.filter((f) => f.kind !== 'virtual');
  if (all === undefined) return mergeCopies(await rounds(client, places, roots, format, false));
  const spamTrashInAll = model.proton === true;
  const outside = spamTrashInAll ? [] : places.filter((f) => f.role === 'junk' || f.role === 'trash');
  const covered = coveredPlaces(model, everyPlace);
  // Proton's All Mail holds Spam and Trash too (a label every message carries): there they are
  // located like any other place. Elsewhere Spam and Trash are outside All Mail and, as the issue
  // of threads goes, outside a conversation (Gmail's own get_thread aside): they are searched
  // only for the threads All Mail does not hold at all, such as a search in:spam hit.
  const inAll =
    (use === undefined || !mayIndex(use, all)
      ? undefined
      : await indexedRounds(client, all, roots, format, use)) ??
    (await rounds(client, [all], roots, format, true));
  const seen = new Set(inAll.flatMap((m) => m.links));
  const missing = roots.filter((r) => !seen.has(r));
  const viewed =
    missing.length === 0 ? inAll : [...inAll, ...(await rounds(client, outside, missing, format, false))];
  const inView = viewed.filter((m) => m.copies.every((c) => c.folder.path === all.path));
  const located = await locate(client, covered, inView, use);
  // A message All Mail shows in no folder it covers sits in Archive (or another folder without
  // a label of its own): its All Mail copy, which carries no location label, says just that.
  return mergeCopies([...viewed, ...located]).map((m) => ({
    ...m,
    copies: m.copies.filter((c) => c.folder.path !== all.path || m.copies.length === 1),
  }));
}

/**
 * The folders All Mail covers whose copies make a message's labels: Proton's All Mail holds Spam
 * and Trash too; Archive is known by elimination unless `everyPlace` (writes need its UIDs).
 */
function coveredPlaces(model: FolderModel, everyPlace: boolean): Folder[] {
  const spamTrashInAll = model.proton === true;
  return model.folders.filter(
    (f) =>
      f.kind !== 'virtual' &&
      (spamTrashInAll || (f.role !== 'junk' && f.role !== 'trash')) &&
      (everyPlace || f.role !== 'archive'),
  );
}

/**
 * One message read from its All Mail copy, with every place it sits: All Mail's index says
 * whether and where it is there (a fresh EXAMINE checks it), one FETCH reads it in `format`, and
 * the covered folders' indexes say where its other copies are, their flags lent by the copy just
 * read. Undefined when All Mail does not hold it (or is too large to index): read it the other way.
 */
export async function messageViaAllMail(
  client: ImapFlow,
  model: FolderModel,
  messageId: string,
  format: ReadFormat,
  use: IndexUse,
): Promise<ReadMessage | undefined> {
  const all = folderByRole(model, 'all');
  if (all === undefined) return undefined;
  const [hit] = (await use.index.uidsOf(client, all, [messageId], use.signal)) ?? [];
  if (hit === undefined) return undefined;
  const [row] = await fetchCopies(client, all, [hit.uid], format);
  if (row === undefined) return undefined;
  const read = readCopy(row.copy, row.bytes, format === 'full');
  const located = await locateByMessageId(
    client,
    coveredPlaces(model, false),
    [messageId],
    use,
    new Map([[messageId, row.copy.flags]]),
  );
  const [m] = mergeCopies([read, ...located]);
  if (m === undefined) return undefined;
  // Seen in no covered folder: it sits in Archive, which its All Mail copy alone says.
  return { ...m, copies: m.copies.filter((c) => c.folder.path !== all.path || m.copies.length === 1) };
}

/** The messages connected to `root` through their links (a union-find over Message-IDs). */
export function componentOf(root: string, messages: readonly ReadMessage[]): ReadMessage[] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let r = x;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r) as string;
    parent.set(x, r);
    return r;
  };
  for (const m of messages) {
    const [first, ...rest] = m.links;
    if (first === undefined) continue;
    find(first);
    for (const l of rest) {
      const a = find(first);
      const b = find(l);
      if (a !== b) parent.set(a, b);
    }
  }
  const target = find(root);
  return messages.filter((m) => {
    const first = m.links[0];
    return first !== undefined && find(first) === target;
  });
}
