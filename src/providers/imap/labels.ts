import type { ImapFlow } from 'imapflow';
import type { Label } from '../../mail/types.js';
import { ROLE_LABEL, keywordLabelId, userKeyword } from './folders.js';
import type { FolderModel } from './query.js';
import { examine, searchUids } from './reader.js';

/*
 * list_labels on IMAP: the system labels the folders and flags map to (INBOX, SENT, DRAFT, SPAM,
 * TRASH, UNREAD ↔ not \Seen, STARRED ↔ \Flagged), every user folder and label folder, and the
 * user keywords in use (learnt from each folder's FLAGS when the folder list is read).
 */

const FLAG_LABELS: readonly Label[] = [
  { id: 'UNREAD', name: 'UNREAD', type: 'system' },
  { id: 'STARRED', name: 'STARRED', type: 'system' },
];

export async function imapLabels(
  client: ImapFlow,
  model: FolderModel,
  counts: boolean,
  only?: string,
): Promise<Label[]> {
  const out: Label[] = [];
  const keywords = new Map<string, string>(model.keywordLabels);
  for (const f of model.folders) {
    if (f.kind === 'virtual' || f.labelId === undefined) continue;
    const system = f.role !== undefined && ROLE_LABEL[f.role] !== undefined;
    const label: Label = {
      id: f.labelId,
      name: system ? f.labelId : f.name,
      type: system ? 'system' : 'user',
      ...(f.kind === 'location' && f.role === undefined ? { folder: true as const } : {}),
    };
    // Counts cost an EXAMINE and a SEARCH per folder: only when asked for.
    if (counts && (only === undefined || only === f.labelId)) {
      const box = await examine(client, f.path);
      for (const flag of box.flags ?? []) {
        const k = userKeyword(flag);
        if (k !== undefined) keywords.set(keywordLabelId(k), k);
      }
      label.messagesTotal = box.exists;
      label.messagesUnread = box.exists === 0 ? 0 : (await searchUids(client, { seen: false })).length;
    }
    out.push(label);
  }
  out.push(...FLAG_LABELS);
  for (const [id, name] of keywords) out.push({ id, name, type: 'user' });
  return out;
}
