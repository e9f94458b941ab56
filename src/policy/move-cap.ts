import type { MailPlace } from '../mail/types.js';
import { MailError } from '../mail/errors.js';
import { LogUnreadable, MoveGroups, OUT_ACTIONS, localDay, scanActionLog } from './move-log.js';
import type { LogRecord, MoveAction, MoveOutcome, ScanMark } from './move-log.js';

export { MOVE_ACTIONS, MOVE_OUTCOMES, OUT_ACTIONS, localDay } from './move-log.js';
export type { MoveAction, MoveOutcome } from './move-log.js';

/**
 * The daily cap on agent moves, counted from the action log on every check and never from
 * memory, so neither a restart nor a second process (HTTP server, stdio server, cron sweep) can
 * hand out a fresh cap. The unit is one message: a thread counts as the messages it takes out of
 * the inbox.
 */

/** Who asked for a move. Only the agent's moves are capped; a person's are logged, never capped. */
export type MoveActor = 'agent' | 'rule' | 'human';

/** pending and unknown count: either may have happened. */
const COUNTED: ReadonlySet<string> = new Set<MoveOutcome>(['pending', 'moved', 'unknown']);

/** One line of the action log written by the write policy, one per item of a call. */
export interface MoveRecord {
  time: string;
  account: string;
  tool: string;
  op: 'move';
  kind: 'move';
  action: MoveAction;
  /** agent: the model asked; rule: a sender rule or a snooze sweep did it; human: a person (undo, review). */
  actor: MoveActor;
  /** Ties an intent line to its outcome line: the latest line of a (call, ids) pair stands. */
  call?: string;
  unit: 'message' | 'thread';
  ids: string[];
  /** Messages this record takes out of the inbox (what the cap counts). */
  count: number;
  outcome: MoveOutcome;
  messageId?: string;
  /** IMAP: the copies it moved or would move (folder, UIDVALIDITY, UID), as they were before. */
  places?: MailPlace[];
  sender?: string;
  subject?: string;
  /** The sender rule that moved it (actor "rule"). */
  senderRule?: string;
  /** The policy rule that refused it. */
  refusedBy?: string;
  reason?: string;
  /** A human confirmed lifting the cap for this call. */
  capLiftedBy?: 'human';
  error?: string;
  /** The HTTP client (clients.json) whose call this was, as on ActionRecord. */
  client?: string;
}

export interface MoveRecordInput {
  account: string;
  tool: string;
  action: MoveAction;
  actor: MoveActor;
  ids: readonly string[];
  unit?: 'message' | 'thread';
  /** Defaults to the number of ids (messages). */
  count?: number;
  outcome: MoveOutcome;
  call?: string;
  time?: string;
  messageId?: string;
  places?: MailPlace[];
  sender?: string;
  subject?: string;
  senderRule?: string;
  refusedBy?: string;
  reason?: string;
  capLiftedBy?: 'human';
  error?: string;
}

/** Subjects come from mail; the log keeps enough to recognise one, not a whole paragraph. */
const MAX_SUBJECT = 200;

export function moveRecord(input: MoveRecordInput): MoveRecord {
  const { ids, unit, count, subject, time, ...rest } = input;
  const out: MoveRecord = {
    time: time ?? new Date().toISOString(),
    op: 'move',
    kind: 'move',
    ...rest,
    unit: unit ?? 'message',
    ids: [...ids],
    count: count ?? ids.length,
  };
  if (subject !== undefined)
    out.subject = subject.length > MAX_SUBJECT ? `${subject.slice(0, MAX_SUBJECT)}…` : subject;
  return out;
}

let zone: { tz: string | undefined; name: string } | undefined;

/**
 * The server's zone, from the runtime's own tz data (TZ honoured). Kept while TZ is unchanged:
 * building the formatter that knows it costs more CPU than the rest of a one-thread write's policy.
 */
export function serverTimeZone(): string {
  const tz = process.env['TZ'];
  if (zone === undefined || zone.tz !== tz)
    zone = { tz, name: Intl.DateTimeFormat().resolvedOptions().timeZone };
  return zone.name;
}

/** One local day is at most 25 hours long (a DST fall-back day), so this bounds "same day". */
const SAME_DAY_WINDOW_MS = 26 * 3_600_000;

export interface MovesToday {
  /** Messages moved out of the inbox by the agent today (local day), counted as above. */
  used: number;
  /** The local day counted, YYYY-MM-DD. */
  day: string;
  timeZone: string;
  /** Lines read, for the curious (and the benchmark). */
  lines: number;
}

