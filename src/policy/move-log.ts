import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { MailError } from '../mail/errors.js';
import { TORN_LINE_MARK } from './action-log.js';

/**
 * Reading the write policy's records back out of the action log: one streamed reader that checks
 * every line, and one grouping of a write's intent and outcome lines. The daily cap
 * (move-cap.ts) and count_moves (move-counts.ts) both read the log through here, so they agree
 * on what a line means and on which lines are damaged.
 */

export const MOVE_ACTIONS = ['archive', 'spam', 'trash', 'snooze', 'restore', 'label'] as const;
export type MoveAction = (typeof MOVE_ACTIONS)[number];
/** The actions that take mail out of the inbox, the ones the cap counts. */
export const OUT_ACTIONS: ReadonlySet<MoveAction> = new Set(['archive', 'spam', 'trash', 'snooze']);

export const MOVE_OUTCOMES = ['pending', 'moved', 'refused', 'failed', 'unknown'] as const;
/**
 * pending: the intent line, written before the provider write (inside the write lock for a
 * counted move); moved:
 * done; refused: the policy said no and nothing ran; failed: the provider said it did not
 * happen; unknown: it may have happened (a timeout, a crash).
 */
export type MoveOutcome = (typeof MOVE_OUTCOMES)[number];

/** A line that is not a record the readers can trust, by its 1-based line number. */
export interface LogProblem {
  line: number;
  problem: string;
}

/** The file could not be opened or read (not: a line in it is damaged). */
export class LogUnreadable extends Error {
  override readonly name = 'LogUnreadable';
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** The local day (YYYY-MM-DD) of an instant in a time zone. */
export function localDay(instant: number, timeZone: string): string {
  let f = dayFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormatters.set(timeZone, f);
  }
  return f.format(instant);
}

function checkMove(o: Record<string, unknown>): string | undefined {
  if (!(MOVE_ACTIONS as readonly unknown[]).includes(o['action']))
    return 'a move record with no known action';
  if (o['actor'] !== 'agent' && o['actor'] !== 'rule' && o['actor'] !== 'human')
    return 'a move record with no known actor';
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

/** Where a scan of the log stopped: its inode, the bytes of whole lines read, and their count. */
export interface ScanMark {
  ino: number;
  offset: number;
  line: number;
}

/** A checked line: a JSON object with a time and an account, and a move record's fields. */
export interface LogRecord {
  line: number;
  /** Milliseconds since the epoch, from the record's time. */
  at: number;
  record: Record<string, unknown>;
}

function parseLine(text: string): { record: Record<string, unknown>; at: number } | { problem: string } {
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return { problem: 'not a JSON object' };
    o = parsed as Record<string, unknown>;
  } catch {
    return { problem: 'not valid JSON' };
  }
  const at = typeof o['time'] === 'string' ? Date.parse(o['time']) : Number.NaN;
  if (Number.isNaN(at) || typeof o['account'] !== 'string')
    return { problem: 'a record without a time or an account' };
  if (o['kind'] === 'move') {
    const problem = checkMove(o);
    if (problem !== undefined) return { problem };
  }
  return { record: o, at };
}

/**
 * Reads the whole log, streamed 1 MiB at a time, handing each good line to `onRecord` and each
 * damaged one to `onDamaged` (which may throw to stop the read). Two kinds of bad line are not
 * damage, both left by a crash mid-append and both harmless because a move's intent line is
 * written before the provider write: a last line without its newline, and a line the next append
 * marked as torn (ActionLog.appendMany). A missing file reads as empty (found: false); a file that
 * cannot be read throws LogUnreadable.
 */
