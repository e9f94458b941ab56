import { createHash } from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import { invalidInput } from '../../mail/errors.js';
import type { QueryNode } from '../../mail/query/index.js';
import type { MessageRef, Page } from '../../mail/types.js';
import type { SearchOptions } from '../mailbox.js';
import { imapMessageFacts, matchesLocally } from './facts.js';
import { placesOf } from './folders.js';
import { labelNamesOf, planSearch } from './query.js';
import type { FolderModel, SearchPlan } from './query.js';
import {
  examine,
  fetchCopies,
  holds,
  labelIdsOf,
  mergeCopies,
  readCopy,
  searchUids,
  toMailMessage,
} from './reader.js';
import type { ReadMessage } from './reader.js';
import { mayIndex } from './threads.js';
import type { IndexUse } from './threads.js';

/*
 * Search pages on IMAP: the planned folders' hits (UID SEARCH, or the folder index where the
 * criteria are ALL), grouped into threads or kept as messages, newest first, paged by a cursor;
 * then, for terms IMAP SEARCH cannot decide the way Gmail does, the page's hits read and checked
 * locally. ImapMailbox (mailbox.ts) runs these on its connection.
 */

/** What a search needs of the mailbox that runs it. */
export interface SearchContext {
  /** The folder index and the call's signal. */
  use: IndexUse;
  now: number;
  /** The model with keyword labels learnt (a label: term needs them). */
  withKeywords(client: ImapFlow, model: FolderModel): Promise<FolderModel>;
}

/**
 * One page of search results: the server's hits in every planned folder (UID SEARCH, then one
 * FETCH of Message-ID/References/In-Reply-To, flags and INTERNALDATE for all of them, so order
 * and threads are known without bodies), newest first, grouped into threads or kept as
 * messages; then, when the query has terms IMAP SEARCH cannot decide the way Gmail does
 * (words, attachments), the hits of the page are read and checked locally, batch by batch,
 * until the page is full.
 */
export async function searchPage(
  ctx: SearchContext,
  client: ImapFlow,
  model: FolderModel,
  node: QueryNode,
  options: SearchOptions,
  unit: 'thread' | 'message',
): Promise<Page<MessageRef>> {
  // A label: term names a label; keyword names are learnt only then.
  if (someTerm(node, (f) => f === 'label')) model = await ctx.withKeywords(client, model);
  const plan = planSearch(node, model, ctx.now);
  if (plan.empty) return { items: [], resultSizeEstimate: 0, checks: plan.checks };
  // labelIds naming a folder (a snooze folder, Labels/X) are answered in that folder, where the
  // copies carry the label; All Mail's copies would not say where they sit.
  const inFolder = (options.labelIds ?? [])
    .map((id) => model.folders.find((f) => f.labelId === id && f.kind !== 'virtual'))
    .find((f) => f !== undefined);
  const paths = inFolder === undefined ? plan.folders : [inFolder.path];
  const wanted = options.labelIds ?? [];
  // Hits are grouped and ordered from what never changes (links, dates), which the folder index
  // holds; only a label filter made of flags needs the hits' live flags.
  const folderLabels = new Set(placesOf(model).flatMap((f) => (f.labelId === undefined ? [] : [f.labelId])));
  const indexed = wanted.every((id) => folderLabels.has(id) && id !== 'DRAFT');
  const found = await searchFolders(ctx, client, model, paths, plan.criteria, indexed);
  // Copies in the observed folders only say where a hit also sits (a label folder's copy in
  // Spam); they are never hits of their own.
  const observed = await searchFolders(ctx, client, model, plan.observe, plan.criteria, indexed);
  const hitIds = new Set(found.map((m) => m.id));
  const copies = [...found, ...observed.filter((m) => hitIds.has(m.id))];
  const hits = mergeCopies(copies).filter((m) => {
    const labels = labelIdsOf(m);
    return wanted.every((id) => labels.includes(id));
  });
  const units = new Map<
    string,
    { id: string; threadId: string; date: number; key: string; hits: ReadMessage[] }
  >();
  for (const m of hits) {
    const id = unit === 'thread' ? m.threadId : m.id;
    const date = toMailMessage(m).internalDate;
    const u = units.get(id);
    if (u === undefined) units.set(id, { id, threadId: m.threadId, date, key: keyOf(id), hits: [m] });
    else {
      u.hits.push(m);
      u.date = Math.max(u.date, date);
    }
  }
  const order = sortUnits([...units.values()]);
  let start = cursorStart(order, options.pageToken);
  const local = !plan.exact;
  const items: typeof order = [];
  let consumed = start;
  if (!local) {
    items.push(...order.slice(start, start + options.maxResults));
    consumed = start + items.length;
  } else {
    const labelNames = labelNamesOf(model);
    const full = needsBody(node);
    const now = ctx.now;
    while (items.length < options.maxResults && start < order.length) {
      const batch = order.slice(start, start + options.maxResults - items.length);
      start += batch.length;
      const read = await reread(
        client,
        batch.flatMap((u) => u.hits),
        full,
      );
      for (const u of batch) {
        consumed++;
        const ok = u.hits.some((h) => {
          const m = read.get(h.id);
          if (m === undefined) return false;
          const mm = toMailMessage(m);
          return matchesLocally(
            node,
            imapMessageFacts({
              headers: m.headers,
              root: m.root,
              internalDate: mm.internalDate,
              size: mm.sizeEstimate,
              labelIds: mm.labelIds,
              labelNames,
            }),
            now,
          );
        });
        if (ok) items.push(u);
        if (items.length === options.maxResults) break;
      }
    }
  }
  const last = order[consumed - 1];
  return {
    items: items.map((u) => ({ id: u.id, threadId: u.threadId })),
    resultSizeEstimate: order.length,
    checks: plan.checks,
    ...(consumed < order.length && last !== undefined ? { nextPageToken: `i${last.date}.${last.key}` } : {}),
  };
}

