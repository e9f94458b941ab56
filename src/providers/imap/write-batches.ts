import type { ImapFlow } from 'imapflow';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import type { MailThread } from '../../mail/types.js';
import { uniqueById } from '../../mail/unique.js';
import type { LabelChange, MessageLabels, ThreadWriteOptions } from '../mailbox.js';
import { Gatherer } from '../gather.js';
import type { FolderIndex } from './folder-index.js';
import { parseImapId } from './ids.js';
import type { ImapId } from './ids.js';
import { leavesInbox, returnsToInbox } from './inbox-moves.js';
import type { FolderModel } from './query.js';
import { createFolder, examine, labelIdsOf, searchUids, uidSet } from './reader.js';
import type { Copy, ReadMessage } from './reader.js';
import { applyChange, checkDelta, foldersTouched, labelsAreFolders, newLabelTarget } from './writer.js';
import type { WriteReport } from './writer.js';

/*
 * Write batches on IMAP: concurrent modifyThread calls that make the same change are gathered
 * into one batch, written with one MOVE per source folder and one STORE per flag, and reported
 * message by message from the server's answers (COPYUID, the SEARCH after a move). A move out of
 * the inbox that a judging read of the same call located is written from those INBOX UIDs alone
 * (inbox-moves.ts); anything else reads its threads in full first and reads them again after.
 * ImapMailbox (mailbox.ts) owns the connection, the folder model and the index; this file owns
 * the batching and the write paths.
 */

/** A message a judging read or this server's write located, for the write that follows. */
export interface Known {
  at: number;
  message: ReadMessage;
  /** The thread id the call named. */
  threadId: string;
  /** Every copy is known (this server's write placed them), not only the INBOX one. */
  complete: boolean;
}

interface PendingWrite {
  threadId: string;
  /** The messages the write policy judged (ThreadWriteOptions.messageIds). */
  judged?: readonly string[];
  resolve: (m: MessageLabels[]) => void;
  reject: (e: unknown) => void;
}

/** What the write paths need of the mailbox they write for. */
export interface WriteHost {
  readonly index: FolderIndex;
  readonly judged: Map<string, Known>;
  now(): number;
  read<T>(fn: (client: ImapFlow, model: FolderModel) => Promise<T>, signal?: AbortSignal): Promise<T>;
  write<T>(
    fn: (client: ImapFlow, model: FolderModel) => Promise<T>,
    signal?: AbortSignal,
    narrowed?: boolean,
  ): Promise<T>;
  readThreads(
    client: ImapFlow,
    model: FolderModel,
    ids: readonly string[],
    format: 'full' | 'metadata',
    everyPlace?: boolean,
  ): Promise<Map<string, { thread: MailThread; read: ReadMessage[] }>>;
  locateMessages(client: ImapFlow, model: FolderModel, ids: readonly ImapId[]): Promise<ReadMessage[]>;
  keywordsAllowed(client: ImapFlow, model: FolderModel): Promise<boolean>;
  /** The model with a folder this server just created. */
  joined(client: ImapFlow, path: string): FolderModel;
}

export class WriteBatches {
  constructor(private readonly host: WriteHost) {}

  // Concurrent modifyThread calls with the same change (archive of 50 threads) are one batch:
  // one MOVE per source folder, one STORE per flag, then one verifying SEARCH. The tool's calls
  // arrive one log append apart (the action log writes each intent first); a batch goes once all
  // of them are in, or after a quiet spell of a few milliseconds (../gather.ts), against a second
  // per command on Bridge.
  private readonly gathering = new Gatherer<{
    write: PendingWrite;
    change: LabelChange;
    signal: AbortSignal | undefined;
    agentLabel: string | undefined;
  }>((items) => {
    // The change and the agent label are in the key; the signal is the latest caller's.
    const last = items[items.length - 1];
    if (last !== undefined)
      void this.flushWrites(
        items.map((i) => i.write),
        last.change,
        last.signal,
        last.agentLabel,
      );
  });

  enqueue(
    threadId: string,
    change: LabelChange,
    signal?: AbortSignal,
    options: ThreadWriteOptions = {},
  ): Promise<MessageLabels[]> {
    const parsed = parseImapId(threadId, 'threadId');
    if (parsed.kind === 'message') throw invalidInput('threadId', 'this is a message id; pass a thread id');
    if (change.add.length === 0 && change.remove.length === 0)
      throw invalidInput('change', 'add or remove at least one label');
    const key = JSON.stringify([change.add, change.remove, options.agentLabel ?? null]);
    return new Promise((resolve, reject) => {
      const write: PendingWrite = {
        threadId,
        resolve,
        reject,
        ...(options.messageIds === undefined ? {} : { judged: options.messageIds }),
      };
      this.gathering.add(key, { write, change, signal, agentLabel: options.agentLabel }, options.together);
    });
  }

