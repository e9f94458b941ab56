import type { ListResponse } from 'imapflow';
import type { Folder, FolderModel, FolderRole } from './query.js';

/*
 * A folder-and-flag mailbox as the label model the tools speak (docs/architecture.md, "The Mailbox contract"). Roles come
 * from SPECIAL-USE attributes (RFC 6154), which imapflow reads from LIST even where the server
 * does not advertise the extension (Proton's gluon sends \Sent, \Junk… without it), and from
 * known names otherwise (imapflow's localized table; Proton's "Spam" and "Starred").
 */

const ROLE_BY_USE: Readonly<Record<string, FolderRole>> = {
  '\\Inbox': 'inbox',
  '\\Sent': 'sent',
  '\\Drafts': 'drafts',
  '\\Junk': 'junk',
  '\\Trash': 'trash',
  '\\Archive': 'archive',
  '\\All': 'all',
  '\\Flagged': 'flagged',
};

/** The label id a message carries while it sits in a folder of this role. */
export const ROLE_LABEL: Readonly<Partial<Record<FolderRole, string>>> = {
  inbox: 'INBOX',
  sent: 'SENT',
  drafts: 'DRAFT',
  junk: 'SPAM',
  trash: 'TRASH',
};

/** Names that mean a role when the server gives no attribute (Proton Bridge, Gmail over IMAP). */
const ROLE_BY_NAME: ReadonlyMap<string, FolderRole> = new Map([
  ['all mail', 'all'],
  ['[gmail]/all mail', 'all'],
  ['starred', 'flagged'],
  ['[gmail]/starred', 'flagged'],
  ['spam', 'junk'],
  ['[gmail]/spam', 'junk'],
  ['archive', 'archive'],
]);

/** Proton Bridge's layout: user folders under Folders/, labels (copies) under Labels/. */
const PROTON_FOLDERS = 'Folders';
const PROTON_LABELS = 'Labels';

export interface FolderModelOptions {
  /** Gmail over IMAP (X-GM-EXT-1): every user folder is a label whose messages live in All Mail. */
  gmail: boolean;
}

function roleOf(entry: ListResponse): FolderRole | undefined {
  if (entry.path.toUpperCase() === 'INBOX') return 'inbox';
  const byUse = entry.specialUse === undefined ? undefined : ROLE_BY_USE[entry.specialUse];
  return byUse ?? ROLE_BY_NAME.get(entry.path.toLowerCase());
}

function topSegment(entry: ListResponse): string {
  return entry.delimiter ? (entry.path.split(entry.delimiter)[0] ?? entry.path) : entry.path;
}

export function buildFolderModel(entries: readonly ListResponse[], options: FolderModelOptions): FolderModel {
  const folders: Folder[] = [];
  const taken = new Set<FolderRole>();
  const protonLayout = [PROTON_FOLDERS, PROTON_LABELS].every((p) => entries.some((e) => e.path === p));
  for (const e of entries) {
    if (e.flags.has('\\Noselect') || e.flags.has('\\NonExistent')) continue;
    // Proton's two parents hold the user folders and labels; they are no place of their own.
    if ((e.path === PROTON_FOLDERS || e.path === PROTON_LABELS) && protonLayout) continue;
    let role = roleOf(e);
    // One folder per role: a second "Archive" (say Folders/Archive) is a user folder.
    if (role !== undefined && taken.has(role)) role = undefined;
    if (role !== undefined) taken.add(role);
    const top = topSegment(e);
    const inLabels = top === PROTON_LABELS && e.path !== PROTON_LABELS;
    const inFolders = top === PROTON_FOLDERS && e.path !== PROTON_FOLDERS;
    const prefix = inLabels || inFolders ? top.length + (e.delimiter?.length ?? 1) : 0;
    const name = role === undefined ? e.path.slice(prefix) : e.path;
    const virtual = role === 'all' || role === 'flagged' || e.specialUse === '\\Important';
    const kind: Folder['kind'] = virtual
      ? 'virtual'
      : role === undefined && (inLabels || options.gmail)
        ? 'label'
        : 'location';
    const folder: Folder = { path: e.path, kind, name };
    if (role !== undefined) folder.role = role;
    const labelId = role === undefined ? (virtual ? undefined : e.path) : ROLE_LABEL[role];
    if (labelId !== undefined) folder.labelId = labelId;
    folders.push(folder);
  }
  return { folders, keywordLabels: new Map(), ...(protonLayout ? { proton: true } : {}) };
}

export function folderByRole(model: FolderModel, role: FolderRole): Folder | undefined {
  return model.folders.find((f) => f.role === role);
}

export function folderByPath(model: FolderModel, path: string): Folder | undefined {
  return model.folders.find((f) => f.path === path);
}

/** Folders a message can live in or be labelled by: every folder but the virtual views. */
export function placesOf(model: FolderModel): Folder[] {
  return model.folders.filter((f) => f.kind !== 'virtual');
}

/**
 * Keywords that are client or server bookkeeping, not labels a person made (RFC 5788 registry,
 * RFC 8457, RFC 9051 §2.3.2): never shown as user labels.
 */
const SYSTEM_KEYWORDS: ReadonlySet<string> = new Set(
  [
    '$forwarded',
    // The older spelling, in every folder's FLAGS on Proton Bridge: a state, not a label.
    'forwarded',
    '$mdnsent',
    '$junk',
    '$notjunk',
    'junk',
    'nonjunk',
    '$phishing',
    '$submitpending',
    '$submitted',
    '$hasattachment',
    '$hasnoattachment',
    '$ismailinglist',
    '$istrusted',
    '$important',
    '$answered',
    '$recent',
  ].map((k) => k.toLowerCase()),
);

/** A user keyword (label) among a message's or mailbox's flags, or undefined for system flags. */
export function userKeyword(flag: string): string | undefined {
  if (flag.startsWith('\\') || flag === '' || SYSTEM_KEYWORDS.has(flag.toLowerCase())) return undefined;
  return flag;
}

export const KEYWORD_PREFIX = '#';

export function keywordLabelId(keyword: string): string {
  return `${KEYWORD_PREFIX}${keyword}`;
}
