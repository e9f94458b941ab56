import type { ImapFlow, MailboxObject, StatusObject } from 'imapflow';
import {
  examine,
  fetchCopies,
  holds,
  readCopy,
  searchUids,
  syncSelected,
  unsyncedSelection,
} from './reader.js';
import type { Copy, ReadMessage } from './reader.js';
import type { Folder } from './query.js';
import { isReadOnlyCall, noteReusedCheck } from '../freshness.js';

/*
 * Which messages a folder holds, without asking the folder each call.
 *
 * A thread read has to know where each of its messages sits (labels are made of that), and a
 * search has to group a folder's hits into conversations: asked live, that is an EXAMINE, a
 * SEARCH and a FETCH per folder per call — on Proton Bridge, with a folder per label, twenty or
 * thirty commands of a second each. The index remembers, per folder, each UID's Message-ID,
 * References, In-Reply-To, INTERNALDATE and size: the parts of a message IMAP never changes
 * (RFC 3501 §2.3.1.1: a UID names one message for as long as UIDVALIDITY holds).
 *
 * What it does not remember is what can change: flags are never taken from it. Its rows carry
 * an empty flag set, and every caller takes flags from a live FETCH of the same call.
 *
 * Membership is checked live, once per tool call, with STATUS (UIDVALIDITY, UIDNEXT, MESSAGES),
 * or one LIST-STATUS for every folder where the server offers it (RFC 5819). The three prove the
 * set of UIDs unchanged: a message added to a folder takes a new UID, so UIDNEXT grows; one
 * removed without another added lowers MESSAGES; and a new UIDVALIDITY starts the folder over.
 * When they differ the index catches up: a FETCH of the UIDs from the old UIDNEXT on, and, when
 * the count still differs, a SEARCH ALL to drop what left. A write this server makes forgets the
 * statuses seen so far, so the read that verifies it checks again.
 *
 * Without LIST-STATUS that check is a STATUS per folder. Where a read-only call only needs to know
 * which label folders hold copies of messages it already found (`locate`), it may take a check
 * made within the last `recheckMs` by another call instead (src/providers/freshness.ts), and the
 * call reports each folder it did that for with the check's age. The folders a search reads its
 * hits from, the conversation rounds, writes and the reads a write is judged by always check
 * live; a write of this server's voids the earlier checks of the folders it touched.
 *
 * Folders holding more than INDEX_LIMIT messages are not indexed (their first read would cost a
 * FETCH of every header in them); they are asked live, as before.
 */

export const INDEX_LIMIT = 20_000;

export interface FolderStatus {
  uidValidity: string;
  uidNext: number;
  messages: number;
}

interface State {
  uidValidity: string;
  uidNext: number;
  rows: Map<number, ReadMessage>;
  /**
   * The flags of every row, as the FETCH that read the whole folder in this call returned them:
   * for that call alone (its signal) and only while the folder is unchanged by this server.
   */
  flagsNow?: { call: AbortSignal; epoch: number; flags: Map<number, ReadonlySet<string>> };
  /** Message-ID → UIDs and link id → UIDs, built on first use after a change. */
  byMessageId?: Map<string, number[]>;
  byLink?: Map<string, number[]>;
}

const STATUS_QUERY = { messages: true, uidNext: true, uidValidity: true } as const;
/** Prefix of the memo keys LIST-STATUS fills (no folder path holds a NUL). */
const LISTED = '\u0000listed';

function statusOf(s: Partial<StatusObject> | false | undefined): FolderStatus | undefined {
  if (!s || s.uidValidity === undefined || s.uidNext === undefined || s.messages === undefined)
    return undefined;
  return { uidValidity: String(s.uidValidity), uidNext: s.uidNext, messages: s.messages };
}

/** What a fresh EXAMINE answered, as a STATUS would have. */
const statusOfBox = (box: MailboxObject): FolderStatus | undefined =>
  statusOf({ uidValidity: box.uidValidity, uidNext: box.uidNext, messages: box.exists });

function push(map: Map<string, number[]>, key: string, uid: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [uid]);
  else list.push(uid);
}

