import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { chmod, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MailError } from '../mail/errors.js';

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
}

/**
 * Append-only JSON lines in the config dir, mode 0600 (DESIGN promise 4). The file is created
 * and checked writable before the first write a tool makes, so a log that cannot be written
 * stops the write instead of letting it happen unrecorded.
 */
export class ActionLog {
  private ready: Promise<void> | undefined;
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
      const fh = await openForAppend(this.path);
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw new Error('it is not a regular file');
        await fh.chmod(0o600);
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
    const fd = openSync(
      this.path,
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      // A line torn by a crash would swallow this append's first record and turn into a bad line
      // in the middle of the log, which stops moves (move-cap.ts). End it, and say it was torn.
      if (endsTorn(fd)) {
        const marker = { time: at, account: '*', tool: 'action-log', op: TORN_LINE_MARK, outcome: 'ok' };
        text = `\n${JSON.stringify(marker)}\n${text}`;
      }
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  }
}

function endsTorn(fd: number): boolean {
  const { size } = fstatSync(fd);
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

/** The op of the record appended right after a torn line, so readers know it was torn, not damaged. */
export const TORN_LINE_MARK = 'tornLineEnded';
