import { randomUUID } from 'node:crypto';
import { isMailError } from '../mail/errors.js';
import type { ErrorCode } from '../mail/errors.js';
import type { Label } from '../mail/types.js';
import type {
  DraftInput,
  DraftRef,
  FilterInput,
  LabelChange,
  LabelInput,
  Mailbox,
  MailFilter,
  MessageLabels,
  ThreadWriteOptions,
} from '../providers/mailbox.js';
import type { ActionLog, ActionRecord } from './action-log.js';

/**
 * A failed write is "failed" only when the provider said it did not happen; a lost answer (the
 * connection dropped, a deadline passed, an error we did not expect) may have been applied, so
 * it is "unknown".
 */
const MAY_HAVE_HAPPENED: ReadonlySet<ErrorCode> = new Set(['network_error', 'internal_error']);
export function writeOutcomeOf(e: unknown): 'failed' | 'unknown' {
  if (!isMailError(e)) return 'unknown';
  return MAY_HAVE_HAPPENED.has(e.code) ? 'unknown' : 'failed';
}

type Target = Pick<ActionRecord, 'threadIds' | 'messageIds' | 'labelId' | 'change' | 'detail'>;

/**
 * Every Mailbox method that changes the mailbox, each logged below. src/mcp uses the list to
 * hold tools to "ask for confirmation before the first write".
 */
export const WRITE_METHODS: ReadonlySet<string> = new Set([
  'createLabel',
  'updateLabel',
  'deleteLabel',
  'modifyThread',
  'modifyMessages',
  'trashThread',
  'untrashThread',
  'createFilter',
  'deleteFilter',
  'createDraft',
]);

/**
 * The Mailbox a tool call receives. Reads pass straight through; every write is appended to the
 * action log with its outcome, success or failure. src/mcp builds one per tool call, so a tool
 * cannot reach the provider's write methods without going through here.
 */
