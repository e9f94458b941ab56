import type { Clock } from '../mail/clock.js';
import { failedPrecondition, GoogleApiError, invalidArgument, notFound } from './errors.js';
import { FilterStore } from './filters.js';
import { HistoryLog } from './history.js';
import { gmailStyleId } from './ids.js';
import type { LabelCounts, LabelInput, LabelRecord } from './labels.js';
import { NOT_ADDABLE, SYSTEM_LABELS } from './labels.js';
import type { ParsedMessage } from './message.js';
import { normalizeMessageId, parentMessageIds, parseMessage } from './message.js';

export interface StoredMessage {
  id: string;
  threadId: string;
  internalDate: number;
  parsed: ParsedMessage;
  /** Insertion-ordered, like Gmail's labelIds. */
  labelIds: Set<string>;
  /** History id of the last change to this message. */
  historyId: number;
}

export interface StoredThread {
  id: string;
  /** Oldest first. */
  messages: StoredMessage[];
  /** Stale thread index: threads.list treats this thread as unread (see search.ts). */
  staleUnread: boolean;
}

export interface MailboxOptions {
  clock: Clock;
  historyRetentionMs: number;
  /** Read at change time: the stale index only remembers unread state while it is switched on. */
  staleThreadIndex: () => boolean;
}

/** First history id; Gmail's are large integers, and clients must not assume they start at 1. */
const FIRST_HISTORY_ID = 100_000;

/** One user's mailbox: labels, messages, threads and the history of every change. */
export class UserMailbox {
  readonly labels = new Map<string, LabelRecord>();
  readonly messages = new Map<string, StoredMessage>();
  readonly threads = new Map<string, StoredThread>();
  readonly history: HistoryLog;
  readonly filters: FilterStore = new FilterStore(this);
  private readonly threadByMessageId = new Map<string, string>();
  private seq = 0;
  private labelSeq = 0;
  private labelNameCache: Map<string, string> | undefined;

  constructor(
    readonly email: string,
    private readonly options: MailboxOptions,
  ) {
    this.history = new HistoryLog(options.clock, options.historyRetentionMs, FIRST_HISTORY_ID);
    for (const label of SYSTEM_LABELS) this.labels.set(label.id, { ...label });
  }

  // ---- messages -------------------------------------------------------------------------------

  /**
   * Adds a message. Placed as a reply, it joins the thread of the nearest message it replies to
   * (In-Reply-To, then References), as Gmail threads replies, else starts one. Seeds place
   * messages explicitly, because their threads are given.
   */
  addMessage(
    source: string | Uint8Array,
    labelIds: readonly string[],
    internalDate: number,
    opts: {
      placement: 'reply' | 'new-thread' | { threadId: string };
      record: boolean;
      applyFilters?: boolean;
    },
  ): StoredMessage {
    for (const id of labelIds)
      if (!this.labels.has(id)) throw new Error(`${this.email}: unknown label id ${id}`);
    const parsed = parseMessage(source, internalDate);
    const id = this.nextMessageId(internalDate);
    const placement = opts.placement;
    const threadId =
      placement === 'new-thread'
        ? id
        : placement === 'reply'
          ? (this.threadFor(parsed) ?? id)
          : placement.threadId;
    let thread = this.threads.get(threadId);
    if (!thread) {
      thread = { id: threadId, messages: [], staleUnread: false };
      this.threads.set(threadId, thread);
    }
    const msg: StoredMessage = {
      id,
      threadId,
      internalDate,
      parsed,
      labelIds: new Set(labelIds),
      historyId: 0,
    };
    if (opts.applyFilters) {
      // Filters act before the message is visible, so the messageAdded record carries their labels.
      const { add, remove } = this.filters.actionsFor(msg, this.options.clock.now());
      for (const l of remove) msg.labelIds.delete(l);
      for (const l of add) msg.labelIds.add(l);
    }
    msg.historyId = opts.record
      ? this.history.record({
          messageId: id,
          threadId,
          labelIds: [...msg.labelIds],
          added: true,
          deleted: false,
          labelsAdded: [],
          labelsRemoved: [],
        })
      : this.history.bump();
    this.messages.set(id, msg);
    const at = thread.messages.findIndex((m) => m.internalDate > internalDate);
    thread.messages.splice(at < 0 ? thread.messages.length : at, 0, msg);
    const own = normalizeMessageId(parsed.facts.rfc822MessageId);
    if (own !== '' && !this.threadByMessageId.has(own)) this.threadByMessageId.set(own, threadId);
    return msg;
  }

  private nextMessageId(internalDate: number): string {
    for (;;) {
      const id = gmailStyleId(internalDate, this.seq++);
      if (!this.messages.has(id) && !this.threads.has(id)) return id;
    }
  }

  private threadFor(parsed: ParsedMessage): string | undefined {
    for (const parent of parentMessageIds(parsed.headers)) {
      const threadId = this.threadByMessageId.get(normalizeMessageId(parent));
      if (threadId !== undefined) return threadId;
    }
    return undefined;
  }

  message(id: string): StoredMessage {
    const msg = this.messages.get(id);
    if (!msg) throw notFound();
    return msg;
  }

  thread(id: string): StoredThread {
    const thread = this.threads.get(id);
    if (!thread) throw notFound();
    return thread;
  }