  /**
   * The change as written: policy.json's agentLabel added where mail leaves the inbox for
   * anywhere but Spam and Trash, and removed where it comes back (a keyword, or Bridge's
   * Labels/NAME folder, created on first use — after the policy allowed the write).
   */
  private async withAgentLabel(
    client: ImapFlow,
    model: FolderModel,
    change: LabelChange,
    agentLabel: string | undefined,
  ): Promise<{ change: LabelChange; model: FolderModel }> {
    if (agentLabel === undefined) return { change, model };
    const out = change.remove.includes('INBOX') && !change.add.some((l) => l === 'SPAM' || l === 'TRASH');
    const back = change.add.includes('INBOX');
    if (!out && !back) return { change, model };
    const label = await this.agentLabel(client, model, agentLabel, out);
    model = label.model;
    const id = label.id;
    if (id === undefined) return { change, model };
    return out
      ? { change: { add: [...change.add, id], remove: change.remove }, model }
      : { change: { add: change.add, remove: [...change.remove, id] }, model };
  }

  /** The agent label's id: a keyword, or its folder's (created when missing and `create`). */
  private async agentLabel(
    client: ImapFlow,
    model: FolderModel,
    name: string,
    create: boolean,
  ): Promise<{ id: string | undefined; model: FolderModel; folder?: string; created: boolean }> {
    // Where labels are folders, PERMANENTFLAGS cannot change the answer: no SELECT to learn them.
    const keywords = labelsAreFolders(model) ? false : await this.host.keywordsAllowed(client, model);
    const target = newLabelTarget(model, name, keywords);
    if (target.kind === 'keyword') return { id: target.id, model, created: false };
    const id = model.folders.find((f) => f.path === target.path)?.labelId;
    if (id !== undefined || !create) return { id, model, folder: target.path, created: false };
    await createFolder(client, target.path);
    const joined = this.host.joined(client, target.path);
    const made = joined.folders.find((f) => f.path === target.path)?.labelId;
    return { id: made, model: joined, folder: target.path, created: true };
  }

  /**
   * The agent label made ready before the agent's first move (`mailwarden accounts add`), so
   * that move sends no CREATE: where the label is a folder (Bridge's Labels/NAME), the folder is
   * created when missing. A keyword needs nothing.
   */
  prepareAgentLabel(
    name: string,
    signal?: AbortSignal,
  ): Promise<{ kind: 'keyword' | 'folder'; place: string; created: boolean }> {
    return this.host.write(async (client, model) => {
      const label = await this.agentLabel(client, model, name, true);
      return label.folder === undefined
        ? { kind: 'keyword' as const, place: label.id ?? name, created: false }
        : { kind: 'folder' as const, place: label.folder, created: label.created };
    }, signal);
  }

  /**
   * A move out of the inbox whose every message a judging read of this call found in INBOX:
   * written from those UIDs alone (inbox-moves.ts), and reported from the MOVE's COPYUID and the
   * SEARCH after it. Undefined when the batch needs the full path.
   */
  private judgedCopies(batch: readonly PendingWrite[], change: LabelChange): ReadMessage[] | undefined {
    const out = leavesInbox(change);
    if (!out && !returnsToInbox(change)) return undefined;
    const list: ReadMessage[] = [];
    for (const b of batch) {
      if (b.judged === undefined || b.judged.length === 0) return undefined;
      for (const id of b.judged) {
        const e = this.host.judged.get(id);
        // INBOX copies judge a move out; a return needs every copy, as this server's write left them.
        if (e === undefined || (!out && !e.complete)) return undefined;
        list.push(e.message);
      }
    }
    return uniqueById(list);
  }