export function loggedMailbox(inner: Mailbox, log: ActionLog, tool: string): Mailbox {
  const account = inner.account;
  async function write<T>(
    op: string,
    target: Target,
    run: () => Promise<T>,
    // What the write created (a filter or draft id) belongs in the record too.
    result?: (out: T) => Record<string, unknown>,
  ): Promise<T> {
    // The intent line goes in before the provider is asked: a crash (SIGKILL, power loss) during
    // the write leaves it without an outcome line, and readers show such a write as unknown.
    const call = randomUUID();
    await log.append({ account, tool, op, call, ...target, outcome: 'pending' });
    let out: T;
    try {
      out = await run();
    } catch (e) {
      await log.append({
        account,
        tool,
        op,
        call,
        ...target,
        outcome: writeOutcomeOf(e),
        error: isMailError(e) ? e.code : String(e),
      });
      throw e;
    }
    const done = result === undefined ? target : { ...target, detail: { ...target.detail, ...result(out) } };
    await log.append({ account, tool, op, call, ...done, outcome: 'ok' });
    return out;
  }
  const copy = (c: LabelChange) => ({ add: [...c.add], remove: [...c.remove] });
  // A plain object, not a prototype of the provider: nothing else of the provider is reachable.
  const out: Mailbox = {
    provider: inner.provider,
    // Read live: an IMAP account knows its layout (label folders, flat labels) only once listed.
    get capabilities() {
      return inner.capabilities;
    },
    account,
    trustedAuthservId: inner.trustedAuthservId,
    batchesReads: inner.batchesReads === true,
    batchesWrites: inner.batchesWrites === true,
    getProfile: inner.getProfile.bind(inner),
    listLabels: inner.listLabels.bind(inner),
    getLabel: inner.getLabel.bind(inner),
    searchThreads: inner.searchThreads.bind(inner),
    searchMessages: inner.searchMessages.bind(inner),
    getThread: inner.getThread.bind(inner),
    getAttachment: inner.getAttachment.bind(inner),
    history: inner.history.bind(inner),
    getMessageLabels: inner.getMessageLabels.bind(inner),
    usage: inner.usage.bind(inner),
    close: inner.close.bind(inner),
    createLabel: (input: LabelInput, signal?: AbortSignal): Promise<Label> =>
      write('createLabel', { detail: { name: input.name } }, () => inner.createLabel(input, signal)),
    updateLabel: (id: string, patch: Partial<LabelInput>, signal?: AbortSignal): Promise<Label> =>
      write('updateLabel', { labelId: id, detail: { ...patch } }, () => inner.updateLabel(id, patch, signal)),
    deleteLabel: (id: string, signal?: AbortSignal): Promise<void> =>
      write('deleteLabel', { labelId: id }, () => inner.deleteLabel(id, signal)),
    modifyThread: (
      threadId: string,
      change: LabelChange,
      signal?: AbortSignal,
      options?: ThreadWriteOptions,
    ): Promise<MessageLabels[]> =>
      write('modifyThread', { threadIds: [threadId], change: copy(change) }, () =>
        inner.modifyThread(threadId, change, signal, options),
      ),
    modifyMessages: (
      messageIds: string[],
      change: LabelChange,
      signal?: AbortSignal,
      options?: Pick<ThreadWriteOptions, 'agentLabel'>,
    ): Promise<void> =>
      write('modifyMessages', { messageIds: [...messageIds], change: copy(change) }, () =>
        inner.modifyMessages(messageIds, change, signal, options),
      ),
    trashThread: (threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void> =>
      write('trashThread', { threadIds: [threadId] }, () => inner.trashThread(threadId, signal, options)),
    untrashThread: (threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void> =>
      write('untrashThread', { threadIds: [threadId] }, () => inner.untrashThread(threadId, signal, options)),
  };
  if (inner.getMessage) out.getMessage = inner.getMessage.bind(inner);
  if (inner.getThreads) out.getThreads = inner.getThreads.bind(inner);
  if (inner.sentRecipients) out.sentRecipients = inner.sentRecipients.bind(inner);
  if (inner.sentVersion) out.sentVersion = inner.sentVersion.bind(inner);
  if (inner.inboxSince) out.inboxSince = inner.inboxSince.bind(inner);
  if (inner.uidMarkAt) out.uidMarkAt = inner.uidMarkAt.bind(inner);
  addFilterAndDraftWrites(out, inner, write);
  return out;
}

type Write = <T>(
  op: string,
  target: Target,
  run: () => Promise<T>,
  result?: (out: T) => Record<string, unknown>,
) => Promise<T>;

/**
 * Filters and drafts are optional Mailbox methods: the wrapper has them exactly when the provider
 * does, so a tool's `unsupported` check sees the same answer through the log.
 */
function addFilterAndDraftWrites(out: Mailbox, inner: Mailbox, write: Write): void {
  if (inner.listFilters) out.listFilters = inner.listFilters.bind(inner);
  const { createFilter, deleteFilter, createDraft, listFilters } = inner;
  if (createFilter) {
    out.createFilter = (input: FilterInput, signal?: AbortSignal): Promise<MailFilter> =>
      write(
        'createFilter',
        { detail: { criteria: { ...input.criteria }, action: { ...input.action } } },
        () => createFilter.call(inner, input, signal),
        (f) => ({ filterId: f.id }),
      );
  }
  if (deleteFilter) {
    out.deleteFilter = async (id: string, signal?: AbortSignal): Promise<void> => {
      // The record keeps the rule itself, so a deleted filter can be rebuilt from the log.
      const before = await listFilters
        ?.call(inner, signal)
        .then((all) => all.find((f) => f.id === id))
        .catch(() => undefined);
      const detail: Record<string, unknown> = { filterId: id };
      if (before) Object.assign(detail, { criteria: before.criteria, action: before.action });
      return write('deleteFilter', { detail }, () => deleteFilter.call(inner, id, signal));
    };
  }
  if (createDraft) {
    out.createDraft = (input: DraftInput, signal?: AbortSignal): Promise<DraftRef> =>
      write(
        'createDraft',
        {
          ...(input.threadId === undefined ? {} : { threadIds: [input.threadId] }),
          detail: { headers: draftHeaders(input.raw) },
        },
        () => createDraft.call(inner, input, signal),
        (d) => ({ draftId: d.id, messageId: d.messageId, threadId: d.threadId }),
      );
  }
}

/** The addressing headers of a draft, as written (folded lines joined), for the record. */
function draftHeaders(raw: string): Record<string, string> {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? '';
  const out: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]/g, ' ').split(/\r?\n/)) {
    const m = /^(To|Cc|Bcc|Subject|In-Reply-To):\s*(.*)$/i.exec(line);
    if (m?.[1] && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}
