import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { MailError } from '../mail/errors.js';
import { TORN_LINE_MARK } from './action-log.js';

/**
 * The daily cap on agent moves, counted from the action log on every check and never from
 * memory, so neither a restart nor a second process (HTTP server, stdio server, cron sweep) can
 * hand out a fresh cap. The unit is one message: a thread counts as the messages it takes out of
 * the inbox.
 */

export const MOVE_ACTIONS = ['archive', 'spam', 'trash', 'snooze', 'restore', 'label'] as const;
export type MoveAction = (typeof MOVE_ACTIONS)[number];
/** The actions that take mail out of the inbox, the ones the cap counts. */
export const OUT_ACTIONS: ReadonlySet<MoveAction> = new Set(['archive', 'spam', 'trash', 'snooze']);

export const MOVE_OUTCOMES = ['pending', 'moved', 'refused', 'failed', 'unknown'] as const;
/**
 * pending: the intent line, written inside the write lock before the provider write; moved:
 * done; refused: the policy said no and nothing ran; failed: the provider said it did not
 * happen; unknown: it may have happened (a timeout, a crash). pending and unknown count.
 */
export type MoveOutcome = (typeof MOVE_OUTCOMES)[number];
const COUNTED: ReadonlySet<string> = new Set<MoveOutcome>(['pending', 'moved', 'unknown']);

/** One line of the action log written by the write policy, one per item of a call. */
export interface MoveRecord {
  time: string;
  account: string;
  tool: string;
  op: 'move';
  kind: 'move';
  action: MoveAction;
  /** agent: the model asked; rule: a sender rule or a snooze sweep did it. */
  actor: 'agent' | 'rule';
  /** Ties an intent line to its outcome line: the latest line of a (call, ids) pair stands. */
  call?: string;
  unit: 'message' | 'thread';
  ids: string[];
  /** Messages this record takes out of the inbox (what the cap counts). */
  count: number;
  outcome: MoveOutcome;
  messageId?: string;
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
}

export interface MoveRecordInput {
  account: string;
  tool: string;
  action: MoveAction;
  actor: 'agent' | 'rule';
  ids: readonly string[];
  unit?: 'message' | 'thread';
  /** Defaults to the number of ids (messages). */
  count?: number;
  outcome: MoveOutcome;
  call?: string;
  time?: string;
  messageId?: string;
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

/** The server's zone, from the runtime's own tz data (TZ honoured). */
export function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();
function localDay(instant: number, timeZone: string): string {
  let f = dayFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormatters.set(timeZone, f);
  }
  return f.format(instant);
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

type Problem = { line: number; problem: string };

function checkMove(o: Record<string, unknown>): string | undefined {
  if (!(MOVE_ACTIONS as readonly unknown[]).includes(o['action']))
    return 'a move record with no known action';
  if (o['actor'] !== 'agent' && o['actor'] !== 'rule') return 'a move record with no known actor';
  if (!(MOVE_OUTCOMES as readonly unknown[]).includes(o['outcome']))
    return 'a move record with no known outcome';
  const ids = o['ids'];
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((i) => typeof i === 'string'))
    return 'a move record without ids';
  const count = o['count'];
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0)
    return 'a move record without a count';
  if (o['call'] !== undefined && typeof o['call'] !== 'string') return 'a move record with a bad call id';
  return undefined;
}

/**
 * Reads the whole log (streamed, 1 MiB at a time) and counts the account's agent moves of the
 * local day. Every line must be a JSON object with a time and an account, and a move record
 * must have its fields: a damaged line could be one of today's moves, so it stops moves rather
 * than being skipped. Two exceptions, both left by a crash mid-append and both harmless because
 * the intent line of a move is written before the provider write: a last line without its
 * newline, and a line the next append marked as torn (ActionLog.appendMany).
 */
export async function movesToday(
  log: { path: string },
  account: string,
  now: number,
  timeZone: string = serverTimeZone(),
): Promise<MovesToday> {
  const today = localDay(now, timeZone);
  // (call, ids) → the first line's day and the latest line's outcome and count.
  const groups = new Map<string, { day: string; outcome: string; count: number }>();
  let pending: Problem | undefined;
  let lineNo = 0;
  const onLine = (text: string): void => {
    lineNo++;
    if (text.trim() === '') return;
    let o: Record<string, unknown> | undefined;
    let problem: string | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        problem = 'not a JSON object';
      else o = parsed as Record<string, unknown>;
    } catch {
      problem = 'not valid JSON';
    }
    const t = typeof o?.['time'] === 'string' ? Date.parse(o['time']) : Number.NaN;
    if (o !== undefined && (Number.isNaN(t) || typeof o['account'] !== 'string'))
      problem = 'a record without a time or an account';
    if (o !== undefined && problem === undefined && o['kind'] === 'move') problem = checkMove(o);
    if (problem !== undefined || o === undefined) {
      if (pending) throw stopped(log.path, `line ${pending.line} is ${pending.problem}`);
      pending = { line: lineNo, problem: problem ?? 'unreadable' };
      return;
    }
    if (pending) {
      if (o['op'] !== TORN_LINE_MARK) throw stopped(log.path, `line ${pending.line} is ${pending.problem}`);
      pending = undefined;
    }
    if (o['kind'] !== 'move' || o['account'] !== account || o['actor'] !== 'agent') return;
    if (!OUT_ACTIONS.has(o['action'] as MoveAction)) return;
    if (Math.abs(t - now) > SAME_DAY_WINDOW_MS) return;
    const day = localDay(t, timeZone);
    const key =
      typeof o['call'] === 'string'
        ? `${o['call']}\u0000${(o['ids'] as string[]).join('\u0001')}`
        : `#${lineNo}`;
    const prev = groups.get(key);
    groups.set(key, { day: prev?.day ?? day, outcome: o['outcome'] as string, count: o['count'] as number });
  };

  let fh: FileHandle;
  try {
    fh = await open(log.path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { used: 0, day: today, timeZone, lines: 0 };
    throw stopped(log.path, `the action log cannot be read (${(e as Error).message})`);
  }
  let endsWithNewline = true;
  try {
    const chunk = Buffer.alloc(1 << 20);
    let carry = Buffer.alloc(0);
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      // Splitting on the byte 0x0A is safe in UTF-8: it never occurs inside a multi-byte sequence.
      let buf = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      let nl: number;
      while ((nl = buf.indexOf(0x0a)) >= 0) {
        onLine(buf.subarray(0, nl).toString('utf8'));
        buf = buf.subarray(nl + 1);
      }
      carry = Buffer.from(buf);
    }
    if (carry.length > 0) {
      endsWithNewline = false;
      onLine(carry.toString('utf8'));
    }
  } catch (e) {
    if (e instanceof MailError) throw e;
    throw stopped(log.path, `the action log cannot be read (${(e as Error).message})`);
  } finally {
    await fh.close();
  }
  // A bad last line is a torn append only when its newline never made it to the disk.
  if (pending && (endsWithNewline || pending.line !== lineNo))
    throw stopped(log.path, `line ${pending.line} is ${pending.problem}`);

  let used = 0;
  for (const g of groups.values()) if (g.day === today && COUNTED.has(g.outcome)) used += g.count;
  return { used, day: today, timeZone, lines: lineNo };
}

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