/** A row as the index keeps it: the message's immutable parts and a copy without flags. */
function row(m: ReadMessage): ReadMessage {
  return { ...m, copies: m.copies.map((c) => ({ ...c, flags: new Set<string>() })) };
}

export class FolderIndex {
  private readonly states = new Map<string, State>();
  /** Statuses seen in each tool call (its AbortSignal): one check per folder per call. */
  private seen = new WeakMap<AbortSignal, Map<string, { status: FolderStatus; epoch: number }>>();
  /** Bumped for a folder this server wrote to: a status seen before proves nothing after. */
  private readonly epochs = new Map<string, number>();
  private readonly limit: number;
  /** The last live STATUS of each folder, for read-only calls within `recheckMs` of it. */
  private readonly lastLive = new Map<string, { status: FolderStatus; epoch: number; at: number }>();
  private readonly recheckMs: number;
  /** Folders asked live instead: too large to index, or without a usable STATUS. */
  private readonly unindexed = new Set<string>();
  private readonly built = new WeakMap<AbortSignal, number>();
  /** Folders this server's writes put mail into. */
  private readonly writtenInto = new Set<string>();

  constructor(limit = INDEX_LIMIT, recheckMs = 0) {
    this.limit = limit;
    this.recheckMs = recheckMs;
  }

  /**
   * The live flags of every message in `path` when this call (`signal`) read the whole folder
   * and nothing this server did has changed it since; otherwise undefined (ask the server).
   */
  flagsReadIn(
    path: string,
    signal: AbortSignal | undefined,
  ): ReadonlyMap<number, ReadonlySet<string>> | undefined {
    const f = this.states.get(path)?.flagsNow;
    if (f === undefined || signal === undefined || f.call !== signal || f.epoch !== this.epochOf(path))
      return undefined;
    return f.flags;
  }

  /** Whether `path` has been indexed (its rows may still need bringing up to date). */
  holdsFolder(path: string): boolean {
    return this.states.has(path);
  }

  /** Whether `path`'s last check found it too large to index (or gave no usable status). */
  unindexable(path: string): boolean {
    return this.unindexed.has(path);
  }

  /** How many folders this call (`signal`) indexed from nothing. */
  builtIn(signal: AbortSignal): number {
    return this.built.get(signal) ?? 0;
  }

  /** Whether this server's own write put mail into `path` (its COPYUID said so). */
  wroteInto(path: string): boolean {
    return this.writtenInto.has(path);
  }

  /** After a write to `paths` (every folder when absent): what was seen of them is stale. */
  changed(touched?: Iterable<string>): void {
    const paths = touched === undefined ? undefined : [...touched];
    for (const [path, st] of this.states) if (paths === undefined || paths.includes(path)) delete st.flagsNow;
    if (paths === undefined) {
      this.seen = new WeakMap();
      this.lastLive.clear();
      return;
    }
    for (const p of paths) this.epochs.set(p, this.epochOf(p) + 1);
  }

  /**
   * UIDs this server's own write took out of `path` (the MOVE's COPYUID said so): dropped from the
   * rows, so the next check finds the count it expects instead of searching for what left.
   */
  forget(path: string, uids: Iterable<number>): void {
    const state = this.states.get(path);
    if (state === undefined) return;
    for (const uid of uids) state.rows.delete(uid);
    delete state.flagsNow;
    delete state.byMessageId;
    delete state.byLink;
  }

