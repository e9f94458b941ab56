import type { UserMailbox } from './model.js';

/** A snapshot of one mailbox for tests to assert outcomes on; changing it changes nothing. */
export interface SandboxMailboxView {
  email: string;
  historyId: string;
  messages: Array<{ id: string; threadId: string; labelIds: string[]; internalDate: number }>;
  /** Message ids oldest first. */
  threads: Array<{ id: string; messageIds: string[] }>;
  labels: Array<{ id: string; name: string; type: 'system' | 'user' }>;
}

export function viewOf(mailbox: UserMailbox): SandboxMailboxView {
  return {
    email: mailbox.email,
    historyId: String(mailbox.history.historyId),
    messages: [...mailbox.messages.values()].map((m) => ({
      id: m.id,
      threadId: m.threadId,
      labelIds: [...m.labelIds],
      internalDate: m.internalDate,
    })),
    threads: [...mailbox.threads.values()].map((t) => ({
      id: t.id,
      messageIds: t.messages.map((m) => m.id),
    })),
    labels: [...mailbox.labels.values()].map((l) => ({ id: l.id, name: l.name, type: l.type })),
  };
}
