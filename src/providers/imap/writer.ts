import type { ImapFlow, MailboxObject } from 'imapflow';
import { MailError, invalidInput } from '../../mail/errors.js';
import { folderByRole, keywordLabelId, KEYWORD_PREFIX } from './folders.js';
import type { Folder, FolderModel } from './query.js';
import { opened, searchUids, uidSet } from './reader.js';
import type { Copy, ReadMessage } from './reader.js';

/*
 * The write half on IMAP. A label change becomes, per folder, at most one UID STORE per flag
 * change and one UID MOVE per destination for the whole batch (COPY + UID EXPUNGE of exactly
 * those UIDs where the server has UIDPLUS but no MOVE: a plain EXPUNGE could remove other
 * messages marked \Deleted by another client), plus one COPY per label folder to apply a label
 * (Proton Bridge's Labels/X). After each MOVE the source folder is searched for the batch's UIDs:
 * what is no longer there is what moved, and that — not what was asked — is what is reported.
 */

export interface LabelDelta {
  add: readonly string[];
  remove: readonly string[];
}

/** Per message: what the server shows after the batch. */
export interface WriteReport {
  id: string;
  outcome: 'changed' | 'failed' | 'unknown';
  error?: string;
  /**
   * Where its copies are now, as the server's COPYUID answers (RFC 4315 §3) say; absent when a
   * copy's new UID is not known (a server without UIDPLUS, or an answer that was lost).
   */
  copies?: Copy[];
}

const FLAG_OF: Readonly<Record<string, { flag: string; setWhenAdded: boolean }>> = {
  UNREAD: { flag: '\\Seen', setWhenAdded: false },
  STARRED: { flag: '\\Flagged', setWhenAdded: true },
};

/** Opens `path` read-write (SELECT) unless it already is. */
async function select(client: ImapFlow, path: string): Promise<MailboxObject> {
  const current = client.mailbox;
  if (current && current.path === path && !current.readOnly) return current;
  const box = await client.mailboxOpen(path, { readOnly: false });
  opened(client);
  return box;
}

function byLabel(model: FolderModel, id: string): Folder | undefined {
  return model.folders.find((f) => f.labelId === id && f.kind !== 'virtual');
}

/** Checks every id of the change names something this account has; names the field when not. */
export function checkDelta(model: FolderModel, delta: LabelDelta, keywordsAllowed: boolean): void {
  for (const [field, ids] of [
    ['add', delta.add],
    ['remove', delta.remove],
  ] as const) {
    for (const id of ids) {
      if (id === 'SENT' || id === 'DRAFT')
        throw invalidInput(field, `${id} is where a message was written; it cannot be added or removed`);
      if (id in FLAG_OF) continue;
      if (id.startsWith(KEYWORD_PREFIX)) {
        if (!keywordsAllowed)
          throw invalidInput(field, `${id}: this IMAP server keeps no keywords; use a label folder`);
        continue;
      }
      if (byLabel(model, id) === undefined)
        throw invalidInput(field, `"${id}" is no label of this IMAP account (list_labels shows them)`);
    }
  }
}