  /**
   * What this server's own write did, as the server answered it (COPYUID, the search after a
   * move): copies that left are dropped from their folder's rows; copies that arrived are added
   * where their new UIDs are exactly the next ones the folder would give (from the UIDNEXT the
   * rows were proven at), so no other message can have taken a UID in between. The next check of
   * a touched folder still runs live (changed()): when its UIDNEXT and count are what the rows
   * now say, nothing is fetched; anything another client did meanwhile shows as a difference and
   * is caught up as before.
   */
  applyWrite(
    before: readonly ReadMessage[],
    after: ReadonlyArray<{ id: string; outcome: string; copies?: readonly Copy[] }>,
  ): void {
    const key = (c: Copy) => `${c.folder.path}\u0000${c.uid}`;
    const arrived = new Map<string, { uidValidity: string; rows: Array<[number, ReadMessage]> }>();
    for (const r of after) {
      const m = before.find((x) => x.id === r.id);
      if (m === undefined || r.outcome !== 'changed' || r.copies === undefined) continue;
      const now = new Set(r.copies.map(key));
      const was = new Set(m.copies.map(key));
      for (const c of m.copies) if (!now.has(key(c)) && c.uid > 0) this.forget(c.folder.path, [c.uid]);
      for (const c of r.copies) {
        if (was.has(key(c)) || c.folder.kind === 'virtual') continue;
        this.writtenInto.add(c.folder.path);
        const entry = arrived.get(c.folder.path) ?? { uidValidity: c.uidValidity, rows: [] };
        entry.rows.push([c.uid, row({ ...m, copies: [c] })]);
        arrived.set(c.folder.path, entry);
      }
    }
    for (const [path, { uidValidity, rows }] of arrived) {
      const state = this.states.get(path);
      if (state === undefined || state.uidValidity !== uidValidity) continue;
      const uids = rows.map(([u]) => u).sort((a, b) => a - b);
      if (!uids.every((u, i) => u === state.uidNext + i)) continue;
      for (const [uid, r] of rows) state.rows.set(uid, r);
      state.uidNext += uids.length;
      delete state.byMessageId;
      delete state.byLink;
    }
  }

  private epochOf(path: string): number {
    return this.epochs.get(path) ?? 0;
  }

  private memoOf(signal: AbortSignal | undefined): Map<string, { status: FolderStatus; epoch: number }> {
    let memo = signal === undefined ? undefined : this.seen.get(signal);
    if (memo === undefined) {
      memo = new Map();
      if (signal !== undefined) this.seen.set(signal, memo);
    }
    return memo;
  }

  /**
   * The numbers an EXAMINE just reported for `path` (a fresh open, not the selection already
   * held): as live as a STATUS, so this call needs none for the folder.
   */
  observed(path: string, box: MailboxObject, signal: AbortSignal | undefined): void {
    const s = statusOfBox(box);
    if (s !== undefined) this.record(this.memoOf(signal), path, s);
  }

  /** A live status of `path`: for the rest of this call, and for read-only calls soon after. */
  private record(book: Map<string, { status: FolderStatus; epoch: number }>, path: string, s: FolderStatus) {
    const epoch = this.epochOf(path);
    book.set(path, { status: s, epoch });
    this.lastLive.set(path, { status: s, epoch, at: performance.now() });
  }