/**
 * UID SEARCH in each folder (none when the criteria are ALL and the index holds the folder),
 * then the hits' links, date and size: from the folder index where it holds them (`indexed`:
 * the caller needs no flags), else one FETCH of links, flags, date and size.
 */
async function searchFolders(
  ctx: SearchContext,
  client: ImapFlow,
  model: FolderModel,
  paths: readonly string[],
  criteria: SearchPlan['criteria'],
  indexed: boolean,
): Promise<ReadMessage[]> {
  const out: ReadMessage[] = [];
  for (const path of paths) {
    const folder = model.folders.find((f) => f.path === path);
    if (folder === undefined) continue;
    const all = Object.keys(criteria).length === 0;
    if (indexed && !all) {
      // The search opens the folder anyway, and a fresh EXAMINE reports the numbers a STATUS
      // would: the index check of this folder costs nothing more.
      const held = holds(client, path);
      const box = await examine(client, path);
      if (!held) ctx.use.index.observed(path, box, ctx.use.signal);
    }
    const rows =
      indexed && mayIndex(ctx.use, folder)
        ? await ctx.use.index.current(client, folder, ctx.use.signal)
        : undefined;
    if (rows !== undefined) {
      if (rows.size === 0) continue;
      // Flags only, and this call read the whole folder with its flags a moment ago: those are
      // the live answer, no SEARCH needed (the first search after start, which built the index).
      const fresh = all ? undefined : flagsOnly(criteria, ctx.use.index.flagsReadIn(path, ctx.use.signal));
      if (!all && fresh === undefined) await examine(client, path);
      const uids = all
        ? [...rows.keys()]
        : (fresh?.([...rows.keys()]) ?? (await searchUids(client, criteria)));
      const unknown: number[] = [];
      for (const uid of uids) {
        const r = rows.get(uid);
        if (r === undefined) unknown.push(uid);
        else out.push(r);
      }
      for (const { copy, bytes } of await fetchCopies(client, folder, unknown, 'links'))
        out.push(readCopy(copy, bytes, false));
      continue;
    }
    const box = await examine(client, path);
    if (box.exists === 0) continue;
    const uids = await searchUids(client, criteria);
    for (const { copy, bytes } of await fetchCopies(client, folder, uids, 'links'))
      out.push(readCopy(copy, bytes, false));
  }
  return out;
}

const FLAG_KEYS: Readonly<Record<string, string>> = {
  seen: '\\Seen',
  flagged: '\\Flagged',
  answered: '\\Answered',
  draft: '\\Draft',
  deleted: '\\Deleted',
};

/**
 * A filter over UIDs answering `criteria` from `flags`, when the criteria are nothing but
 * system-flag tests (seen, flagged, answered, draft, deleted: true or false) and the flags are
 * known; undefined otherwise.
 */
