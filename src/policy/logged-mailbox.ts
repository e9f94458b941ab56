import { isMailError } from '../mail/errors.js';
import type { Label } from '../mail/types.js';
import type { LabelChange, LabelInput, Mailbox, MessageLabels } from '../providers/mailbox.js';
import type { ActionLog, ActionRecord } from './action-log.js';

type Target = Pick<ActionRecord, 'threadIds' | 'messageIds' | 'labelId' | 'change' | 'detail'>;

/**
 * The Mailbox a tool call receives. Reads pass straight through; every write is appended to the
 * action log with its outcome, success or failure. src/mcp builds one per tool call, so a tool
 * cannot reach the provider's write methods without going through here.
 */
export function loggedMailbox(inner: Mailbox, log: ActionLog, tool: string): Mailbox {
  const account = inner.account;
  async function write<T>(op: string, target: Target, run: () => Promise<T>): Promise<T> {
    await log.ensureWritable();
    try {
      const out = await run();
      await log.append({ account, tool, op, ...target, outcome: 'ok' });
      return out;
    } catch (e) {
      await log.append({
        account,
        tool,
        op,
        ...target,
        outcome: 'failed',
        error: isMailError(e) ? e.code : String(e),
      });
      throw e;
    }
  }
  const copy = (c: LabelChange) => ({ add: [...c.add], remove: [...c.remove] });
  // A plain object, not a prototype of the provider: nothing else of the provider is reachable.
  return {
    provider: inner.provider,
    capabilities: inner.capabilities,
    account,
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
    modifyThread: (threadId: string, change: LabelChange, signal?: AbortSignal): Promise<MessageLabels[]> =>
      write('modifyThread', { threadIds: [threadId], change: copy(change) }, () =>
        inner.modifyThread(threadId, change, signal),
      ),
    modifyMessages: (messageIds: string[], change: LabelChange, signal?: AbortSignal): Promise<void> =>
      write('modifyMessages', { messageIds: [...messageIds], change: copy(change) }, () =>
        inner.modifyMessages(messageIds, change, signal),
      ),
    trashThread: (threadId: string, signal?: AbortSignal): Promise<void> =>
      write('trashThread', { threadIds: [threadId] }, () => inner.trashThread(threadId, signal)),
    untrashThread: (threadId: string, signal?: AbortSignal): Promise<void> =>
      write('untrashThread', { threadIds: [threadId] }, () => inner.untrashThread(threadId, signal)),
  };
}