  private async status(
    client: ImapFlow,
    folder: Folder,
    signal: AbortSignal | undefined,
    /** The caller only locates copies of messages it found: a recent check will do. */
    reusable = false,
  ): Promise<FolderStatus | undefined> {
    const book = this.memoOf(signal);
    const recall = (key: string, path: string): FolderStatus | undefined => {
      const e = book.get(key);
      return e !== undefined && e.epoch === this.epochOf(path) ? e.status : undefined;
    };
    const remember = (key: string, path: string, s: FolderStatus | undefined): FolderStatus | undefined => {
      if (s !== undefined && key === path) this.record(book, path, s);
      else if (s !== undefined) book.set(key, { status: s, epoch: this.epochOf(path) });
      return s;
    };
    const known = recall(folder.path, folder.path);
    if (known !== undefined) return known;
    if (
      reusable &&
      signal !== undefined &&
      this.recheckMs > 0 &&
      folder.kind !== 'virtual' &&
      !client.capabilities.has('LIST-STATUS') &&
      isReadOnlyCall(signal)
    ) {
      const last = this.lastLive.get(folder.path);
      const age = last === undefined ? Infinity : performance.now() - last.at;
      if (last !== undefined && last.epoch === this.epochOf(folder.path) && age <= this.recheckMs) {
        book.set(folder.path, { status: last.status, epoch: last.epoch });
        noteReusedCheck(signal, folder.path, age);
        return last.status;
      }
    }
    if (folder.kind === 'virtual') {
      // A view (Dovecot's virtual All Mail) is brought up to date when it is opened, not when
      // STATUS asks about it: its numbers are the ones a fresh EXAMINE reports, or, when it is
      // selected already, STATUS after the NOOP that syncs it.
      const current = client.mailbox;
      const reused = current !== false && current.path === folder.path && current.readOnly === true;
      const box = await examine(client, folder.path);
      return remember(
        folder.path,
        folder.path,
        reused ? statusOf(await client.status(folder.path, STATUS_QUERY)) : statusOfBox(box),
      );
    }
    if (client.capabilities.has('LIST-STATUS') && folder.path !== unsyncedSelection(client)) {
      // One command answers for every folder; later folders of the same call cost nothing.
      // (Views among them are never taken from it: they are asked above. Nor is the selected
      // folder before a NOOP: the server answers for it from the session's own view.)
      const key = `${LISTED}${folder.path}`;
      let listed = recall(key, folder.path);
      if (listed === undefined) {
        const unsynced = unsyncedSelection(client);
        for (const e of await client.list({ statusQuery: STATUS_QUERY }))
          if (e.path !== unsynced) remember(`${LISTED}${e.path}`, e.path, statusOf(e.status));
        listed = recall(key, folder.path);
      }
      if (listed !== undefined) return listed;
    }
    if (!this.states.has(folder.path) && !holds(client, folder.path)) {
      // Nothing read from this folder yet: its rows are fetched next, which opens it anyway, and
      // a fresh EXAMINE reports what STATUS would.
      const box = await examine(client, folder.path);
      const s = statusOfBox(box);
      if (s !== undefined) this.record(book, folder.path, s);
      return s;
    }
    // The selected folder's numbers are the session's until a NOOP lets the server catch up.
    await syncSelected(client);
    return remember(folder.path, folder.path, statusOf(await client.status(folder.path, STATUS_QUERY)));
  }

  /**
   * The folder's messages, UID → message (links read, flags empty), proven current for this
   * call; undefined when the folder is too large to index or the server gives no usable STATUS.
   */
  async current(
    client: ImapFlow,
    folder: Folder,
    signal: AbortSignal | undefined,
  ): Promise<ReadonlyMap<number, ReadMessage> | undefined> {
    const state = await this.fresh(client, folder, signal);
    return state?.rows;
  }

  private async fresh(
    client: ImapFlow,
    folder: Folder,
    signal: AbortSignal | undefined,
    reusable = false,
  ): Promise<State | undefined> {
    const s = await this.status(client, folder, signal, reusable);
    if (s === undefined || s.messages > this.limit) {
      this.states.delete(folder.path);
      this.unindexed.add(folder.path);
      return undefined;
    }
    this.unindexed.delete(folder.path);
    let state = this.states.get(folder.path);
    if (state !== undefined && state.uidValidity === s.uidValidity && state.uidNext === s.uidNext) {
      if (state.rows.size === s.messages) return state;
    }
    if (state === undefined || state.uidValidity !== s.uidValidity) {
      state = { uidValidity: s.uidValidity, uidNext: 1, rows: new Map() };
      if (signal !== undefined) this.built.set(signal, this.builtIn(signal) + 1);
    }
    const whole = state.rows.size === 0;
    const flags = new Map<number, ReadonlySet<string>>();
    delete state.flagsNow;
    delete state.byMessageId;
    delete state.byLink;
    this.states.set(folder.path, state);
    if (s.messages === 0) {
      state.rows.clear();
      state.uidNext = s.uidNext;
      return state;
    }
    if (s.uidNext > state.uidNext)
      await this.add(client, folder, state, `${state.uidNext}:*`, state.uidNext, flags);
    if (state.rows.size !== s.messages) {
      await examine(client, folder.path);
      const present = new Set(await searchUids(client, {}));
      for (const uid of [...state.rows.keys()]) if (!present.has(uid)) state.rows.delete(uid);
      const missing = [...present].filter((u) => !state.rows.has(u));
      if (missing.length > 0) await this.add(client, folder, state, missing, 0, flags);
    }
    state.uidNext = s.uidNext;
    // Every row was read just now, flags included: this call may take them as live.
    if (whole && signal !== undefined && flags.size === state.rows.size)
      state.flagsNow = { call: signal, epoch: this.epochOf(folder.path), flags };
    return state;
  }

