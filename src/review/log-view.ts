import { MailError } from '../mail/errors.js';
import { addDays, dayStart } from '../policy/move-counts.js';
import { MoveGroups, OUT_ACTIONS, localDay } from '../policy/move-log.js';
import type { LogProblem, LogRecord, LogSource, MoveAction, MoveOutcome } from '../policy/move-log.js';
import type { MoveActor } from '../policy/move-cap.js';

/*
 * The action log as a person reads it (`mailwarden log`, `mailwarden undo`, the review page): the
 * write policy's move records, one item per (call, ids) as the cap and count_moves group them
 * (move-log.ts), the item's latest line deciding its outcome, and items gathered by call. Every
 * string here may come from mail (sender, subject): the views that show them escape them.
 */

export interface LogItem {
  account: string;
  /** The ids the record names: one message or one thread. */
  ids: string[];
  unit: 'message' | 'thread';
  action: MoveAction;
  actor: MoveActor;
  /** The latest line's outcome. */
  outcome: MoveOutcome;
  tool: string;
  /** When the first line of the item was written (ms since the epoch). */
  at: number;
  call?: string;
  /** Messages the item took out of the inbox (what the cap counts). */
  count: number;
  sender?: string;
  subject?: string;
  messageId?: string;
  senderRule?: string;
  refusedBy?: string;
  reason?: string;
  error?: string;
  /** The HTTP client (clients.json) whose call it was. */
  client?: string;
}

export interface LogCall {
  /** undefined for records written before calls had ids: each such item is its own call. */
  call?: string;
  account: string;
  tool: string;
  actor: MoveActor;
  at: number;
  items: LogItem[];
}

export interface LogRange {
  /** Local days, YYYY-MM-DD, both included. */
  from: string;
  to: string;
  timeZone: string;
}

export interface LogView {
  range: LogRange;
  /** Newest first; items inside a call in the order they were judged. */
  calls: LogCall[];
  /** Damaged lines anywhere in the log (the first 50); their records are not shown. */
  damaged: LogProblem[];
  damagedCount: number;
  /** Lines of the file read, or rows of the state database read. */
  lines: number;
  /** False when there is no log file yet. */
  found: boolean;
}