  /** Checks label ids a client asked to add/remove; Gmail refuses unknown ones as a whole. */
  validateLabelChange(add: readonly string[], remove: readonly string[]): void {
    for (const id of [...add, ...remove]) {
      if (!this.labels.has(id)) throw invalidArgument(`Invalid label: ${id}`);
    }
    for (const id of add) if (NOT_ADDABLE.has(id)) throw invalidArgument(`Invalid label: ${id}`);
  }

  /** Applies a label change to one message; records history only when something changed. */
  changeLabels(msg: StoredMessage, add: readonly string[], remove: readonly string[]): void {
    const thread = this.threads.get(msg.threadId);
    const wasUnread = thread?.messages.some((m) => m.labelIds.has('UNREAD')) ?? false;
    const removeSet = new Set(remove);
    const added = [...new Set(add)].filter((id) => !removeSet.has(id) && !msg.labelIds.has(id));
    const removed = [...removeSet].filter((id) => msg.labelIds.has(id));
    if (added.length === 0 && removed.length === 0) return;
    for (const id of removed) msg.labelIds.delete(id);
    for (const id of added) msg.labelIds.add(id);
    // The index remembers a thread as unread until it re-indexes it, which the stale mode never does.
    if (thread && wasUnread && this.options.staleThreadIndex()) thread.staleUnread = true;
    msg.historyId = this.history.record({
      messageId: msg.id,
      threadId: msg.threadId,
      labelIds: [...msg.labelIds],
      added: false,
      deleted: false,
      labelsAdded: added,
      labelsRemoved: removed,
    });
  }

  threadHistoryId(thread: StoredThread): number {
    return thread.messages.reduce((max, m) => Math.max(max, m.historyId), 0);
  }

  // ---- labels ---------------------------------------------------------------------------------

  /** User label id → name, for the query evaluator's `label:` matching (system labels match by id). */
  labelNames(): ReadonlyMap<string, string> {
    this.labelNameCache ??= new Map(
      [...this.labels.values()].filter((l) => l.type === 'user').map((l) => [l.id, l.name]),
    );
    return this.labelNameCache;
  }

  label(id: string): LabelRecord {
    const label = this.labels.get(id);
    if (!label) throw notFound();
    return label;
  }

  /** Seeds keep their own ids (fixtures refer to them); later ids continue past the highest seen. */
  seedLabel(label: LabelRecord): void {
    this.labels.set(label.id, { messageListVisibility: 'show', labelListVisibility: 'labelShow', ...label });
    const n = /^Label_(\d+)$/.exec(label.id)?.[1];
    if (n !== undefined) this.labelSeq = Math.max(this.labelSeq, Number(n));
    this.labelNameCache = undefined;
  }

  createLabel(input: LabelInput): LabelRecord {
    if (input.name === undefined) throw invalidArgument('Invalid label name');
    this.assertNameFree(input.name, undefined);
    const label: LabelRecord = {
      id: `Label_${++this.labelSeq}`,
      name: input.name,
      type: 'user',
      messageListVisibility: input.messageListVisibility ?? 'show',
      labelListVisibility: input.labelListVisibility ?? 'labelShow',
    };
    if (input.color) label.color = input.color;
    this.labels.set(label.id, label);
    this.labelNameCache = undefined;
    this.history.bump();
    return label;
  }

  /** labels.patch merges; labels.update replaces (a missing name is then an error). */
  updateLabel(id: string, input: LabelInput, replace: boolean): LabelRecord {
    const label = this.label(id);
    if (label.type === 'system') throw invalidArgument(`Invalid label: ${id}`);
    if (replace && input.name === undefined) throw invalidArgument('Invalid label name');
    if (input.name !== undefined) this.assertNameFree(input.name, id);
    const next: LabelRecord = replace ? { id, name: label.name, type: 'user' } : { ...label };
    if (input.name !== undefined) next.name = input.name;
    if (input.messageListVisibility !== undefined) next.messageListVisibility = input.messageListVisibility;
    if (input.labelListVisibility !== undefined) next.labelListVisibility = input.labelListVisibility;
    if (input.color !== undefined) next.color = input.color;
    this.labels.set(id, next);
    this.labelNameCache = undefined;
    this.history.bump();
    return next;
  }

  /** Deleting a user label takes it off every message, and each of those is a labelRemoved record. */
  deleteLabel(id: string): void {
    const label = this.label(id);
    if (label.type === 'system') throw failedPrecondition(`Invalid delete request`);
    for (const msg of this.messages.values()) if (msg.labelIds.has(id)) this.changeLabels(msg, [], [id]);
    this.labels.delete(id);
    this.labelNameCache = undefined;
    this.history.bump();
  }

  private assertNameFree(name: string, self: string | undefined): void {
    const wanted = name.trim().toLowerCase();
    for (const l of this.labels.values()) {
      if (l.id !== self && l.name.toLowerCase() === wanted) {
        throw new GoogleApiError(409, 'Label name exists or conflicts', 'aborted');
      }
    }
  }

  labelCounts(id: string): LabelCounts {
    const counts: LabelCounts = { messagesTotal: 0, messagesUnread: 0, threadsTotal: 0, threadsUnread: 0 };
    for (const thread of this.threads.values()) {
      let inThread = false;
      let unreadInThread = false;
      for (const m of thread.messages) {
        if (!m.labelIds.has(id)) continue;
        inThread = true;
        counts.messagesTotal += 1;
        if (m.labelIds.has('UNREAD')) {
          counts.messagesUnread += 1;
          unreadInThread = true;
        }
      }
      if (inThread) counts.threadsTotal += 1;
      if (unreadInThread) counts.threadsUnread += 1;
    }
    return counts;
  }
}
