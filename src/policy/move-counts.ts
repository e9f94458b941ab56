import { MailError } from '../mail/errors.js';
import { LogUnreadable, MOVE_ACTIONS, MoveGroups, OUT_ACTIONS, localDay, scanActionLog } from './move-log.js';
import type { LogProblem, MoveAction, MoveGroup } from './move-log.js';

/*
 * Exact counts of what the write policy let through, from the action log (count_moves): the
 * same reader and the same (call, ids) grouping as the daily cap, so a week's summary and the
 * cap never disagree about a line. Nothing is estimated: a write whose latest line is still
 * pending or unknown is counted as unknown, and a damaged line is reported by number.
 */

/** Local days, YYYY-MM-DD, both included. */
export interface DayRange {
  from: string;
  to: string;
}

/** Items (one log group each) by what they were: a message, or a whole thread. */
export interface UnitCounts {
  messages: number;
  threads: number;
}

export interface ActorCounts {
  /** Items that moved, by kind. */
  moved: Record<MoveAction, UnitCounts>;
  /** Messages the moved items took out of the inbox (what the daily cap counts for the agent). */
  messagesOutOfInbox: number;
  refused: { items: number; byRule: Record<string, number> };
  failed: number;
  /** Latest line pending or unknown: the write may or may not have happened. */
  unknown: { items: number; byKind: Record<MoveAction, number> };
}

export interface SenderCount {
  /** null: the item had no sender address. */
  sender: string | null;
  /** Items the agent / the sender rules moved out of the inbox (archive, spam, trash, snooze). */
  agent: number;
  rule: number;
  /** Every moved item of this sender by kind, restores and label changes apart from moves out. */
  byKind: Partial<Record<MoveAction, number>>;
}

export interface MoveCounts {
  from: string;
  to: string;
  timeZone: string;
  agent: ActorCounts;
  rule: ActorCounts;
  /** Moved items per sender, most first, at most `top`. */
  bySender: SenderCount[];
  /** Distinct senders with moved items in the range, no sender being one (bySender may list fewer). */
  senders: number;
  /** Damaged lines anywhere in the log (the first 50): their records could not be counted. */
  damagedLines: LogProblem[];
  damagedLineCount: number;
  /** No damaged line: the counts are exact. */
  complete: boolean;
  lines: number;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Midnight UTC of a YYYY-MM-DD day; undefined when it is not a calendar day. */
export function dayStart(day: string): number | undefined {
  const m = DAY.exec(day);
  if (!m) return undefined;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(t).toISOString().slice(0, 10) === day ? t : undefined;
}

/** The day `n` days after a YYYY-MM-DD day (n may be negative). */
export function addDays(day: string, n: number): string {
  const t = dayStart(day);
  if (t === undefined) throw new Error(`not a day: ${day}`);
  return new Date(t + n * 86_400_000).toISOString().slice(0, 10);
}

function emptyActor(): ActorCounts {
  const kinds = <T>(f: () => T): Record<MoveAction, T> =>
    Object.fromEntries(MOVE_ACTIONS.map((k) => [k, f()])) as Record<MoveAction, T>;
  return {
    moved: kinds(() => ({ messages: 0, threads: 0 })),
    messagesOutOfInbox: 0,
    refused: { items: 0, byRule: {} },
    failed: 0,
    unknown: { items: 0, byKind: kinds(() => 0) },
  };
}

/** Counts the groups whose first line falls on a day of the range (local days of `timeZone`). */
export function countGroups(
  groups: Iterable<MoveGroup>,
  range: DayRange,
  timeZone: string,
  top: number,
): Pick<MoveCounts, 'agent' | 'rule' | 'bySender' | 'senders'> {
  const out = { agent: emptyActor(), rule: emptyActor() };
  const senders = new Map<string | null, SenderCount>();
  for (const g of groups) {
    const day = localDay(g.first.at, timeZone);
    if (day < range.from || day > range.to) continue;
    const o = g.first.record;
    // A person's restores (undo, the review page) are not what count_moves reports on.
    if (o['actor'] === 'human') continue;
    const actor = o['actor'] === 'rule' ? 'rule' : 'agent';
    const action = o['action'] as MoveAction;
    const a = out[actor];
    switch (g.outcome) {
      case 'moved': {
        a.moved[action][o['unit'] === 'thread' ? 'threads' : 'messages']++;
        a.messagesOutOfInbox += g.count;
        const raw = o['sender'];
        const sender = typeof raw === 'string' && raw !== '' ? raw.toLowerCase() : null;
        const s = senders.get(sender) ?? { sender, agent: 0, rule: 0, byKind: {} };
        if (OUT_ACTIONS.has(action)) s[actor]++;
        s.byKind[action] = (s.byKind[action] ?? 0) + 1;
        senders.set(sender, s);
        break;
      }
      case 'refused': {
        a.refused.items++;
        const rule = typeof o['refusedBy'] === 'string' ? o['refusedBy'] : 'policy';
        // The refusal is on the group's latest line, which for a refusal is its only line.
        a.refused.byRule[rule] = (a.refused.byRule[rule] ?? 0) + 1;
        break;
      }
      case 'failed':
        a.failed++;
        break;
      case 'pending':
      case 'unknown':
        a.unknown.items++;
        a.unknown.byKind[action]++;
        break;
    }
  }
  const total = (c: SenderCount): number => Object.values(c.byKind).reduce((n, k) => n + k, 0);
  const ranked = [...senders.values()].sort(
    (x, y) =>
      y.agent + y.rule - (x.agent + x.rule) ||
      total(y) - total(x) ||
      (x.sender ?? '\uffff').localeCompare(y.sender ?? '\uffff'),
  );
  return { ...out, bySender: ranked.slice(0, top), senders: senders.size };
}

/**
 * The instants (ms) a backend reads records between for a range of local days: a local day
 * starts at most 14 hours either side of UTC midnight, so the window is generous.
 */
export function rangeWindow(range: DayRange): { lower: number; upper: number } {
  const from = dayStart(range.from);
  const to = dayStart(range.to);
  if (from === undefined || to === undefined) throw new Error('countMoves: bad range');
  return { lower: from - 36 * 3_600_000, upper: to + 60 * 3_600_000 };
}

/** Damaged lines listed in a result; damagedLineCount has them all. */
const MAX_DAMAGED = 50;

/**
 * Reads the log once and counts the account's move records in the range. A damaged line is
 * listed (its record may belong to the range), never skipped silently; a log that cannot be
 * read is an error.
 */
export async function countMoves(
  log: { path: string },
  account: string,
  range: DayRange,
  timeZone: string,
  top: number,
): Promise<MoveCounts> {
  const { lower, upper } = rangeWindow(range);
  const groups = new MoveGroups();
  const damaged: LogProblem[] = [];
  let lines: number;
  try {
    ({ lines } = await scanActionLog(
      log.path,
      (r) => {
        const o = r.record;
        if (o['kind'] !== 'move' || o['account'] !== account) return;
        if (r.at < lower || r.at > upper) return;
        groups.add(r);
      },
      (p) => damaged.push(p),
    ));
  } catch (e) {
    if (e instanceof LogUnreadable)
      throw new MailError('internal_error', `the action log ${log.path} cannot be read: ${e.message}`, {
        cause: e,
        retryable: false,
      });
    throw e;
  }
  return {
    from: range.from,
    to: range.to,
    timeZone,
    ...countGroups(groups.values(), range, timeZone, top),
    damagedLines: damaged.slice(0, MAX_DAMAGED),
    damagedLineCount: damaged.length,
    complete: damaged.length === 0,
    lines,
  };
}
