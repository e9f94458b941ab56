import type { ImapFlow } from 'imapflow';
import { MailError, invalidInput } from '../../mail/errors.js';
import type { HistoryPage } from '../../mail/types.js';
import { examine, fetchCopies, holds, labelIdsOf, readCopy } from './reader.js';
import type { Folder } from './query.js';
import { componentOf } from './threads.js';
import type { IndexUse } from './threads.js';

/*
 * what_changed on IMAP (RFC 7162 CONDSTORE). The cursor carries, for every folder, its
 * UIDVALIDITY, HIGHESTMODSEQ and UIDNEXT: what arrived is every UID at or above the old UIDNEXT,
 * what changed flags is every older UID whose MODSEQ passed the old HIGHESTMODSEQ. A folder
 * whose UIDVALIDITY changed was renumbered (RFC 3501 §2.3.1.1): the old UIDs mean nothing, so
 * that is an error that says so, never an empty page.
 */

interface FolderMark {
  path: string;
  uidValidity: string;
  modseq: string;
  uidNext: number;
}

export function encodeCursor(marks: readonly FolderMark[]): string {
  const rows = marks.map((m) => [m.path, m.uidValidity, m.modseq, m.uidNext]);
  return `i${Buffer.from(JSON.stringify(rows), 'utf8').toString('base64url')}`;
}

export function decodeCursor(cursor: string): FolderMark[] {
  const bad = () =>
    invalidInput('historyId', 'is not a cursor from this IMAP account (get_profile or what_changed)');
  if (!/^i[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let rows: unknown;
  try {
    rows = JSON.parse(Buffer.from(cursor.slice(1), 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(rows)) throw bad();
  return rows.map((r: unknown) => {
    if (!Array.isArray(r) || r.length !== 4) throw bad();
    const [path, uidValidity, modseq, uidNext] = r as unknown[];
    if (typeof path !== 'string' || typeof uidValidity !== 'string' || typeof modseq !== 'string')
      throw bad();
    if (typeof uidNext !== 'number' || !Number.isInteger(uidNext) || uidNext < 1) throw bad();
    return { path, uidValidity, modseq, uidNext };
  });
}

async function markOf(
  client: ImapFlow,
  folder: Folder,
  use?: IndexUse,
): Promise<{ mark: FolderMark; exists: number }> {
  const held = holds(client, folder.path);
  const box = await examine(client, folder.path);
  // A fresh EXAMINE reports what a STATUS would: the index's check of this folder is done.
  if (!held) use?.index.observed(folder.path, box, use.signal);
  return {
    exists: box.exists,
    mark: {
      path: folder.path,
      uidValidity: String(box.uidValidity),
      modseq: String(box.highestModseq ?? 0n),
      uidNext: box.uidNext,
    },
  };
}

/**
 * get_profile: totals over the folders a message lives in (copies in label folders are not
 * counted again) and a cursor over every folder. Threads are counted from each message's
 * Message-ID/References/In-Reply-To (one FETCH per folder, no bodies).
 */
export async function profileCursor(
  client: ImapFlow,
  places: readonly Folder[],
  use?: IndexUse,
): Promise<{ messages: number; threads: number; historyId: string }> {
  const marks: FolderMark[] = [];
  const all = [];
  for (const folder of places) {
    const { mark, exists } = await markOf(client, folder, use);
    marks.push(mark);
    if (folder.kind !== 'location' || exists === 0) continue;
    // Counting needs only the links, which the folder index holds once it has read them.
    const indexed = use === undefined ? undefined : await use.index.current(client, folder, use.signal);
    if (indexed !== undefined) {
      all.push(...indexed.values());
      continue;
    }
    for (const r of await fetchCopies(client, folder, '1:*', 'links'))
      all.push(readCopy(r.copy, r.bytes, false));
  }
  const ids = new Set(all.map((m) => m.id));
  const roots = new Set<string>();
  let threads = 0;
  for (const m of all) {
    const first = m.links[0];
    if (first === undefined) {
      threads++;
      continue;
    }
    if (roots.has(m.id)) continue;
    const members = componentOf(first, all);
    for (const x of members) roots.add(x.id);
    threads++;
  }
  return { messages: ids.size, threads, historyId: encodeCursor(marks) };
}

export async function imapHistory(
  client: ImapFlow,
  places: readonly Folder[],
  cursor: string,
): Promise<HistoryPage> {
  const old = new Map(decodeCursor(cursor).map((m) => [m.path, m]));
  const page: HistoryPage = { added: [], deleted: [], labelsAdded: [], labelsRemoved: [], historyId: '' };
  const marks: FolderMark[] = [];
  for (const folder of places) {
    const { mark } = await markOf(client, folder);
    marks.push(mark);
    const before = old.get(folder.path);
    const from = before?.uidNext ?? 1;
    if (before !== undefined && before.uidValidity !== mark.uidValidity)
      throw new MailError(
        'invalid_input',
        `historyId: folder "${folder.path}" was renumbered by the server (UIDVALIDITY ${before.uidValidity} → ${mark.uidValidity}), so changes since that cursor cannot be listed; take a new cursor from get_profile`,
        { field: 'historyId' },
      );
    if (mark.uidNext > from) {
      for (const r of await fetchCopies(client, folder, `${from}:${mark.uidNext - 1}`, 'links')) {
        const m = readCopy(r.copy, r.bytes, false);
        page.added.push({ messageId: m.id, threadId: m.threadId, labelIds: labelIdsOf(m) });
      }
    }
    if (before !== undefined && from > 1 && BigInt(mark.modseq) > BigInt(before.modseq)) {
      const rows = await client.fetchAll(
        `1:${from - 1}`,
        { uid: true, flags: true, headers: ['message-id', 'references', 'in-reply-to'] },
        { uid: true, changedSince: BigInt(before.modseq) },
      );
      for (const r of rows) {
        const copy = {
          folder,
          uidValidity: mark.uidValidity,
          uid: r.uid,
          flags: r.flags ?? new Set<string>(),
          internalDate: 0,
          size: 0,
        };
        const m = readCopy(copy, r.headers ?? Buffer.alloc(0), false);
        // CONDSTORE says that a message's flags changed, not which: report its state now.
        const labels = labelIdsOf(m).filter((l) => l === 'UNREAD' || l === 'STARRED' || l.startsWith('#'));
        const gone = ['UNREAD', 'STARRED'].filter((l) => !labels.includes(l));
        if (labels.length > 0)
          page.labelsAdded.push({ messageId: m.id, threadId: m.threadId, labelIds: labels });
        if (gone.length > 0)
          page.labelsRemoved.push({ messageId: m.id, threadId: m.threadId, labelIds: gone });
      }
    }
  }
  page.historyId = encodeCursor(marks);
  return page;
}
