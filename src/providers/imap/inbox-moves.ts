import type { ImapFlow } from 'imapflow';
import type { LabelChange } from '../mailbox.js';
import { folderByRole } from './folders.js';
import type { FolderIndex } from './folder-index.js';
import type { FolderModel } from './query.js';
import { fetchCopies, opened, readCopy, searchUids } from './reader.js';
import type { ReadMessage } from './reader.js';
import { componentOf, MAX_ROUNDS } from './threads.js';

/*
 * Moves out of the inbox, judged by what their rules need and nothing more (docs/architecture.md,
 * "The write policy"). A UID names one message for as long as the folder's UIDVALIDITY holds
 * (RFC 3501 §2.3.1.1), so the sender, Message-ID and size read once for a UID in INBOX are the
 * message's for good; "it is in the inbox" is proved by the UID MOVE from INBOX itself, whose
 * COPYUID answer (RFC 4315) names exactly the UIDs that left. So an archive of any number of
 * threads reads INBOX alone: one SELECT (whose UIDVALIDITY/UIDNEXT/EXISTS stand in for STATUS,
 * and which the write then reuses), the index's catch-up FETCH of what arrived since the last
 * call, and one header FETCH of the batch's UIDs. Where the thread's other messages sit (label
 * folders, Archive) only matters to *show* labels, never to move mail out of the inbox.
 */

/** Changes judged from INBOX alone: they take mail out of the inbox, and bring none into it. */
export function leavesInbox(change: LabelChange): boolean {
  return (
    change.remove.includes('INBOX') &&
    !change.add.includes('INBOX') &&
    !change.add.includes('TRASH') &&
    change.add.every((l) => l !== 'SENT' && l !== 'DRAFT')
  );
}

/** Changes that bring mail back to the inbox (restore, untrash, unsnooze). */
export function returnsToInbox(change: LabelChange): boolean {
  if (change.add.includes('INBOX')) return !change.add.some((l) => l === 'SPAM' || l === 'TRASH');
  return change.add.length === 0 && change.remove.some((l) => l === 'TRASH' || l === 'SPAM');
}

/**
 * The messages of each thread that sit in INBOX now, read as headers with their live flags.
 * `roots`: thread id → the root Message-ID it names. A thread with nothing in INBOX is absent.
 * Leaves INBOX selected read-write for the write that follows.
 */
export async function inboxMessages(
  client: ImapFlow,
  model: FolderModel,
  index: FolderIndex,
  roots: ReadonlyMap<string, string>,
  signal: AbortSignal | undefined,
): Promise<Map<string, ReadMessage[]>> {
  const out = new Map<string, ReadMessage[]>();
  const inbox = folderByRole(model, 'inbox');
  if (inbox === undefined || roots.size === 0) return out;
  // A fresh SELECT every call: its numbers are live (a NOOP and a STATUS would be two commands).
  const box = await client.mailboxOpen(inbox.path, { readOnly: false });
  opened(client);
  index.observed(inbox.path, box, signal);
  let uids = await index.linked(client, inbox, [...roots.values()], MAX_ROUNDS, signal);
  if (uids === undefined) {
    // INBOX too large to index: one header SEARCH for the roots (the conversation's replies name
    // the root in References, RFC 5322 §3.6.4).
    const keys = [...roots.values()].flatMap((r) => [
      { header: { 'message-id': `<${r}>` } },
      { header: { references: `<${r}>` } },
    ]);
    uids = keys.length === 0 ? [] : await searchUids(client, { or: keys });
  }
  if (uids.length === 0) return out;
  const read = (await fetchCopies(client, inbox, uids, 'metadata')).map((r) =>
    readCopy(r.copy, r.bytes, false),
  );
  for (const [id, root] of roots) {
    const component = componentOf(root, read);
    if (component.length > 0) out.set(id, component);
  }
  return out;
}