  private async flushJudged(
    batch: readonly PendingWrite[],
    messages: readonly ReadMessage[],
    change: LabelChange,
    signal: AbortSignal | undefined,
    agentLabel: string | undefined,
  ): Promise<void> {
    let reports: Map<string, WriteReport>;
    let applied: LabelChange = change;
    try {
      reports = await this.host.write(
        async (client, model) => {
          const labelled = await this.withAgentLabel(client, model, change, agentLabel);
          applied = labelled.change;
          checkDelta(labelled.model, applied, await this.host.keywordsAllowed(client, labelled.model));
          const touched = foldersTouched(labelled.model, messages, applied);
          try {
            const done = await applyChange(client, labelled.model, messages, applied);
            // Where each message is now, for a restore of it (or the next write of this call).
            const at = this.host.now();
            for (const r of done) {
              const k = this.host.judged.get(r.id);
              if (k === undefined) continue;
              if (r.copies === undefined) this.host.judged.delete(r.id);
              else
                this.host.judged.set(r.id, {
                  ...k,
                  at,
                  message: { ...k.message, copies: r.copies },
                  complete: true,
                });
            }
            this.host.index.applyWrite(messages, done);
            return new Map(done.map((r) => [r.id, r]));
          } finally {
            this.host.index.changed(touched);
          }
        },
        signal,
        true,
      );
    } catch (e) {
      if (isMailError(e) && e.code === 'invalid_input') {
        for (const b of batch) b.reject(e);
        return;
      }
      // The connection went while the batch was under way (a MOVE sent, its answer lost): where
      // each judged copy is now, read over a new connection, is what happened.
      const why = e instanceof Error ? e.message : String(e);
      try {
        reports = await this.readBack(messages, why);
      } catch {
        const unknown = new MailError(
          'network_error',
          `outcome unknown: the connection failed during the write (${why}) and the mailbox could not be read back`,
          { retryable: false },
        );
        for (const b of batch) b.reject(unknown);
        return;
      }
    }
    // A move whose answer never came (the connection went): the mailbox, read again, decides.
    const unsure = messages.filter((m) => reports.get(m.id)?.outcome === 'unknown');
    if (unsure.length > 0)
      try {
        const seen = await this.readBack(unsure, reports.get(unsure[0]?.id ?? '')?.error ?? 'no answer');
        for (const [id, r] of seen) reports.set(id, r);
      } catch {
        // Still unknown: reported so, and counted against the cap.
      }
    for (const b of batch) {
      const mine = (b.judged ?? []).map((id) => reports.get(id));
      const failed = mine.find((r) => r?.outcome === 'failed');
      const unknown = mine.find((r) => r === undefined || r.outcome === 'unknown');
      if (failed !== undefined) {
        b.reject(
          new MailError(
            'upstream_unavailable',
            `not changed: ${failed.error ?? 'the server refused the move'}`,
            { retryable: false },
          ),
        );
        continue;
      }
      if (unknown !== undefined) {
        b.reject(
          new MailError('network_error', `outcome unknown: ${unknown?.error ?? 'the server did not say'}`, {
            retryable: false,
          }),
        );
        continue;
      }
      b.resolve(
        (b.judged ?? []).map((id) => {
          const m = messages.find((x) => x.id === id);
          const before = m === undefined ? [] : labelIdsOf(m);
          const labels = new Set(before.filter((l) => !applied.remove.includes(l)));
          for (const l of applied.add) labels.add(l);
          return { id, threadId: b.threadId, labelIds: [...labels] };
        }),
      );
    }
  }

  /**
   * After a lost connection: a judged message whose location copies are all still where they
   * were did not move (failed, with the error); one that left them did (changed).
   */
  private async readBack(messages: readonly ReadMessage[], why: string): Promise<Map<string, WriteReport>> {
    return this.host.read(async (client) => {
      const present = new Set<string>();
      const byFolder = new Map<string, { copy: Copy; uids: number[] }>();
      for (const m of messages)
        for (const c of m.copies.filter((x) => x.folder.kind === 'location')) {
          const g = byFolder.get(c.folder.path) ?? { copy: c, uids: [] };
          g.uids.push(c.uid);
          byFolder.set(c.folder.path, g);
        }
      for (const [path, g] of byFolder) {
        const box = await examine(client, path);
        if (String(box.uidValidity) !== g.copy.uidValidity) continue;
        for (const uid of await searchUids(client, { uid: uidSet(g.uids) })) present.add(`${path}\0${uid}`);
      }
      const out = new Map<string, WriteReport>();
      for (const m of messages) {
        const places = m.copies.filter((c) => c.folder.kind === 'location');
        const stayed = places.length > 0 && places.every((c) => present.has(`${c.folder.path}\0${c.uid}`));
        out.set(
          m.id,
          stayed
            ? {
                id: m.id,
                outcome: 'failed',
                error: `not changed: the connection failed during the write (${why})`,
              }
            : { id: m.id, outcome: 'changed' },
        );
      }
      return out;
    });
  }

