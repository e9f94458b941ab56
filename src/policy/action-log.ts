import { appendFile, chmod, mkdir, open } from 'node:fs/promises';
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
  outcome: 'ok' | 'failed';
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

  /** Creates the file (0600, parent 0700) if needed and proves it can be appended to. */
  ensureWritable(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const fh = await open(this.path, 'a', 0o600);
      await fh.close();
      await chmod(this.path, 0o600);
    })().catch((e: unknown) => {
      this.ready = undefined;
      throw new MailError(
        'internal_error',
        `the action log at ${this.path} cannot be written, so no change was made: ${String(e)}`,
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
    // A line torn by a crash would swallow this append's first record and turn into a bad line
    // in the middle of the log, which stops moves (move-cap.ts). End it, and say it was torn.
    if (await this.endsTorn()) {
      const marker = { time: at, account: '*', tool: 'action-log', op: TORN_LINE_MARK, outcome: 'ok' };
      text = `\n${JSON.stringify(marker)}\n${text}`;
    }
    await appendFile(this.path, text, { mode: 0o600 });
  }

  private async endsTorn(): Promise<boolean> {
    const fh = await open(this.path, 'r');
    try {
      const { size } = await fh.stat();
      if (size === 0) return false;
      const last = Buffer.alloc(1);
      await fh.read(last, 0, 1, size - 1);
      return last[0] !== 0x0a;
    } finally {
      await fh.close();
    }
  }
}

/** The op of the record appended right after a torn line, so readers know it was torn, not damaged. */
export const TORN_LINE_MARK = 'tornLineEnded';