interface Plan {
  /** folder path → flag operations on UIDs. */
  stores: Map<string, { folder: Folder; add: Map<string, number[]>; remove: Map<string, number[]> }>;
  /** "from\0to" → UIDs. */
  moves: Map<string, { from: Folder; to: Folder; uids: number[]; ids: string[] }>;
  /** label folder path → copies to put there. */
  copies: Map<string, { to: Folder; from: Map<string, { folder: Folder; uids: number[] }> }>;
  /** label folder copies to expunge (removing a Bridge label). */
  expunges: Map<string, { folder: Folder; uids: number[]; ids: string[] }>;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Where a location copy goes under this change, or undefined when it stays. */
function destination(model: FolderModel, copy: Copy, delta: LabelDelta): Folder | undefined {
  const add = new Set(delta.add);
  const here = copy.folder;
  const label = here.labelId;
  if (add.has('TRASH')) return here.role === 'trash' ? undefined : folderByRole(model, 'trash');
  if (add.has('SPAM')) return here.role === 'junk' ? undefined : folderByRole(model, 'junk');
  const removed = label !== undefined && delta.remove.includes(label);
  // Sent and Drafts copies are where the user's own words are kept: only trash and spam move them.
  if (here.role === 'sent' || here.role === 'drafts') return undefined;
  const target = [...add]
    .map((id) => byLabel(model, id))
    .find((f) => f !== undefined && f.kind === 'location');
  if (target !== undefined) {
    if (target.path === here.path) return undefined;
    // A new place is taken from the one being left, or from Archive (the place without a label).
    return removed || here.role === 'archive' || label === undefined ? target : undefined;
  }
  if (!removed) return undefined;
  if (here.role === 'inbox' || here.kind === 'location') {
    if (here.role === 'junk' || here.role === 'trash') return folderByRole(model, 'inbox');
    return folderByRole(model, 'archive') ?? unsupportedArchive();
  }
  return undefined;
}

function unsupportedArchive(): never {
  throw new MailError(
    'unsupported',
    'this IMAP account has no Archive folder (no \\Archive special-use folder and none named Archive): create one, then archive again',
  );
}

/**
 * The folders whose set of messages a change alters (moves' both ends, copies' targets,
 * expunged label copies) and every view, for the folder index to check again afterwards.
 */
export function foldersTouched(
  model: FolderModel,
  messages: readonly ReadMessage[],
  delta: LabelDelta,
): string[] {
  const plan = planChange(model, messages, delta);
  const out = new Set(model.folders.filter((f) => f.kind === 'virtual').map((f) => f.path));
  for (const mv of plan.moves.values()) out.add(mv.from.path).add(mv.to.path);
  for (const c of plan.copies.values()) out.add(c.to.path);
  for (const e of plan.expunges.values()) out.add(e.folder.path);
  // Proton takes every label off mail it moves to Spam or Trash (Bridge then removes the copies
  // from the label folders): on its layout such a move touches every label folder.
  const binned = [...plan.moves.values()].some((mv) => mv.to.role === 'junk' || mv.to.role === 'trash');
  if (model.proton === true && binned) for (const f of model.folders) if (f.kind === 'label') out.add(f.path);
  return [...out];
}

function planChange(model: FolderModel, messages: readonly ReadMessage[], delta: LabelDelta): Plan {
  const plan: Plan = { stores: new Map(), moves: new Map(), copies: new Map(), expunges: new Map() };
  for (const m of messages) {
    const real = m.copies.filter((c) => c.folder.kind !== 'virtual' && c.uid > 0);
    for (const c of real) {
      const entry = plan.stores.get(c.folder.path) ?? { folder: c.folder, add: new Map(), remove: new Map() };
      plan.stores.set(c.folder.path, entry);
      for (const id of delta.add) {
        const f = FLAG_OF[id];
        if (f) push(f.setWhenAdded ? entry.add : entry.remove, f.flag, c.uid);
        else if (id.startsWith(KEYWORD_PREFIX)) push(entry.add, id.slice(1), c.uid);
      }
      for (const id of delta.remove) {
        const f = FLAG_OF[id];
        if (f) push(f.setWhenAdded ? entry.remove : entry.add, f.flag, c.uid);
        else if (id.startsWith(KEYWORD_PREFIX)) push(entry.remove, id.slice(1), c.uid);
      }
    }
    const locations = real.filter((c) => c.folder.kind === 'location');
    for (const c of locations) {
      const to = destination(model, c, delta);
      if (to === undefined) continue;
      const key = `${c.folder.path}\0${to.path}`;
      const mv = plan.moves.get(key) ?? { from: c.folder, to, uids: [], ids: [] };
      mv.uids.push(c.uid);
      mv.ids.push(m.id);
      plan.moves.set(key, mv);
    }
    // Adding INBOX to a message that lives only where nothing moves it (the user's own message in
    // Sent) files a copy in INBOX, as a note to self is: both copies are the one message.
    const inbox = folderByRole(model, 'inbox');
    if (
      delta.add.includes('INBOX') &&
      inbox !== undefined &&
      locations.length > 0 &&
      locations.every((c) => destination(model, c, delta) === undefined && c.folder.path !== inbox.path)
    ) {
      const source = locations[0] as Copy;
      const entry = plan.copies.get(inbox.path) ?? { to: inbox, from: new Map() };
      const from = entry.from.get(source.folder.path) ?? { folder: source.folder, uids: [] };
      from.uids.push(source.uid);
      entry.from.set(source.folder.path, from);
      plan.copies.set(inbox.path, entry);
    }
    for (const id of delta.add) {
      const to = byLabel(model, id);
      if (to?.kind !== 'label' || real.some((c) => c.folder.path === to.path)) continue;
      const source = locations[0];
      if (source === undefined) continue;
      const entry = plan.copies.get(to.path) ?? { to, from: new Map() };
      const from = entry.from.get(source.folder.path) ?? { folder: source.folder, uids: [] };
      from.uids.push(source.uid);
      entry.from.set(source.folder.path, from);
      plan.copies.set(to.path, entry);
    }
    for (const id of delta.remove) {
      const f = byLabel(model, id);
      if (f?.kind !== 'label') continue;
      for (const c of real.filter((x) => x.folder.path === f.path)) {
        const e = plan.expunges.get(f.path) ?? { folder: f, uids: [], ids: [] };
        e.uids.push(c.uid);
        e.ids.push(m.id);
        plan.expunges.set(f.path, e);
      }
    }
  }
  return plan;
}

/**
 * UID MOVE, or COPY + UID EXPUNGE of exactly those UIDs (UIDPLUS); never a plain EXPUNGE.
 * Returns the source UIDs the server's COPYUID answer (RFC 4315 §3) says it moved, when it says.
 */
/** What a COPY or MOVE answered: source UID → new UID, under the target's UIDVALIDITY. */
interface CopyUids {
  uidValidity: string;
  map: ReadonlyMap<number, number>;
}

function copyUids(
  r:
    | { uidValidity?: bigint | number | undefined; uidMap?: Map<number, number> | undefined }
    | false
    | undefined,
): CopyUids | undefined {
  return r && r.uidMap && r.uidValidity !== undefined
    ? { uidValidity: String(r.uidValidity), map: r.uidMap }
    : undefined;
}

export async function moveUids(
  client: ImapFlow,
  from: Folder,
  uids: readonly number[],
  to: string,
): Promise<CopyUids | undefined> {
  await select(client, from.path);
  const set = uidSet(uids);
  if (client.capabilities.has('MOVE')) return copyUids(await client.messageMove(set, to, { uid: true }));
  if (!client.capabilities.has('UIDPLUS'))
    throw new MailError(
      'unsupported',
      'this IMAP server has neither MOVE (RFC 6851) nor UIDPLUS (RFC 4315): moving would need a plain EXPUNGE, which can remove other messages marked deleted, so mailwarden does not move mail here',
    );
  refuseExpungeIn(from, 'moving mail out of it without MOVE');
  const copied = await client.messageCopy(set, to, { uid: true });
  await client.messageDelete(set, { uid: true });
  return copyUids(copied);
}

/**
 * No EXPUNGE, plain or UID, ever runs in Trash or Drafts: on Proton Mail Bridge an expunge there
 * deletes the message for good, every copy of it included (proton-bridge connector.go
 * RemoveMessagesFromMailbox), and a person's own drafts are not the agent's to remove.
 */
export function refuseExpungeIn(folder: Folder, what: string): void {
  if (folder.role === 'trash' || folder.role === 'drafts')
    throw new MailError(
      'unsupported',
      `${what} would need an EXPUNGE in ${folder.path}, which on some servers (Proton Mail Bridge) deletes the message for good; mailwarden never expunges in Trash or Drafts`,
    );
}

/** The UIDs of `uids` still in `folder` (one UID SEARCH): the rest left it. */
async function stillThere(client: ImapFlow, folder: Folder, uids: readonly number[]): Promise<Set<number>> {
  await select(client, folder.path);
  return new Set(await searchUids(client, { uid: uidSet(uids) }));
}

/**
 * Applies the change to the located messages and reports each message by what the server shows
 * afterwards. A failure part-way leaves the other messages' outcomes as the server shows them.
 */
export async function applyChange(
  client: ImapFlow,
  model: FolderModel,
  messages: readonly ReadMessage[],
  delta: LabelDelta,
): Promise<WriteReport[]> {
  const plan = planChange(model, messages, delta);
  const failed = new Map<string, string>();
  const unknown = new Map<string, string>();
  // Per message: copies gone (path\0uid) and copies made; null once a new UID is not known.
  const gone = new Set<string>();
  const made = new Map<string, Copy[] | null>();
  const note = (m: ReadMessage, copy: Copy | null): void => {
    const list = made.get(m.id);
    if (list === null) return;
    if (copy === null) made.set(m.id, null);
    else made.set(m.id, [...(list ?? []), copy]);
  };
  /** The new copies of `from`'s UIDs in `to`, from a COPYUID answer (or none known). */
  const placed = (from: Folder, uids: readonly number[], to: Folder, answer: CopyUids | undefined): void => {
    for (const uid of uids) {
      const m = messages.find((x) => x.copies.some((c) => c.folder.path === from.path && c.uid === uid));
      const source = m?.copies.find((c) => c.folder.path === from.path && c.uid === uid);
      if (m === undefined || source === undefined) continue;
      const dst = answer?.map.get(uid);
      note(
        m,
        dst === undefined || answer === undefined
          ? null
          : { ...source, folder: to, uid: dst, uidValidity: answer.uidValidity },
      );
    }
  };
  const folderIds = (path: string): string[] =>
    messages.filter((m) => m.copies.some((c) => c.folder.path === path)).map((m) => m.id);
  const guard = async (ids: readonly string[], run: () => Promise<void>): Promise<boolean> => {
    try {
      await run();
      return true;
    } catch (e) {
      for (const id of ids) failed.set(id, e instanceof Error ? e.message : String(e));
      return false;
    }
  };
  // Flags first: a MOVE carries them to the new place (RFC 6851 §3.3).
  for (const { folder, add, remove } of plan.stores.values()) {
    if (add.size === 0 && remove.size === 0) continue;
    await guard(folderIds(folder.path), async () => {
      await select(client, folder.path);
      for (const [flag, uids] of add) await client.messageFlagsAdd(uidSet(uids), [flag], { uid: true });
      for (const [flag, uids] of remove) await client.messageFlagsRemove(uidSet(uids), [flag], { uid: true });
    });
  }
  for (const { to, from } of plan.copies.values()) {
    for (const { folder, uids } of from.values()) {
      await guard(folderIds(folder.path), async () => {
        await select(client, folder.path);
        placed(folder, uids, to, copyUids(await client.messageCopy(uidSet(uids), to.path, { uid: true })));
      });
    }
  }
  // Moves before label expunges: the folder a move leaves is the one the judging read selected.
  for (const mv of plan.moves.values()) {
    let error: string | undefined;
    let moved: CopyUids | undefined;
    try {
      moved = await moveUids(client, mv.from, mv.uids, mv.to.path);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    // Whatever the answer (or none), the folder says what left it.
    let left: Set<number> | undefined;
    try {
      left = await stillThere(client, mv.from, mv.uids);
    } catch {
      left = undefined;
    }
    mv.ids.forEach((id, i) => {
      const uid = mv.uids[i] as number;
      if (left === undefined) unknown.set(id, error ?? 'the server did not say whether the message moved');
      else if (left.has(uid)) failed.set(id, error ?? `still in ${mv.from.path} after the move`);
      // Gone from the folder but not moved by this write: another client took it first.
      else if (moved !== undefined && !moved.map.has(uid))
        failed.set(
          id,
          `no longer in ${mv.from.path} when the move ran (another client moved it); nothing was moved`,
        );
      else gone.add(`${mv.from.path}\0${uid}`);
    });
    placed(
      mv.from,
      mv.uids.filter((u) => left !== undefined && !left.has(u)),
      mv.to,
      moved,
    );
  }
  for (const e of plan.expunges.values()) {
    const done = await guard(e.ids, async () => {
      refuseExpungeIn(e.folder, 'removing this label');
      await select(client, e.folder.path);
      if (!client.capabilities.has('UIDPLUS'))
        throw new MailError('unsupported', 'removing a label folder copy needs UIDPLUS (UID EXPUNGE)');
      await client.messageDelete(uidSet(e.uids), { uid: true });
    });
    if (done) for (const uid of e.uids) gone.add(`${e.folder.path}\0${uid}`);
  }
  return messages.map((m): WriteReport => {
    const f = failed.get(m.id);
    if (f !== undefined) return { id: m.id, outcome: 'failed', error: f };
    const u = unknown.get(m.id);
    if (u !== undefined) return { id: m.id, outcome: 'unknown', error: u };
    const added = made.get(m.id);
    if (added === null) return { id: m.id, outcome: 'changed' };
    const kept = m.copies.filter((c) => !gone.has(`${c.folder.path}\0${c.uid}`));
    return { id: m.id, outcome: 'changed', copies: [...kept, ...(added ?? [])] };
  });
}

/** A label id for a new label: a keyword where the server keeps them, else a label folder. */
/** Labels are folders of copies (Proton Bridge's Labels/X): keywords play no part in them. */
export function labelsAreFolders(model: FolderModel): boolean {
  return model.proton === true || model.folders.some((f) => f.kind === 'label');
}

export function newLabelTarget(
  model: FolderModel,
  name: string,
  keywordsAllowed: boolean,
): { kind: 'keyword'; id: string } | { kind: 'folder'; path: string } {
  // Snoozed mail must leave the inbox and be visible in every client: a folder, never a keyword.
  // Proton Bridge creates folders under Folders/ only, labels under Labels/ only.
  if (name === 'MCP' || name.startsWith('MCP/'))
    return { kind: 'folder', path: model.proton ? `Folders/${name}` : name };
  // Where labels are folders of copies (Proton Bridge), a new label is one more of them.
  if (labelsAreFolders(model)) return { kind: 'folder', path: `Labels/${name}` };
  if (!keywordsAllowed) return { kind: 'folder', path: name };
  return { kind: 'keyword', id: keywordLabelId(keywordFor(name)) };
}

/** An IMAP keyword is an atom (RFC 3501 §9): no space, parentheses, quotes, wildcards or "]". */
export function keywordFor(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  return name.replace(/[\s(){}"\\\]%*\u0000-\u001f\u007f]/gu, '_');
}