export async function scanActionLog(
  path: string,
  onRecord: (r: LogRecord) => void,
  onDamaged: (p: LogProblem) => void,
  /**
   * Where an earlier scan of the same file stopped: only what was appended since is read, when
   * the file is still that file (same inode) and no shorter (else it is read from the start).
   */
  from?: ScanMark,
): Promise<{ lines: number; found: boolean; resumed: boolean; mark?: ScanMark }> {
  let pending: LogProblem | undefined;
  let lineNo = 0;
  const onLine = (text: string): void => {
    lineNo++;
    if (text.trim() === '') return;
    const parsed = parseLine(text);
    if ('problem' in parsed) {
      if (pending) onDamaged(pending);
      pending = { line: lineNo, problem: parsed.problem };
      return;
    }
    if (pending) {
      if (parsed.record['op'] !== TORN_LINE_MARK) onDamaged(pending);
      pending = undefined;
    }
    onRecord({ line: lineNo, at: parsed.at, record: parsed.record });
  };

  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { lines: 0, found: false, resumed: false };
    throw new LogUnreadable((e as Error).message, { cause: e });
  }
  let endsWithNewline = true;
  let resumed = false;
  let ino = 0;
  // Bytes of whole lines read, from the start of the file.
  let consumed = 0;
  try {
    let size: number;
    try {
      ({ ino, size } = await fh.stat());
    } catch (e) {
      throw new LogUnreadable((e as Error).message, { cause: e });
    }
    if (from !== undefined && from.ino === ino && from.offset <= size) {
      resumed = true;
      consumed = from.offset;
      lineNo = from.line;
    }
    let position = consumed;
    // Sized to what there is to read (most scans read a few lines), never zero-filled.
    const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(1 << 20, size - position)));
    let carry = Buffer.alloc(0);
    for (;;) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await fh.read(chunk, 0, chunk.length, position));
      } catch (e) {
        throw new LogUnreadable((e as Error).message, { cause: e });
      }
      if (bytesRead === 0) break;
      position += bytesRead;
      // Splitting on the byte 0x0A is safe in UTF-8: it never occurs inside a multi-byte sequence.
      let buf = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      let nl: number;
      while ((nl = buf.indexOf(0x0a)) >= 0) {
        onLine(buf.subarray(0, nl).toString('utf8'));
        consumed += nl + 1;
        buf = buf.subarray(nl + 1);
      }
      carry = Buffer.from(buf);
    }
    if (carry.length > 0) {
      endsWithNewline = false;
      onLine(carry.toString('utf8'));
    }
  } finally {
    await fh.close();
  }
  // A bad last line is a torn append only when its newline never made it to the disk.
  if (pending && (endsWithNewline || pending.line !== lineNo)) onDamaged(pending);
  // A line still without its newline is read again next time, whole.
  const mark =
    pending === undefined ? { ino, offset: consumed, line: lineNo - (endsWithNewline ? 0 : 1) } : undefined;
  return { lines: lineNo, found: true, resumed, ...(mark === undefined ? {} : { mark }) };
}

/** One write of one item: its intent line and its outcome line (or only one of them). */
export interface MoveGroup {
  /** The group's first line: what was asked, and when (its day is the group's day). */
  first: LogRecord;
  /** The latest line's outcome: it stands (a pending line with no outcome after it stays pending). */
  outcome: MoveOutcome;
  /** The latest line's count of messages out of the inbox. */
  count: number;
  /** The latest line (its error, when the write failed). */
  last: LogRecord;
}

/**
 * Groups move records by (call, ids), the key that ties an intent line to its outcome line; a
 * record without a call (written before calls had ids) is a group of its own.
 */
export class MoveGroups {
  private readonly groups = new Map<string, MoveGroup>();

  add(r: LogRecord): void {
    const o = r.record;
    const key =
      typeof o['call'] === 'string'
        ? `${o['call']}\u0000${(o['ids'] as string[]).join('\u0001')}`
        : `#${r.line}`;
    const prev = this.groups.get(key);
    this.groups.set(key, {
      first: prev?.first ?? r,
      outcome: o['outcome'] as MoveOutcome,
      count: o['count'] as number,
      last: r,
    });
  }

  values(): IterableIterator<MoveGroup> {
    return this.groups.values();
  }

  get size(): number {
    return this.groups.size;
  }
}

/** Which records a reader wants: times within [lower, upper] (ms), of these accounts (all when absent). */
export interface LogQuery {
  lower: number;
  upper: number;
  accounts?: ReadonlySet<string>;
  /** Only records of this kind ("move": the write policy's records). */
  kind?: 'move';
}

/**
 * The action log as its readers see it, whichever backend keeps it (MAILWARDEN_STATE): the file
 * (fileLogSource below) or the state database (src/store/pg/action-log.ts). Records come in the
 * order they were written, each with its position in the log as `line` (a file line number, or
 * the row id), so MoveGroups ties an intent to its outcome the same way on both.
 */
export interface LogSource {
  /** Where the log is, for messages: the file's path or the state database's name. */
  readonly name: string;
  read(
    query: LogQuery,
    onRecord: (r: LogRecord) => void,
    /** A damaged line anywhere in the log (the file only: a database row is checked when written). */
    onDamaged: (p: LogProblem) => void,
  ): Promise<{ lines: number; found: boolean }>;
}

/** Whether a checked record is one a query asks for. */
export function matchesQuery(q: LogQuery, r: LogRecord): boolean {
  if (q.kind !== undefined && r.record['kind'] !== q.kind) return false;
  if (q.accounts !== undefined && !q.accounts.has(r.record['account'] as string)) return false;
  return r.at >= q.lower && r.at <= q.upper;
}

/** The action log file, read whole and filtered (scanActionLog); unreadable is an internal_error. */
export function fileLogSource(path: string): LogSource {
  return {
    name: path,
    async read(query, onRecord, onDamaged) {
      try {
        const { lines, found } = await scanActionLog(
          path,
          (r) => {
            if (matchesQuery(query, r)) onRecord(r);
          },
          onDamaged,
        );
        return { lines, found };
      } catch (e) {
        if (e instanceof LogUnreadable)
          throw new MailError('internal_error', `the action log ${path} cannot be read: ${e.message}`, {
            cause: e,
            retryable: false,
          });
        throw e;
      }
    },
  };
}