/** Where an action leaves mail, as a person names the place. */
export const DESTINATION: Record<MoveAction, string> = {
  archive: 'Archive',
  spam: 'Spam',
  trash: 'Trash',
  snooze: 'Snoozed',
  restore: 'Inbox',
  label: 'labels',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function itemOf(first: Record<string, unknown>, last: Record<string, unknown>, at: number): LogItem {
  const out: LogItem = {
    account: first['account'] as string,
    ids: [...(first['ids'] as string[])],
    unit: first['unit'] === 'thread' ? 'thread' : 'message',
    action: first['action'] as MoveAction,
    actor: first['actor'] as MoveActor,
    outcome: last['outcome'] as MoveOutcome,
    tool: str(first['tool']) ?? '?',
    at,
    count: last['count'] as number,
  };
  const copy = (
    k: 'call' | 'sender' | 'subject' | 'messageId' | 'senderRule' | 'client',
    from = first,
  ): void => {
    const v = str(from[k]);
    if (v !== undefined) out[k] = v;
  };
  copy('call');
  copy('sender');
  copy('subject');
  copy('messageId');
  copy('senderRule');
  copy('client');
  // A refusal is its item's only line; an error is on the outcome line.
  for (const k of ['refusedBy', 'reason', 'error'] as const) {
    const v = str(last[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

const MAX_DAMAGED = 50;

/**
 * Reads the log once, from wherever it is kept (`source`: the file or the state database, the
 * one the server writes: ActionLog.source()): the move records of `accounts` (all when
 * undefined) whose first line falls in the range, grouped by call. A damaged line is reported by
 * number, never skipped silently.
 */
export async function readLogView(
  source: LogSource,
  range: LogRange,
  accounts?: ReadonlySet<string>,
): Promise<LogView> {
  const from = dayStart(range.from);
  const to = dayStart(range.to);
  if (from === undefined || to === undefined || range.from > range.to)
    throw new MailError('invalid_input', `not a range of days: ${range.from} to ${range.to}`, {
      field: 'since',
    });
  // A local day starts at most 14 hours either side of UTC midnight; the window is generous.
  const records: LogRecord[] = [];
  const damaged: LogProblem[] = [];
  const scanned = await source.read(
    {
      lower: from - 36 * 3_600_000,
      upper: to + 60 * 3_600_000,
      kind: 'move',
      ...(accounts === undefined ? {} : { accounts }),
    },
    (r) => records.push(r),
    (p) => damaged.push(p),
  );
  return logViewOf(records, range, { damaged, ...scanned });
}

/**
 * The view of move records already read (in log order, those of the range's window): the pure
 * half of readLogView, the same whichever backend the records came from.
 */
export function logViewOf(
  records: Iterable<LogRecord>,
  range: LogRange,
  read: { damaged: readonly LogProblem[]; lines: number; found: boolean },
): LogView {
  const groups = new MoveGroups();
  for (const r of records) if (r.record['kind'] === 'move') groups.add(r);
  const calls = new Map<string, LogCall>();
  for (const g of groups.values()) {
    const day = localDay(g.first.at, range.timeZone);
    if (day < range.from || day > range.to) continue;
    const item = itemOf(g.first.record, g.last.record, g.first.at);
    const key = item.call === undefined ? `#${g.first.line}` : `${item.account}\u0000${item.call}`;
    let c = calls.get(key);
    if (c === undefined) {
      c = {
        ...(item.call === undefined ? {} : { call: item.call }),
        account: item.account,
        tool: item.tool,
        actor: item.actor,
        at: item.at,
        items: [],
      };
      calls.set(key, c);
    }
    c.items.push(item);
  }
  return {
    range,
    calls: [...calls.values()].sort((a, b) => b.at - a.at),
    damaged: read.damaged.slice(0, MAX_DAMAGED),
    damagedCount: read.damaged.length,
    lines: read.lines,
    found: read.found,
  };
}

/** The range of the last `days` local days, today included. */
export function lastDays(now: number, days: number, timeZone: string): LogRange {
  const to = localDay(now, timeZone);
  return { from: addDays(to, -(days - 1)), to, timeZone };
}

/** Whether an item took mail out of the inbox and may have landed (what undo puts back). */
export function undoable(item: LogItem): boolean {
  return (
    (item.actor === 'agent' || item.actor === 'rule') &&
    OUT_ACTIONS.has(item.action) &&
    item.outcome !== 'refused' &&
    item.outcome !== 'failed'
  );
}

/** One day of the chart: what happened to items first written on that local day. */
export interface DayCounts {
  day: string;
  agentMoves: number;
  ruleMoves: number;
  refusals: number;
  humanRestores: number;
}

/** Per local day of the range, oldest first, from a view of that range. */
export function dailyCounts(view: LogView): DayCounts[] {
  const out = new Map<string, DayCounts>();
  for (let d = view.range.from; d <= view.range.to; d = addDays(d, 1))
    out.set(d, { day: d, agentMoves: 0, ruleMoves: 0, refusals: 0, humanRestores: 0 });
  for (const c of view.calls)
    for (const i of c.items) {
      const row = out.get(localDay(i.at, view.range.timeZone));
      if (row === undefined) continue;
      if (i.outcome === 'refused') row.refusals++;
      else if (i.outcome !== 'moved') continue;
      else if (i.actor === 'human' && i.action === 'restore') row.humanRestores++;
      else if (!OUT_ACTIONS.has(i.action)) continue;
      else if (i.actor === 'agent') row.agentMoves++;
      else if (i.actor === 'rule') row.ruleMoves++;
    }
  return [...out.values()];
}