  private async add(
    client: ImapFlow,
    folder: Folder,
    state: State,
    uids: readonly number[] | string,
    from: number,
    flags: Map<number, ReadonlySet<string>>,
  ): Promise<void> {
    // "N:*" names the last message even when every UID is below N (RFC 3501 §6.4.8): keep >= N.
    for (const { copy, bytes } of await fetchCopies(client, folder, uids, 'links')) {
      if (copy.uid < from) continue;
      state.rows.set(copy.uid, row(readCopy(copy, bytes, false)));
      flags.set(copy.uid, copy.flags);
    }
  }

  /**
   * The rows of `path` when a fresh EXAMINE of it (`box`, this call's) proves them complete: same
   * UIDVALIDITY and UIDNEXT as when they were last brought up to date, and as many rows as the
   * folder holds messages. Otherwise undefined, and nothing is fetched.
   */
  rowsIfCurrent(path: string, box: MailboxObject): ReadonlyMap<number, ReadMessage> | undefined {
    const state = this.states.get(path);
    const s = statusOfBox(box);
    if (state === undefined || s === undefined) return undefined;
    if (state.uidValidity !== s.uidValidity || state.uidNext !== s.uidNext) return undefined;
    return state.rows.size === s.messages ? state.rows : undefined;
  }

  /**
   * UIDs in this folder of each Message-ID asked for: locating copies, so a read-only call may
   * take a recent check of the folder (see above).
   */
  async uidsOf(
    client: ImapFlow,
    folder: Folder,
    messageIds: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<Array<{ uid: number; row: ReadMessage }> | undefined> {
    const state = await this.fresh(client, folder, signal, true);
    if (state === undefined) return undefined;
    if (state.byMessageId === undefined) {
      state.byMessageId = new Map();
      for (const [uid, m] of state.rows)
        if (m.messageId !== undefined) push(state.byMessageId, m.messageId, uid);
    }
    const out: Array<{ uid: number; row: ReadMessage }> = [];
    for (const id of new Set(messageIds))
      for (const uid of state.byMessageId.get(id) ?? []) {
        const m = state.rows.get(uid);
        if (m !== undefined) out.push({ uid, row: m });
      }
    return out;
  }

  /**
   * The conversation search of threads.ts, answered from the index: rounds over the links, at
   * most `rounds` of them, from `roots`. Returns the UIDs found, in no order.
   */
  async linked(
    client: ImapFlow,
    folder: Folder,
    roots: readonly string[],
    rounds: number,
    signal: AbortSignal | undefined,
  ): Promise<number[] | undefined> {
    const state = await this.fresh(client, folder, signal);
    if (state === undefined) return undefined;
    if (state.byLink === undefined) {
      state.byLink = new Map();
      for (const [uid, m] of state.rows) for (const l of new Set(m.links)) push(state.byLink, l, uid);
    }
    const searched = new Set<string>();
    const found = new Set<number>();
    let frontier = [...new Set(roots)];
    for (let round = 0; frontier.length > 0 && round < rounds; round++) {
      const fresh: number[] = [];
      for (const id of frontier) {
        searched.add(id);
        for (const uid of state.byLink.get(id) ?? []) {
          if (found.has(uid)) continue;
          found.add(uid);
          fresh.push(uid);
        }
      }
      const next = new Set<string>();
      for (const uid of fresh)
        for (const l of state.rows.get(uid)?.links ?? []) if (!searched.has(l)) next.add(l);
      frontier = [...next];
    }
    return [...found];
  }
}

/** An indexed row as a copy of this call, with flags lent by a live copy of the same message. */
export function withFlags(m: ReadMessage, flags: Copy['flags']): ReadMessage {
  return { ...m, copies: m.copies.map((c) => ({ ...c, flags })) };
}