export function flagsOnly(
  criteria: SearchPlan['criteria'],
  flags: ReadonlyMap<number, ReadonlySet<string>> | undefined,
): ((uids: readonly number[]) => number[]) | undefined {
  if (flags === undefined) return undefined;
  const tests: Array<[string, boolean]> = [];
  for (const [key, value] of Object.entries(criteria)) {
    const flag = FLAG_KEYS[key];
    if (flag === undefined || typeof value !== 'boolean') return undefined;
    tests.push([flag, value]);
  }
  if (tests.length === 0) return undefined;
  return (uids) =>
    uids.filter((u) => {
      const f = flags.get(u);
      return f !== undefined && tests.every(([flag, want]) => f.has(flag) === want);
    });
}

/** The hits' whole headers (or sources), one FETCH per folder. */
async function reread(
  client: ImapFlow,
  hits: readonly ReadMessage[],
  full: boolean,
): Promise<Map<string, ReadMessage>> {
  const byFolder = new Map<
    string,
    { folder: (typeof hits)[number]['copies'][number]['folder']; uids: number[] }
  >();
  for (const h of hits) {
    const c = h.copies[0];
    if (c === undefined) continue;
    const entry = byFolder.get(c.folder.path) ?? { folder: c.folder, uids: [] };
    entry.uids.push(c.uid);
    byFolder.set(c.folder.path, entry);
  }
  const out: ReadMessage[] = [];
  for (const { folder, uids } of byFolder.values())
    for (const r of await fetchCopies(client, folder, uids, full ? 'full' : 'metadata'))
      out.push(readCopy(r.copy, r.bytes, full));
  const map = new Map<string, ReadMessage>();
  for (const m of out) {
    // Keep every copy's place (labels come from all of them), with the flags just read where
    // this read saw the copy.
    const hit = hits.find((h) => h.id === m.id);
    const live = (c: ReadMessage['copies'][number]) =>
      m.copies.find((x) => x.folder.path === c.folder.path && x.uid === c.uid) ?? c;
    map.set(m.id, hit === undefined ? m : { ...m, copies: hit.copies.map(live) });
  }
  return map;
}

/**
 * A query that only lists the inbox: an `in:inbox` that every hit must satisfy, and no other
 * place named (in:, label:, category:) anywhere, so no folder but INBOX decides what matches.
 * Such a listing may leave other folders unchecked (src/providers/freshness.ts).
 */
export function listsInboxOnly(node: QueryNode): boolean {
  const isInbox = (n: QueryNode) =>
    n.type === 'term' && n.field === 'in' && n.value.toLowerCase() === 'inbox';
  const required = isInbox(node) || (node.type === 'and' && node.children.some(isInbox));
  if (!required) return false;
  const names = (n: QueryNode): number => {
    switch (n.type) {
      case 'and':
      case 'or':
        return n.children.reduce((k, c) => k + names(c), 0);
      case 'not':
        return names(n.child);
      case 'term':
        return n.field === 'in' || n.field === 'label' || n.field === 'category' ? 1 : 0;
    }
  };
  return names(node) === 1;
}

function someTerm(node: QueryNode, test: (field: string | null) => boolean): boolean {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.children.some((c) => someTerm(c, test));
    case 'not':
      return someTerm(node.child, test);
    case 'term':
      return test(node.field);
  }
}

/** Free text, attachments and file names are only known from the source. */
const needsBody = (node: QueryNode): boolean =>
  someTerm(node, (f) => f === null || f === 'has' || f === 'filename');

export function checkMax(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > 500)
    throw invalidInput('maxResults', 'must be an integer from 1 to 500');
}

/** A short, stable tiebreak for the page cursor (ids can be long). */
const keyOf = (id: string): string => createHash('sha256').update(id).digest('base64url').slice(0, 12);

function sortUnits<T extends { date: number; key: string }>(order: T[]): T[] {
  return order.sort((a, b) => b.date - a.date || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Pages run by a cursor (date, key) rather than an offset, so mail that arrives between calls
 * cannot shift a page: the next page starts strictly after the last item looked at.
 */
function cursorStart(order: ReadonlyArray<{ date: number; key: string }>, token: string | undefined): number {
  if (token === undefined) return 0;
  const m = /^i(\d+)\.([A-Za-z0-9_-]{12})$/.exec(token);
  if (m === null) throw invalidInput('pageToken', 'is not a page token from this IMAP account');
  const date = Number(m[1]);
  const key = m[2] as string;
  const i = order.findIndex((o) => o.date < date || (o.date === date && o.key > key));
  return i < 0 ? order.length : i;
}
