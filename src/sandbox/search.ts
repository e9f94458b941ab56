import type { MessageFacts, QueryNode } from '../mail/query/index.js';
import { evaluate, mentionsSpamOrTrash, parseQuery, substituteMe } from '../mail/query/index.js';
import { invalidArgument } from './errors.js';
import type { Cursor } from './ids.js';
import { compareDesc, pageAfter } from './ids.js';
import type { StoredMessage, StoredThread, UserMailbox } from './model.js';

export interface ListParams {
  q: string | undefined;
  labelIds: readonly string[];
  includeSpamTrash: boolean;
  maxResults: number;
  pageToken: string | undefined;
}

export interface ListResult<T> {
  items: T[];
  nextPageToken?: string;
  resultSizeEstimate: number;
}

/** Parses `q` the way Gmail reads it for this user (`me` is the mailbox's own address). */
export function compileQuery(mailbox: UserMailbox, q: string | undefined): QueryNode | undefined {
  if (q === undefined || q.trim() === '') return undefined;
  try {
    return substituteMe(parseQuery(q), mailbox.email);
  } catch {
    throw invalidArgument('Invalid query');
  }
}

interface CachedFacts {
  labelIds: ReadonlySet<string>;
  labelNames: ReadonlyMap<string, string>;
  facts: MessageFacts;
}

/**
 * One facts object per message for as long as its label set and the label names stay the same
 * objects: a list page evaluates every message, and rebuilding the facts (and the folded text
 * the query evaluator caches per facts object) for each one dominated the sandbox's CPU time in
 * bench/bulk.mjs at 10,000 messages.
 */
const factsCache = new WeakMap<StoredMessage, CachedFacts>();

export function factsFor(
  mailbox: UserMailbox,
  msg: StoredMessage,
  labelIds: ReadonlySet<string>,
): MessageFacts {
  const labelNames = mailbox.labelNames();
  const hit = factsCache.get(msg);
  if (hit !== undefined && hit.labelIds === labelIds && hit.labelNames === labelNames) return hit.facts;
  const facts = { ...msg.parsed.facts, labelIds, labelNames };
  // Stale-index views are fresh Sets each time; caching them would only churn the map.
  if (labelIds === msg.labelIds) factsCache.set(msg, { labelIds, labelNames, facts });
  return facts;
}

/**
 * A message list/search filter. Gmail leaves spam and trash out unless the query names them,
 * the caller sets includeSpamTrash, or labelIds asks for SPAM/TRASH explicitly.
 */
class Matcher {
  private readonly node: QueryNode | undefined;
  private readonly skipSpamTrash: boolean;

  constructor(
    private readonly mailbox: UserMailbox,
    private readonly params: ListParams,
    private readonly now: number,
  ) {
    this.node = compileQuery(mailbox, params.q);
    const named =
      (this.node !== undefined && mentionsSpamOrTrash(this.node)) ||
      params.labelIds.some((id) => id === 'SPAM' || id === 'TRASH');
    this.skipSpamTrash = !params.includeSpamTrash && !named;
  }

  /**
   * `labelIds` is what `q` is evaluated against (the index's view of the message); `filterLabels`
   * is what the labelIds parameter is checked against, which is the same view unless a caller
   * says otherwise.
   */
  matches(
    msg: StoredMessage,
    labelIds: ReadonlySet<string>,
    filterLabels: ReadonlySet<string> = labelIds,
  ): boolean {
    if (this.skipSpamTrash && (msg.labelIds.has('SPAM') || msg.labelIds.has('TRASH'))) return false;
    for (const id of this.params.labelIds) if (!filterLabels.has(id)) return false;
    return this.node === undefined || evaluate(this.node, factsFor(this.mailbox, msg, labelIds), this.now);
  }
}

/**
 * Per mailbox, whether messages.list answers `q` from the stale per-thread state. It is kept
 * here, beside the one function that reads it, because route handlers only carry the mailbox;
 * the Sandbox registers each mailbox it seeds.
 */
const staleMessageIndex = new WeakMap<UserMailbox, () => boolean>();

export function useStaleMessageIndex(mailbox: UserMailbox, on: () => boolean): void {
  staleMessageIndex.set(mailbox, on);
}

