import type { gmail_v1 } from '@googleapis/gmail';
import type { Clock } from '../mail/clock.js';
import { notFound } from './errors.js';

export type HistoryType = 'messageAdded' | 'messageDeleted' | 'labelAdded' | 'labelRemoved';
export const HISTORY_TYPES: readonly HistoryType[] = [
  'messageAdded',
  'messageDeleted',
  'labelAdded',
  'labelRemoved',
];

/** One change to one message, as Gmail records it. */
interface HistoryRecord {
  id: number;
  at: number;
  messageId: string;
  threadId: string;
  /** The message's labels right after the change (what Gmail shows in the record). */
  labelIds: string[];
  added: boolean;
  deleted: boolean;
  labelsAdded: string[];
  labelsRemoved: string[];
}

export interface HistoryQuery {
  startHistoryId: number;
  types?: ReadonlySet<HistoryType>;
  labelId?: string;
  maxResults: number;
  /** Last record id already served. */
  after?: number;
}

/**
 * A user's history: the monotonic historyId and the change records behind history.list.
 * Records older than the retention window (sandbox clock) are dropped; a start id from before the
 * oldest dropped record cannot be answered completely, so it gets Gmail's 404 and the client
 * must do a full sync.
 */
export class HistoryLog {
  private current: number;
  /** The lowest startHistoryId that can still be answered without a gap. */
  private floor: number;
  private records: HistoryRecord[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly retentionMs: number,
    startId: number,
  ) {
    this.current = startId;
    this.floor = startId;
  }

  get historyId(): number {
    return this.current;
  }

  /** Seeded mail is the mailbox's prehistory: it has no records, so no earlier start id is answerable. */
  seal(): void {
    this.floor = this.current;
  }

  /** A change with no message record (label metadata): ids still move forward, as in Gmail. */
  bump(): number {
    this.current += 1;
    return this.current;
  }

  record(change: Omit<HistoryRecord, 'id' | 'at'>): number {
    const id = this.bump();
    this.records.push({ ...change, id, at: this.clock.now() });
    return id;
  }

  list(query: HistoryQuery): { history: gmail_v1.Schema$History[]; nextPageToken?: number } {
    this.prune();
    if (query.startHistoryId < this.floor) throw notFound();
    const from = Math.max(query.startHistoryId, query.after ?? 0);
    const out: gmail_v1.Schema$History[] = [];
    let lastId = 0;
    for (const rec of this.records) {
      if (rec.id <= from) continue;
      const rendered = render(rec, query);
      if (!rendered) continue;
      if (out.length === query.maxResults) return { history: out, nextPageToken: lastId };
      out.push(rendered);
      lastId = rec.id;
    }
    return { history: out };
  }

  private prune(): void {
    const horizon = this.clock.now() - this.retentionMs;
    let drop = 0;
    while (drop < this.records.length && (this.records[drop]?.at ?? Infinity) < horizon) drop += 1;
    if (drop === 0) return;
    const lastDropped = this.records[drop - 1];
    if (lastDropped) this.floor = Math.max(this.floor, lastDropped.id);
    this.records.splice(0, drop);
  }
}

function render(rec: HistoryRecord, query: HistoryQuery): gmail_v1.Schema$History | undefined {
  if (query.labelId !== undefined) {
    const touched = [...rec.labelIds, ...rec.labelsAdded, ...rec.labelsRemoved];
    if (!touched.includes(query.labelId)) return undefined;
  }
  const want = (t: HistoryType): boolean => query.types === undefined || query.types.has(t);
  const ref = { id: rec.messageId, threadId: rec.threadId };
  const withLabels = (): gmail_v1.Schema$Message =>
    rec.labelIds.length > 0 ? { ...ref, labelIds: [...rec.labelIds] } : { ...ref };
  const out: gmail_v1.Schema$History = { id: String(rec.id), messages: [ref] };
  let any = false;
  if (rec.added && want('messageAdded')) {
    out.messagesAdded = [{ message: withLabels() }];
    any = true;
  }
  if (rec.deleted && want('messageDeleted')) {
    out.messagesDeleted = [{ message: { ...ref } }];
    any = true;
  }
  if (rec.labelsAdded.length > 0 && want('labelAdded')) {
    out.labelsAdded = [{ message: withLabels(), labelIds: [...rec.labelsAdded] }];
    any = true;
  }
  if (rec.labelsRemoved.length > 0 && want('labelRemoved')) {
    out.labelsRemoved = [{ message: withLabels(), labelIds: [...rec.labelsRemoved] }];
    any = true;
  }
  return any ? out : undefined;
}