function stopped(path: string, why: string): MailError {
  return new MailError(
    'forbidden_operation',
    `moves out of the inbox are stopped: ${why}, so today's count of agent moves cannot be trusted. Nothing was moved. Look at that line of ${path}: repair or delete it (a line the server tore in a crash is usually the fragment of one record), or move the file aside (mv "${path}" "${path}.damaged") to start a new log; then try again.`,
    { retryable: false },
  );
}

/**
 * What this process has read of an account's agent moves out of the inbox, by log file: the
 * records of the last SAME_DAY_WINDOW_MS and where the read stopped. Every check still reads the
 * log (what was appended since, by any process); a log replaced or cut short is read again whole.
 * An edit in place that leaves the file as long or longer is not seen by this process: the log is
 * appended to, and a person repairing it replaces the file or restarts the server.
 */
const readSoFar = new Map<string, { mark: ScanMark; records: LogRecord[] }>();

/**
 * Reads the log (scanActionLog, move-log.ts: from where the last check of this process stopped)
 * and counts the account's agent moves of the local day. A damaged line could be one of today's
 * moves, so it stops moves rather than being skipped; a line torn by a crash mid-append does not
 * (see scanActionLog for why that is safe).
 */
export async function movesToday(
  log: { path: string },
  account: string,
  now: number,
  timeZone: string = serverTimeZone(),
): Promise<MovesToday> {
  const key = `${log.path}\u0000${account}`;
  const before = readSoFar.get(key);
  const found: LogRecord[] = [];
  let scanned: Awaited<ReturnType<typeof scanActionLog>>;
  try {
    scanned = await scanActionLog(
      log.path,
      (r) => {
        if (!isCappedMove(r.record, account)) return;
        if (r.at < now - SAME_DAY_WINDOW_MS) return;
        found.push(r);
      },
      (p) => {
        throw stopped(log.path, `line ${p.line} is ${p.problem}`);
      },
      before?.mark,
    );
  } catch (e) {
    if (e instanceof LogUnreadable) throw stopped(log.path, `the action log cannot be read (${e.message})`);
    throw e;
  }
  const records = [...(scanned.resumed && before !== undefined ? before.records : []), ...found].filter(
    (r) => r.at >= now - SAME_DAY_WINDOW_MS,
  );
  const mark = scanned.mark;
  if (mark === undefined) readSoFar.delete(key);
  else readSoFar.set(key, { mark, records: records.filter((r) => r.line <= mark.line) });
  return { ...usedToday(records, now, timeZone), lines: scanned.lines };
}

/**
 * The pure count behind movesToday, for any backend: `records` are the account's agent move
 * records out of the inbox (any order of lines, by `line`), at least those within 26 hours of
 * `now`; the (call, ids) groups whose first line falls on the local day of `now` and whose latest
 * outcome is pending, moved or unknown count their messages.
 */
export function usedToday(
  records: Iterable<LogRecord>,
  now: number,
  timeZone: string,
): { used: number; day: string; timeZone: string } {
  const today = localDay(now, timeZone);
  const groups = new MoveGroups();
  for (const r of records) if (Math.abs(r.at - now) <= SAME_DAY_WINDOW_MS) groups.add(r);
  let used = 0;
  for (const g of groups.values())
    if (localDay(g.first.at, timeZone) === today && COUNTED.has(g.outcome)) used += g.count;
  return { used, day: today, timeZone };
}

/** Whether a log record is one of `account`'s agent moves out of the inbox (what the cap counts). */
export function isCappedMove(o: Record<string, unknown>, account: string): boolean {
  return (
    o['kind'] === 'move' &&
    o['account'] === account &&
    o['actor'] === 'agent' &&
    OUT_ACTIONS.has(o['action'] as MoveAction)
  );
}

/** How far either side of `now` a backend must read records for usedToday. */
export const SAME_DAY_WINDOW = SAME_DAY_WINDOW_MS;

/** Agent moves left today under `cap` (0: no cap, Infinity). Never negative. */
export async function remainingToday(
  log: { path: string },
  account: string,
  cap: number,
  now: number,
  timeZone: string = serverTimeZone(),
): Promise<number> {
  if (cap === 0) return Number.POSITIVE_INFINITY;
  const { used } = await movesToday(log, account, now, timeZone);
  return Math.max(0, cap - used);
}