  private async flushWrites(
    batch: PendingWrite[],
    change: LabelChange,
    signal?: AbortSignal,
    agentLabel?: string,
  ): Promise<void> {
    const judged = this.judgedCopies(batch, change);
    if (judged !== undefined) return this.flushJudged(batch, judged, change, signal, agentLabel);
    const ids = batch.map((b) => b.threadId);
    let written: {
      threads: Map<string, { read: ReadMessage[] }>;
      after: Map<string, { read: ReadMessage[] }>;
      model: FolderModel;
    };
    try {
      written = await this.host.write(
        async (client, first) => {
          const { change: applied, model } = await this.withAgentLabel(client, first, change, agentLabel);
          change = applied;
          checkDelta(model, change, await this.host.keywordsAllowed(client, model));
          const threads = await this.host.readThreads(client, model, ids, 'metadata', true);
          const messages = uniqueById([...threads.values()].flatMap((t) => t.read));
          // What the write touches is checked again by the read that verifies it; the rest stands.
          const touched = foldersTouched(model, messages, change);
          try {
            this.host.index.applyWrite(messages, await applyChange(client, model, messages, change));
          } finally {
            this.host.index.changed(touched);
          }
          const after = await this.host.readThreads(client, model, ids, 'metadata', true);
          return { threads, after, model };
        },
        signal,
        true,
      );
    } catch (e) {
      if (isMailError(e) && e.code === 'invalid_input') {
        for (const b of batch) b.reject(e);
        return;
      }
      // The connection went while the batch was under way (a MOVE sent, its answer lost): what the
      // mailbox shows now, read over a new connection, is what happened — never what was asked.
      try {
        const seen = await this.host.read(async (client, model) => ({
          after: await this.host.readThreads(client, model, ids, 'metadata', true),
          model,
        }));
        written = { threads: seen.after, after: seen.after, model: seen.model };
      } catch {
        const unknown = new MailError(
          'network_error',
          `outcome unknown: the connection failed during the write (${e instanceof Error ? e.message : String(e)}) and the mailbox could not be read back`,
          { retryable: false },
        );
        for (const b of batch) b.reject(unknown);
        return;
      }
    }
    for (const b of batch) {
      const now = written.after.get(b.threadId);
      if (written.threads.get(b.threadId) === undefined || now === undefined) {
        b.reject(new MailError('not_found', `no thread ${b.threadId.slice(0, 40)}… on this IMAP account`));
        continue;
      }
      const wrong = now.read.find((m) => !showsChange(m, change, written.model));
      if (wrong !== undefined) {
        b.reject(
          new MailError(
            'upstream_unavailable',
            `not changed: the server shows message ${wrong.id.slice(0, 30)}… with labels ${labelIdsOf(wrong).join(', ') || '(none)'} after the change`,
            { retryable: false },
          ),
        );
        continue;
      }
      b.resolve(now.read.map((m) => ({ id: m.id, threadId: b.threadId, labelIds: labelIdsOf(m) })));
    }
  }

  async modifyMessages(
    messageIds: string[],
    change: LabelChange,
    signal?: AbortSignal,
    options: Pick<ThreadWriteOptions, 'agentLabel'> = {},
  ): Promise<void> {
    if (messageIds.length > 1000) throw invalidInput('messageIds', 'at most 1000 per call');
    const ids = messageIds.map((id) => parseImapId(id, 'messageIds'));
    await this.host.write(async (client, first) => {
      const { change: applied, model } = await this.withAgentLabel(client, first, change, options.agentLabel);
      checkDelta(model, applied, await this.host.keywordsAllowed(client, model));
      const located = await this.host.locateMessages(client, model, ids);
      await applyChange(client, model, located, applied);
    }, signal);
  }
}

/**
 * Whether a message shows a change: every added label there and every removed one gone. The
 * user's own messages in Sent and Drafts stay where they are, so a folder added as a label (a
 * snooze folder) is not asked of them.
 */
function showsChange(m: ReadMessage, change: LabelChange, model: FolderModel): boolean {
  const labels = labelIdsOf(m);
  const own = m.copies.every(
    (c) => c.folder.kind !== 'location' || c.folder.role === 'sent' || c.folder.role === 'drafts',
  );
  const isPlace = (l: string) =>
    model.folders.some((f) => f.labelId === l && f.kind === 'location' && f.role === undefined);
  const missing = change.add.some((l) => !labels.includes(l) && !(isPlace(l) && own));
  return !missing && !change.remove.some((l) => labels.includes(l));
}
