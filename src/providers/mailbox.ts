import type { MailError } from '../mail/errors.js';
import type { FilterCriteria, FilterLabelAction } from '../mail/filter-criteria.js';
import type {
  HistoryPage,
  Label,
  MailMessage,
  MailThread,
  MessageRef,
  Page,
  Profile,
} from '../mail/types.js';

/** Request/units counters a provider keeps so tools and benchmarks can report cost. */
export interface Usage {
  requests: number;
  quotaUnits: number;
}

export interface MailboxCapabilities {
  /** history since a cursor (Gmail historyId / IMAP MODSEQ). */
  history: boolean;
  /** server-side filters (Gmail settings / ManageSieve). */
  filters: boolean;
  /**
   * Gmail has labels (many per message); IMAP has folders (one per message), with user labels
   * as keywords (Dovecot, Fastmail) or as label folders holding copies (Proton Bridge Labels/X).
   */
  organisation: 'labels' | 'folders' | 'folders+keywords' | 'folders+label-folders';
  /**
   * Labels cannot nest: Proton Mail Bridge answers CREATE Labels/A/B with "a label cannot have
   * children" (proton-bridge connector.go createLabel), so "A/B" is refused before anything is made.
   */
  flatLabels?: boolean;
}

export interface SearchOptions {
  pageToken?: string;
  /** 1..500 */
  maxResults: number;
  /** Gmail: includeSpamTrash. The query language still excludes spam/trash unless named. */
  includeSpamTrash?: boolean;
  /**
   * Gmail: labelIds. Every listed label must be on the message; Gmail answers this filter from
   * live per-message labels, not from the search index that answers `q` (bulk cross-checks rely
   * on that difference).
   */
  labelIds?: readonly string[];
  signal?: AbortSignal;
}

export interface ThreadReadOptions {
  /** full: headers + MIME tree with bodies; metadata: headers only (root has no children). */
  format: 'full' | 'metadata';
  metadataHeaders?: readonly string[];
  signal?: AbortSignal;
  /**
   * The read judges this change before it is written: a provider may return only the messages
   * the change would touch (IMAP: an archive touches what is in INBOX), with their live labels.
   */
  forChange?: LabelChange;
}

/** How a policy-judged thread write is done. */
export interface ThreadWriteOptions {
  /**
   * The messages the write policy judged: only these change. A message that reached the thread
   * after the judging read is left as it is (it was never judged).
   */
  messageIds?: readonly string[];
  /**
   * policy.json agentLabel: applied, in the same batch, to every message this write takes out of
   * the inbox to anywhere but Spam and Trash; removed when the write brings mail back to the inbox.
   */
  agentLabel?: string;
  /**
   * How many thread writes the caller has started at once. A provider that gathers concurrent
   * writes of one change into one request sends the gathering as soon as it holds this many,
   * instead of waiting for a quiet spell in which no more came.
   */
  together?: number;
}

/** Label ids to add and remove (Gmail label ids; IMAP maps them to flags/folders). */
export interface LabelChange {
  add: string[];
  remove: string[];
}

export interface LabelInput {
  name: string;
  color?: { backgroundColor: string; textColor: string };
}

/** A message's id and live labels after a write. */
export interface MessageLabels {
  id: string;
  threadId: string;
  labelIds: string[];
}

/** A server-side filter as it stands in the mailbox. */
export interface MailFilter {
  id: string;
  criteria: FilterCriteria;
  action: FilterLabelAction & {
    /**
     * Read back for audit only: a forwarding address the filter already has (set in Gmail's UI
     * or by someone else). mailwarden never writes one: FilterInput has no such field.
     */
    forward?: string;
  };
}

/** What createFilter sends: criteria and label actions, nothing else. */
export interface FilterInput {
  criteria: FilterCriteria;
  action: FilterLabelAction;
}

/** A draft to save (the opt-in drafts tier): an RFC 822 source, optionally in a thread. */
export interface DraftInput {
  raw: string;
  threadId?: string;
}

