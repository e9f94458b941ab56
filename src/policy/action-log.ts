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
    await this.ensureWritable();
    const line = JSON.stringify({ time: record.time ?? new Date().toISOString(), ...record });
    await appendFile(this.path, `${line}\n`, { mode: 0o600 });
  }
}
