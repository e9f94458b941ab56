import type { ImapFlow } from 'imapflow';
import { decodeWords, headerValues, parseAddressList } from '../../mail/headers.js';
import { parseRawMessage } from '../../mail/mime.js';
import { folderByRole } from './folders.js';
import type { FolderModel } from './query.js';
import { examine, holds, searchUids, syncSelected, uidSet } from './reader.js';

/*
 * The Sent folder as the policy reads it: who the person wrote to lately (protected correspondents)
 * and a version that says whether that list can have changed since it was read.
 */

/** A Sent folder's version: its UIDVALIDITY, UIDNEXT and message count (both lookups say 'none' when there is no Sent). */
const versionOf = (uidValidity: bigint | number, uidNext: number, messages: number): string =>
  `${String(uidValidity)}:${uidNext}:${messages}`;

/**
 * EXAMINE Sent, one UID SEARCH SINCE, one FETCH of To and Cc: three commands. The EXAMINE's
 * numbers are the version sentVersion compares with.
 */
export async function sentRecipients(
  client: ImapFlow,
  model: FolderModel,
  days: number,
  now: number,
): Promise<{ addresses: string[]; version?: string }> {
  const sent = folderByRole(model, 'sent');
  if (sent === undefined) return { addresses: [], version: 'none' };
  const box = await examine(client, sent.path);
  const version = versionOf(box.uidValidity, box.uidNext, box.exists);
  if (box.exists === 0) return { addresses: [], version };
  // SINCE compares dates in the server's zone (RFC 3501 §6.4.4): one day more is safe.
  const since = new Date(now - (days + 1) * 86_400_000);
  const uids = await searchUids(client, { since });
  if (uids.length === 0) return { addresses: [], version };
  const rows = await client.fetchAll(uidSet(uids), { uid: true, headers: ['to', 'cc'] }, { uid: true });
  const out: string[] = [];
  for (const r of rows.sort((a, b) => b.uid - a.uid)) {
    const { headers } = parseRawMessage(r.headers ?? Buffer.alloc(0));
    for (const name of ['To', 'Cc'])
      for (const v of headerValues(headers, name))
        for (const a of parseAddressList(decodeWords(v))) if (a.address !== '') out.push(a.address);
  }
  return { addresses: out, version };
}

/**
 * One STATUS of Sent: the version sentRecipients read at. STATUS, not EXAMINE, so the folder a
 * write's judging read selected (INBOX) stays selected for the write.
 */
export async function sentVersion(client: ImapFlow, model: FolderModel): Promise<string | undefined> {
  const sent = folderByRole(model, 'sent');
  if (sent === undefined) return 'none';
  // The selected folder's STATUS is the session's view until a NOOP (reader.ts).
  if (holds(client, sent.path)) await syncSelected(client);
  const s = await client.status(sent.path, { messages: true, uidNext: true, uidValidity: true });
  if (!s || s.uidValidity === undefined || s.uidNext === undefined || s.messages === undefined)
    return undefined;
  return versionOf(s.uidValidity, s.uidNext, s.messages);
}