export interface DraftRef {
  id: string;
  messageId: string;
  threadId: string;
}

/**
 * The contract both providers meet. Tools see only this interface (never a provider class).
 * Errors are thrown as MailError.
 */
export interface Mailbox {
  readonly provider: 'gmail' | 'imap';
  readonly capabilities: MailboxCapabilities;
  /** Account name this mailbox was opened for (e.g. "default", "demo"). */
  readonly account: string;
  /**
   * The authserv-id whose Authentication-Results (RFC 8601) this account's receiving server
   * writes; undefined: no report is trusted and every message reads as unchecked.
   */
  readonly trustedAuthservId?: string | undefined;
  /**
   * True when concurrent getThread calls are answered together (IMAP: one round of searches and
   * one FETCH per folder for all of them), so a caller should issue every read at once rather
   * than a few at a time (tools use readConcurrency()).
   */
  readonly batchesReads?: boolean;
  /**
   * True when concurrent modifyThread calls with judged message ids are written together (Gmail:
   * one messages.batchModify), so a caller should issue every write of a call at once.
   */
  readonly batchesWrites?: boolean;

  getProfile(signal?: AbortSignal): Promise<Profile>;
  /**
   * The labels; a provider may answer from a list it keeps briefly (every label write it makes
   * forgets it). `fresh`: ask the server now.
   */
  listLabels(signal?: AbortSignal, options?: { fresh?: boolean }): Promise<Label[]>;
  /** One label with its message/thread totals and unread counts (Gmail: labels.get). */
  getLabel(id: string, signal?: AbortSignal): Promise<Label>;
  /** Thread ids matching a Gmail-syntax query, newest first, as the server's index answers. */
  searchThreads(query: string, options: SearchOptions): Promise<Page<{ id: string }>>;
  /** Message refs matching a Gmail-syntax query (exact per-message index). */
  searchMessages(query: string, options: SearchOptions): Promise<Page<MessageRef>>;
  getThread(threadId: string, options: ThreadReadOptions): Promise<MailThread>;
  /**
   * Many threads with the same read, in fewer requests (Gmail: batch requests). Each id gets its
   * thread or its own MailError, as getThread would give it; a failure of the whole read
   * rejects. Optional: without it callers read thread by thread.
   */
  getThreads?(
    threadIds: readonly string[],
    options: ThreadReadOptions,
  ): Promise<Array<MailThread | MailError>>;
  /**
   * One message by id (Gmail messages.get, 5 units). Optional: without it get_message finds the
   * message's thread (getMessageLabels) and reads it (IMAP finds a message by Message-ID anyway).
   */
  getMessage?(messageId: string, options: ThreadReadOptions): Promise<MailMessage>;
  getAttachment(messageId: string, attachmentId: string, signal?: AbortSignal): Promise<Uint8Array>;
  /** Changes since a cursor. An expired cursor is a MailError('invalid_input'…), never an empty page. */
  history(
    startHistoryId: string,
    options: { pageToken?: string; signal?: AbortSignal },
  ): Promise<HistoryPage>;