/** The labels the stale index believes a message has: UNREAD on every message of a stale thread. */
function staleView(mailbox: UserMailbox, msg: StoredMessage): ReadonlySet<string> {
  const stale = mailbox.threads.get(msg.threadId)?.staleUnread === true;
  return stale && !msg.labelIds.has('UNREAD') ? new Set([...msg.labelIds, 'UNREAD']) : msg.labelIds;
}

const messageKey = (m: StoredMessage): Cursor => ({ key: m.internalDate, id: m.id });
const newestFirst = (a: StoredMessage, b: StoredMessage): number => compareDesc(messageKey(a), messageKey(b));

/**
 * messages.list, newest first: the exact per-message index by default. With the stale message
 * index on, read-state predicates in `q` are answered from the same stale per-thread state
 * threads.list uses, while the labelIds parameter stays exact (it is a filter on live labels),
 * so a client can re-ask `is:unread` as labelIds=UNREAD and see the two disagree.
 */
export function listMessages(
  mailbox: UserMailbox,
  params: ListParams,
  now: number,
): ListResult<StoredMessage> {
  const stale = staleMessageIndex.get(mailbox)?.() === true;
  const key = listKey(mailbox, params, now, stale);
  let hits = lastListing.get(mailbox)?.key === key ? lastListing.get(mailbox)?.hits : undefined;
  if (hits === undefined) {
    const matcher = new Matcher(mailbox, params, now);
    hits = [...mailbox.messages.values()]
      .filter((m) => matcher.matches(m, stale ? staleView(mailbox, m) : m.labelIds, m.labelIds))
      .sort(newestFirst);
    lastListing.set(mailbox, { key, hits });
  }
  const page = pageAfter(hits, messageKey, params.pageToken, params.maxResults);
  return { ...page, resultSizeEstimate: hits.length };
}

/**
 * A client pages through one listing with the same parameters; re-evaluating every message for
 * each page made a 10,000-message bulk_modify spend most of its sandbox time here. The answer is
 * reused while nothing that could change it has: the mailbox's history id (every message and
 * label change moves it), its size, its label names, the stale-index switch and the minute
 * (relative dates in `q`).
 */
const lastListing = new WeakMap<UserMailbox, { key: string; hits: StoredMessage[] }>();
const labelNamesVersion = new WeakMap<ReadonlyMap<string, string>, number>();
let namesSeq = 0;

function listKey(mailbox: UserMailbox, params: ListParams, now: number, stale: boolean): string {
  const names = mailbox.labelNames();
  let v = labelNamesVersion.get(names);
  if (v === undefined) labelNamesVersion.set(names, (v = ++namesSeq));
  return JSON.stringify([
    params.q ?? '',
    params.labelIds,
    params.includeSpamTrash,
    stale,
    mailbox.history.historyId,
    mailbox.messages.size,
    v,
    Math.floor(now / 60_000),
  ]);
}

export interface ThreadHit {
  thread: StoredThread;
  /** Newest matching message: orders the list and supplies the snippet. */
  latest: StoredMessage;
}

/**
 * threads.list: threads with at least one matching message, ordered by their newest match.
 * With the stale index on, a thread the index still believes unread is evaluated with UNREAD on
 * every message, as Gmail's thread index was measured to do (docs/facts.md); only this list is
 * affected, every other read stays exact.
 */
export function listThreads(
  mailbox: UserMailbox,
  params: ListParams,
  now: number,
  staleIndex: boolean,
): ListResult<ThreadHit> {
  const matcher = new Matcher(mailbox, params, now);
  const hits: ThreadHit[] = [];
  for (const thread of mailbox.threads.values()) {
    const stale = staleIndex && thread.staleUnread;
    let latest: StoredMessage | undefined;
    for (const msg of thread.messages) {
      const labels = stale ? new Set([...msg.labelIds, 'UNREAD']) : msg.labelIds;
      if (matcher.matches(msg, labels) && (!latest || newestFirst(msg, latest) < 0)) latest = msg;
    }
    if (latest) hits.push({ thread, latest });
  }
  const threadKey = (h: ThreadHit): Cursor => ({ key: h.latest.internalDate, id: h.thread.id });
  hits.sort((a, b) => compareDesc(threadKey(a), threadKey(b)));
  const page = pageAfter(hits, threadKey, params.pageToken, params.maxResults);
  return { ...page, resultSizeEstimate: hits.length };
}
