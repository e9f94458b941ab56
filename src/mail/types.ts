/**
 * Provider-neutral mail model. Providers (Gmail REST, IMAP) produce these; `src/mail/` turns
 * them into what tools return. Nothing here does I/O.
 */

export interface Header {
  name: string;
  /** As it stands in the message (may still hold RFC 2047 encoded-words; readers decode). */
  value: string;
}

/**
 * One node of a message's MIME tree. `body` holds the part's bytes with the
 * Content-Transfer-Encoding removed but the charset NOT yet decoded, so `src/mail/` can decode
 * charsets in one place for every provider. Multipart nodes have children and no body.
 */
export interface MimeNode {
  /** Gmail-style part id: "" for the root, then "0", "0.1", … */
  partId: string;
  /** Lower-case type/subtype, e.g. "text/plain", "multipart/alternative". */
  mimeType: string;
  headers: Header[];
  /** Decoded filename (Content-Disposition filename or Content-Type name), "" when none. */
  filename: string;
  /** Size in bytes of the decoded body. */
  size: number;
  /** Present when the bytes were delivered inline. */
  body?: Uint8Array;
  /** Present when the bytes must be fetched separately (Gmail attachments). */
  attachmentId?: string;
  children: MimeNode[];
}

export interface MailMessage {
  id: string;
  threadId: string;
  /** Live label ids as the provider reports them now (Gmail label ids; IMAP: mapped flags/folder). */
  labelIds: string[];
  /** Milliseconds since the epoch (Gmail internalDate). */
  internalDate: number;
  snippet: string;
  sizeEstimate: number;
  /** Top-level headers, in order. */
  headers: Header[];
  /** MIME tree; for metadata-only reads it has no children and no body. */
  root: MimeNode;
  /** IMAP: where its copies sit (folder, UIDVALIDITY, UID), for the action log. */
  places?: MailPlace[];
  /** IMAP: label ids of the user folders it lives in, each a place of its own (src/mail/place.ts). */
  folders?: string[];
}

export interface MailPlace {
  folder: string;
  uidValidity: string;
  uid: number;
}

export interface MailThread {
  id: string;
  historyId?: string;
  /** Oldest first. */
  messages: MailMessage[];
}

export interface Label {
  id: string;
  name: string;
  type: 'system' | 'user';
  /** IMAP: a user folder, a place of its own: adding it moves the message there. */
  folder?: true;
  messagesTotal?: number;
  messagesUnread?: number;
  threadsTotal?: number;
  threadsUnread?: number;
  color?: { backgroundColor: string; textColor: string };
}

export interface Profile {
  emailAddress: string;
  messagesTotal: number;
  threadsTotal: number;
  historyId: string;
}

export interface HistoryPage {
  /** Messages that appeared since the start id. */
  added: Array<{ messageId: string; threadId: string; labelIds: string[] }>;
  /** Messages that were deleted since the start id (Gmail: messagesDeleted). */
  deleted: Array<{ messageId: string; threadId: string }>;
  labelsAdded: Array<{ messageId: string; threadId: string; labelIds: string[] }>;
  labelsRemoved: Array<{ messageId: string; threadId: string; labelIds: string[] }>;
  /** Where to start next time. */
  historyId: string;
  nextPageToken?: string;
}

export interface MessageRef {
  id: string;
  threadId: string;
}

export interface Page<T> {
  items: T[];
  nextPageToken?: string;
  resultSizeEstimate?: number;
  /**
   * IMAP: who checked each predicate of the query — the server (SEARCH or the folder chosen), a
   * local check on what was fetched, or nothing (Gmail-only state such as categories).
   */
  checks?: Array<{ predicate: string; by: 'server' | 'local' | 'none'; recall?: 'limited' }>;
}
