/**
 * What the sandbox is seeded with. The demo corpus (src/sandbox/corpus) produces one SeedUser;
 * tests may build their own.
 */
export interface SeedMessage {
  /** Full RFC 822 source (CRLF or LF line ends). Non-UTF-8 charsets are given as latin1 strings of bytes. */
  raw: string;
  /** Gmail label ids: INBOX, UNREAD, STARRED, IMPORTANT, SENT, DRAFT, SPAM, TRASH, CATEGORY_*, or a user label id. */
  labelIds: string[];
  /** Milliseconds since the epoch. */
  internalDate: number;
}

export interface SeedThread {
  /** Stable key tests and docs use to find this thread (the sandbox assigns Gmail-like ids). */
  key: string;
  /** Oldest first. */
  messages: SeedMessage[];
  /**
   * Stale thread index: when the sandbox's staleThreadIndex option is on, threads.list answers
   * is:unread / is:read for this thread as if it were unread, whatever its messages say.
   */
  staleIndexUnread?: boolean;
}

export interface SeedLabel {
  id: string;
  name: string;
  color?: { backgroundColor: string; textColor: string };
}

export interface SeedUser {
  email: string;
  userLabels: SeedLabel[];
  threads: SeedThread[];
}
