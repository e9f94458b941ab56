import type { ImapFlow } from 'imapflow';

/**
 * What the IMAP mailbox code needs from the transport (src/providers/imap/connection.ts): one
 * authenticated connection per account, used by one caller at a time, with counted commands.
 */
export interface ImapSession {
  /**
   * Runs `fn` with exclusive use of the account's authenticated connection (opening it on first
   * use, reusing it between calls). `retry: true` (reads only) reopens a dropped connection once
   * and runs `fn` again; writes pass `retry: false`. Errors arrive as MailError.
   */
  use<T>(fn: (client: ImapFlow) => Promise<T>, options: { retry: boolean; signal?: AbortSignal }): Promise<T>;
  /** IMAP commands sent so far on every connection of this session, login and CAPABILITY included. */
  commands(): number;
  /** Capabilities of the last authenticated connection (upper-case names, e.g. "THREAD=REFERENCES"). */
  capabilities(): ReadonlySet<string>;
  close(): Promise<void>;
}
