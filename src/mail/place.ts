import { parseSnoozeLabel } from './snooze-labels.js';

/**
 * Where a message is, decided in one place for every write route (docs/architecture.md, "The write policy"): thread and
 * message tools, modify_labels, bulk_modify, undo, snooze and restore all ask this, so two routes
 * cannot disagree about the same mail.
 *
 * - TRASH and SPAM win over every other label: Gmail may leave INBOX beside TRASH on a trashed
 *   thread, and that mail is in the trash, not in the inbox.
 * - A message only in Sent or Drafts is the user's own words: neither inbox nor archive.
 * - An IMAP user folder (Folders/Work, or Work on a plain server) is a place of its own, unlike a
 *   Gmail label or a Bridge label folder (Labels/X), which sit beside the message's place. The
 *   snooze folders (MCP/Snoozed/…) hold archived mail waiting to come back: they count as Archive.
 */
export type Place = 'inbox' | 'archive' | 'spam' | 'trash' | 'sent' | 'drafts' | 'folder';

/** A thread whose messages (the user's own aside) sit in different places has no one place. */
export type ThreadPlace = Place | 'mixed';

export interface Placed {
  labelIds: readonly string[];
  /** IMAP: label ids of the user folders its copies live in (MailMessage.folders). */
  folders?: readonly string[] | undefined;
}

export const PLACE_NAMES: Readonly<Record<ThreadPlace, string>> = {
  inbox: 'the inbox',
  archive: 'Archive',
  spam: 'Spam',
  trash: 'Trash',
  sent: 'Sent (only)',
  drafts: 'Drafts (only)',
  folder: 'a folder of its own',
  mixed: 'several places',
};

/** A snooze folder is archived mail on a timer, whatever prefix the server puts before it. */
export function isSnoozeFolder(labelId: string): boolean {
  const at = labelId.toLowerCase().lastIndexOf('mcp/snoozed/');
  return at >= 0 && parseSnoozeLabel(labelId.slice(at)) !== undefined;
}

export function placeOf(m: Placed): Place {
  const has = (l: string): boolean => m.labelIds.includes(l);
  if (has('TRASH')) return 'trash';
  if (has('SPAM')) return 'spam';
  if (has('INBOX')) return 'inbox';
  if ((m.folders ?? []).some((f) => !isSnoozeFolder(f))) return 'folder';
  if (has('SENT')) return 'sent';
  if (has('DRAFT')) return 'drafts';
  return 'archive';
}

/**
 * A thread is in the inbox when any message is (that is what a move out takes). Otherwise its
 * place is where the other side's messages are — the user's own replies in Sent go wherever the
 * conversation goes — and a thread spread over several places is "mixed": a restore of it
 * would move mail from a place the caller did not name, so it is judged message by message.
 */
export function threadPlace(messages: readonly Placed[]): ThreadPlace {
  const places = messages.map(placeOf);
  if (places.includes('inbox')) return 'inbox';
  const theirs = places.filter((p) => p !== 'sent' && p !== 'drafts');
  const set = new Set(theirs.length > 0 ? theirs : places);
  if (set.size === 0) return 'archive';
  return set.size === 1 ? ([...set][0] as Place) : 'mixed';
}

/**
 * Under inboxOnlyMoves, what the agent may do from each place (README "What the server
 * enforces"): out of the inbox to Archive, Spam, Trash or a snooze; back to the inbox from
 * Archive, Spam or Trash; nothing else. Labels that are not places are judged on their own.
 */
export type Destination = 'archive' | 'spam' | 'trash' | 'snooze' | 'inbox';

export const ALLOWED_MOVES: Readonly<Record<ThreadPlace, readonly Destination[]>> = {
  inbox: ['archive', 'spam', 'trash', 'snooze'],
  archive: ['inbox'],
  spam: ['inbox'],
  trash: ['inbox'],
  sent: [],
  drafts: [],
  folder: [],
  mixed: [],
};

/** The place a restore source label names (restore's fromLabelIds: TRASH, SPAM or ARCHIVE). */
export function placeOfSource(labelId: string): Place | undefined {
  return ({ TRASH: 'trash', SPAM: 'spam', ARCHIVE: 'archive' } as const)[labelId as 'TRASH'];
}