  // Writes (tier manage). There is no hard delete anywhere. Tools never call these directly on a
  // provider: src/mcp hands them a policy-wrapped Mailbox that appends every write to the
  // action log (src/policy/logged-mailbox.ts).
  createLabel(input: LabelInput, signal?: AbortSignal): Promise<Label>;
  updateLabel(id: string, patch: Partial<LabelInput>, signal?: AbortSignal): Promise<Label>;
  deleteLabel(id: string, signal?: AbortSignal): Promise<void>;
  /**
   * Changes every message of a thread (with options.messageIds: those messages); returns the
   * messages changed, with their live labels where the provider's write answers them.
   */
  modifyThread(
    threadId: string,
    change: LabelChange,
    signal?: AbortSignal,
    options?: ThreadWriteOptions,
  ): Promise<MessageLabels[]>;
  /** Gmail messages.batchModify: at most 1000 ids; answers nothing (unknown ids are ignored). */
  modifyMessages(
    messageIds: string[],
    change: LabelChange,
    signal?: AbortSignal,
    options?: Pick<ThreadWriteOptions, 'agentLabel'>,
  ): Promise<void>;
  trashThread(threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void>;
  untrashThread(threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void>;
  /** Live labels of one message (Gmail messages.get format=minimal). */
  getMessageLabels(messageId: string, signal?: AbortSignal): Promise<MessageLabels>;

  // Filters (tier filters) and drafts (tier drafts). Optional: a provider without server-side
  // rules (IMAP without ManageSieve) or without a drafts folder leaves them out, and the tools
  // answer `unsupported` for that account. There is no method that forwards or sends.
  listFilters?(signal?: AbortSignal): Promise<MailFilter[]>;
  createFilter?(input: FilterInput, signal?: AbortSignal): Promise<MailFilter>;
  deleteFilter?(id: string, signal?: AbortSignal): Promise<void>;
  /** Saves a draft for a human to review and send; mailwarden itself never sends it. */
  createDraft?(input: DraftInput, signal?: AbortSignal): Promise<DraftRef>;

  /**
   * The To and Cc addresses of the mail sent in the last `days` days, newest first, as cheaply as
   * the provider can say (IMAP: one SEARCH and one header FETCH in Sent). Optional: without it the
   * write policy reads Sent threads through searchMessages and getThread.
   */
  sentRecipients?(
    days: number,
    signal?: AbortSignal,
  ): Promise<string[] | { addresses: string[]; version?: string }>;
  /** A token that changes whenever Sent gains or loses a message (see policy/correspondents.ts). */
  sentVersion?(signal?: AbortSignal): Promise<string | undefined>;

  /**
   * IMAP: INBOX arrivals above a UID mark, oldest first, for the sweep loop (list_new_mail,
   * check_new_mail): one EXAMINE, then one FETCH when the new mail fits the page or no mark
   * bounds it (the oldest by position), else one UID SEARCH and one FETCH.
   * Optional: a provider without UIDs (Gmail) is read through searchMessages and getThread.
   */
  inboxSince?(
    mark: UidMark | undefined,
    options: { limit: number; signal?: AbortSignal; read?: 'full' },
  ): Promise<UidArrivals>;
  /** IMAP: the UID mark that decides everything in INBOX up to `uid` (mark_handled). */
  uidMarkAt?(target: { uid: number } | { messageId: string }, signal?: AbortSignal): Promise<UidMarkAt>;

  usage(): Usage;
  close(): Promise<void>;
}

/** Where the sweep stands in an IMAP INBOX (see src/mail/inbox-mark.ts). */
export interface UidMark {
  uidValidity: string;
  /** Highest UID decided. */
  uid: number;
  /** Hashes of decided Message-IDs still in the inbox (messageIdHash), for a renumbered INBOX. */
  decided: readonly string[];
}

export interface UidArrivals {
  uidValidity: string;
  uidNext: number;
  /** The mark's UIDVALIDITY is not INBOX's: every UID changed, the whole inbox is listed. */
  reset: boolean;
  /** Messages above the mark (after a reset: in the inbox and not decided). */
  total: number;
  /** After a reset: inbox messages left out because the mark remembers them as decided. */
  excludedDecided: number;
  /**
   * The oldest `limit` of them, ascending UID; with `read: 'full'` each with the message itself,
   * read from its INBOX copy (labels from that copy's flags and keywords only).
   */
  items: Array<{ uid: number; id: string; threadId: string; internalDate: number; message?: MailMessage }>;
  /**
   * The highest UID above the mark (undefined when nothing is new). Always there for a count
   * (`limit` 0, the gate); without a mark, only when the page reaches it.
   */
  newestUid?: number;
}

export interface UidMarkAt {
  uidValidity: string;
  uidNext: number;
  uid: number;
  /** Hashes of the Message-IDs in INBOX at or below `uid` (newest last, bounded). */
  decided: string[];
}
