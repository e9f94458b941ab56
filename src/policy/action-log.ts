import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { chmod, lstat, mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MailError } from '../mail/errors.js';
import { MARKER_DIR, anyMarker } from './move-marker.js';
import { fileLogSource } from './move-log.js';
import type { LogSource } from './move-log.js';

/** One line of the action log: what a tool changed, where, and how it ended. */
export interface ActionRecord {
  time: string;
  account: string;
  tool: string;
  /** The Mailbox write that ran, e.g. "modifyMessages". */
  op: string;
  threadIds?: string[];
  messageIds?: string[];
  labelId?: string;
  change?: { add: string[]; remove: string[] };
  detail?: Record<string, unknown>;
  /** Ties the intent line ("pending", written before the write) to its outcome line. */
  call?: string;
  /** pending with no later line of the same call: the process died mid-write, so unknown. */
  outcome: 'pending' | 'ok' | 'failed' | 'unknown';
  error?: string;
  /** The HTTP client (clients.json) whose call this was; absent for stdio, the CLI and MAILWARDEN_TOKEN. */
  client?: string;
}

/**
 * Append-only JSON lines in the config dir, mode 0600 (docs/architecture.md, promise 4); with
 * MAILWARDEN_STATE=postgres://… the runtime's log is PgActionLog (src/store/pg/action-log.ts), the
 * same interface over rows of the state database. The file is created
 * and checked writable before the first write a tool makes, so a log that cannot be written
 * stops the write instead of letting it happen unrecorded.
 */
export class ActionLog {
  private ready: Promise<void> | undefined;
  /** The file this process opened first: a later append to another file (or none) is refused. */
  private identity: { dev: number; ino: number } | undefined;
  /** The file's size right after this process's last append: it ends in that append's newline. */
  private end: number | undefined;
  constructor(readonly path: string) {}

  /**
   * Creates the file (0600) if needed and proves it can be appended to. The config dir is made
   * (or tightened to) 0700, and the file is opened with O_NOFOLLOW: a symlink planted where the
   * log belongs is refused, never followed (and its target never chmod'ed).
   */
  ensureWritable(): Promise<void> {
    this.ready ??= (async () => {
      const dir = dirname(this.path);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
      const existed = await lstat(this.path).then(
        () => true,
        () => false,
      );
      const fh = await openForAppend(this.path);
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw new Error('it is not a regular file');
        await fh.chmod(0o600);
        this.identity = { dev: st.dev, ino: st.ino };
        // A new log where moves were counted before: say so in it, so nobody reads the empty
        // start as an empty history (the cap still counts from the marker: move-marker.ts).
        if (!existed && (await anyMarker(this.path))) {
          const lost = {
            time: new Date().toISOString(),
            account: '*',
            tool: 'action-log',
            op: LOG_LOST_MARK,
            outcome: 'ok',
            detail: {
              note: `the previous action log was missing when this process started; today's move counts carry on from ${MARKER_DIR}/ beside it`,
            },
          };
          await fh.write(`${JSON.stringify(lost)}\n`);
        }
      } finally {
        await fh.close();
      }
    })().catch((e: unknown) => {
      this.ready = undefined;
      const why =
        (e as NodeJS.ErrnoException).code === 'ELOOP'
          ? 'it is a symbolic link, which the log never follows'
          : String(e);
      throw new MailError(
        'internal_error',
        `the action log at ${this.path} cannot be written, so no change was made: ${why}`,
        { cause: e },
      );
    });
    return this.ready;
  }

  async append(record: Omit<ActionRecord, 'time'> & { time?: string }): Promise<void> {
    await this.appendMany([record]);
  }

  /** Where this log's records are read back (the review page, `mailwarden log`, undo). */
  source(): LogSource {
    return fileLogSource(this.path);
  }

  /**
   * Appends records in one write(2), so a batch is all there or (torn by a crash or a full disk)
   * at worst cut short in its last line. Any record shape with an account may be written; the
   * write policy's move records (src/policy/move-cap.ts) go through here too.
   */
  async appendMany(records: ReadonlyArray<{ account: string; time?: string }>): Promise<void> {
    if (records.length === 0) return;
    await this.ensureWritable();
    const at = new Date().toISOString();
    // `time` first, for people reading the file; a record's own time wins.
    const line = (r: { time?: string }): string =>
      JSON.stringify(Object.assign({ time: at }, r, { time: r.time ?? at }));
    let text = records.map((r) => `${line(r)}\n`).join('');
    // Every write of a tool call appends here, at least twice (intent, outcome): one open for the
    // check and the append, and the synchronous calls, which for a few hundred bytes to a local
    // file cost a fraction of the CPU of five round trips through the thread pool.
    // No O_CREAT: the log this process started with must still be the file at its path.
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW);
    } catch (e) {
      throw this.gone((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'deleted' : 'replaced', e);
    }
    try {
      const st = fstatSync(fd);
      const was = this.identity;
      if (was !== undefined && (st.dev !== was.dev || st.ino !== was.ino)) throw this.gone('replaced');
      // A line torn by a crash would swallow this append's first record and turn into a bad line
      // in the middle of the log, which stops moves (move-cap.ts). End it, and say it was torn.
      // When the file is still the size this process left it, its last byte is this process's own
      // newline and need not be read again.
      if (st.size !== this.end && endsTorn(fd, st.size)) {
        const marker = { time: at, account: '*', tool: 'action-log', op: TORN_LINE_MARK, outcome: 'ok' };
        text = `\n${JSON.stringify(marker)}\n${text}`;
      }
      this.end = undefined;
      const wrote = writeSync(fd, text);
      // A short write (a full disk) leaves a torn line: the next append checks for it.
      if (wrote === Buffer.byteLength(text)) this.end = st.size + wrote;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Deleted or replaced while the server runs, a new append would quietly start a new log (and a
   * fresh daily count), so every write stops instead, with what to do.
   */
  private gone(how: 'deleted' | 'replaced', cause?: unknown): MailError {
    return new MailError(
      'internal_error',
      `the action log ${this.path} is gone: it was ${how} while this server ran, so no change was made and none will be until the server restarts. Put the file back if you have it, then restart the server; a restarted server starts a new log if there is none, and keeps counting today's moves out of the inbox from ${join(dirname(this.path), MARKER_DIR)}/, so the daily cap holds.`,
      { retryable: false, ...(cause === undefined ? {} : { cause }) },
    );
  }
}

/**
 * The log as one HTTP client's calls write it: the same file, every record stamped with the
 * client's name (src/mcp/clients.ts builds one per client of clients.json).
 */
export class ClientActionLog extends ActionLog {
  constructor(
    private readonly base: ActionLog,
    readonly client: string,
  ) {
    super(base.path);
  }

  override ensureWritable(): Promise<void> {
    return this.base.ensureWritable();
  }

  override source(): LogSource {
    return this.base.source();
  }

  override async appendMany(records: ReadonlyArray<{ account: string; time?: string }>): Promise<void> {
    await this.base.appendMany(records.map((r) => ({ ...r, client: this.client })));
  }
}

function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** O_APPEND so concurrent writers (several processes) never overwrite each other's lines. */
function openForAppend(path: string) {
  return open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
}

/** The op of the first record of a log started where an earlier one went missing. */
export const LOG_LOST_MARK = 'actionLogLost';

/** The op of the record appended right after a torn line, so readers know it was torn, not damaged. */
export const TORN_LINE_MARK = 'tornLineEnded';
