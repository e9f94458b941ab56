import type { ImapFlow, ListResponse } from 'imapflow';
import { MailError, invalidInput } from '../../mail/errors.js';
import { parseQuery, substituteMe } from '../../mail/query/index.js';
import type { QueryNode } from '../../mail/query/index.js';
import type {
  HistoryPage,
  Label,
  MailMessage,
  MailThread,
  MessageRef,
  Page,
  Profile,
} from '../../mail/types.js';
import type {
  LabelChange,
  LabelInput,
  Mailbox,
  MailboxCapabilities,
  MessageLabels,
  SearchOptions,
  ThreadReadOptions,
  ThreadWriteOptions,
  UidArrivals,
  UidMark,
  UidMarkAt,
  Usage,
} from '../mailbox.js';
import { inboxSince, uidMarkAt } from './arrivals.js';
import { imapHistory, profileCursor } from './history.js';
import { buildFolderModel, folderByRole, keywordLabelId, placesOf, userKeyword } from './folders.js';
import { parseImapId } from './ids.js';
import type { ImapId } from './ids.js';
import { imapLabels } from './labels.js';
import type { FolderModel } from './query.js';
import {
  beginUse,
  createFolder,
  examine,
  fetchCopies,
  holds,
  opened,
  labelIdsOf,
  mergeCopies,
  readCopy,
  toMailMessage,
} from './reader.js';
import type { Copy, ReadMessage } from './reader.js';
import type { ImapSession } from './session.js';
import type { ImapSettings } from './settings.js';
import {
  MESSAGE_READ_COMMANDS,
  THREAD_READ_COMMANDS,
  componentOf,
  gatherThreads,
  locateByMessageId,
  messageViaAllMail,
} from './threads.js';
import type { IndexUse } from './threads.js';
import { FolderIndex } from './folder-index.js';
import { isBudgetedCall, isListingCall, markEveryPlaceCall, markListingCall } from '../freshness.js';
import { WriteBatches } from './write-batches.js';
import type { Known } from './write-batches.js';
import { checkMax, listsInboxOnly, searchPage } from './search-pages.js';
import type { SearchContext } from './search-pages.js';
import { inboxMessages, leavesInbox, returnsToInbox } from './inbox-moves.js';
import { newLabelTarget } from './writer.js';
import { sentRecipients, sentVersion } from './sent.js';

/** Folder lists are not mail (docs/architecture.md, promise 2): kept a minute so a call does not LIST twice. */
const FOLDER_TTL_MS = 60_000;
const KEYWORD_TTL_MS = 600_000;
/** How long a judging read's INBOX copies stay usable for the write that follows it. */
const JUDGED_TTL_MS = 300_000;

export interface ImapMailboxOptions {
  account: string;
  settings: ImapSettings;
  session: ImapSession;
  /** The mailbox owner's address (for `me` in queries); the login name when it is an address. */
  address?: string;
  now?: () => number;
  /**
   * How old a folder check a read-only call may reuse to locate copies on a server without
   * LIST-STATUS (folder-index.ts); 0: always check live.
   */
  recheckMs?: number;
}

export class ImapMailbox implements Mailbox {
  readonly provider = 'imap' as const;
  readonly batchesReads = true;
  readonly account: string;
  readonly trustedAuthservId: string | undefined;
  private readonly session: ImapSession;
  private readonly settings: ImapSettings;
  private readonly now: () => number;
  private model: { at: number; model: FolderModel } | undefined;
  /** The LIST the model was built from, so a folder this server creates joins it without a LIST. */
  private listed: ListResponse[] = [];
  private keywords: { at: number; names: Map<string, string> } | undefined;
  private keywordsSettable: boolean | undefined;
  private readonly address: string;
  /** Where messages sit, checked with STATUS each call (folder-index.ts). */
  private readonly index: FolderIndex;
  /** The index and the call of the connection's current use (uses are one at a time). */
  private indexUse: IndexUse;

  /** Write batches (write-batches.ts), on this mailbox's connection, model and index. */
  private readonly writes: WriteBatches;

  constructor(options: ImapMailboxOptions) {
    this.account = options.account;
    this.session = options.session;
    this.settings = options.settings;
    this.trustedAuthservId = options.settings.authservId;
    this.now = options.now ?? Date.now;
    this.index = new FolderIndex(undefined, options.recheckMs ?? 0);
    this.indexUse = { index: this.index };
    this.address = options.address ?? (options.settings.user.includes('@') ? options.settings.user : '');
    this.writes = new WriteBatches({
      index: this.index,
      judged: this.judged,
      now: () => this.now(),
      read: (fn, signal) => this.read(fn, signal),
      write: (fn, signal, narrowed) => this.write(fn, signal, narrowed),
      readThreads: (client, model, ids, format, everyPlace) =>
        this.readThreads(client, model, ids, format, everyPlace),
      locateMessages: (client, model, ids) => this.locateMessages(client, model, ids),
      keywordsAllowed: (client, model) => this.keywordsAllowed(client, model),
      joined: (client, path) => this.joined(client, path),
    });
  }

  get capabilities(): MailboxCapabilities {
    const caps = this.session.capabilities();
    const model = this.model?.model;
    return {
      history: caps.has('CONDSTORE'),
      filters: false,
      organisation: model?.folders.some((f) => f.kind === 'label')
        ? 'folders+label-folders'
        : caps.size > 0 && model?.keywordLabels !== undefined
          ? 'folders+keywords'
          : 'folders',
      ...(model?.proton === true ? { flatLabels: true } : {}),
    };
  }

  /** Reads use the pooled connection and may be retried once on a dropped connection. */
  private read<T>(
    fn: (client: ImapFlow, model: FolderModel) => Promise<T>,
    signal?: AbortSignal,
    /** What a budgeted call reads: its commands and whether it must build (threads.ts). */
    reads: 'thread' | 'message' = 'thread',
  ): Promise<T> {
    return this.session.use(
      async (client) => {
        this.syncOncePerCall(client, signal);
        // A listing may leave unindexed folders unchecked where checking costs a STATUS each; a
        // read of one thread or message builds missing indexes only within its commands.
        const perFolder = !client.capabilities.has('LIST-STATUS');
        const lazy = perFolder && isListingCall(signal);
        const start = signal === undefined ? undefined : this.callStart.get(signal);
        const budget =
          perFolder && !lazy && start !== undefined && isBudgetedCall(signal)
            ? {
                commands: reads === 'thread' ? THREAD_READ_COMMANDS : MESSAGE_READ_COMMANDS,
                spent: () => this.session.commands() - start,
                progress: reads === 'thread',
              }
            : undefined;
        this.indexUse = {
          index: this.index,
          ...(signal === undefined ? {} : { signal }),
          ...(lazy ? { lazy } : {}),
          ...(budget === undefined ? {} : { budget }),
        };
        return fn(client, await this.folders(client));
      },
      signal === undefined ? { retry: true } : { retry: true, signal },
    );
  }

  private async folders(client: ImapFlow): Promise<FolderModel> {
    const now = this.now();
    if (this.model && now - this.model.at < FOLDER_TTL_MS) return this.model.model;
    const entries = await client.list();
    this.listed = entries;
    const model = buildFolderModel(entries, { gmail: client.capabilities.has('X-GM-EXT-1') });
    if (this.keywords && now - this.keywords.at < KEYWORD_TTL_MS)
      for (const [id, name] of this.keywords.names)
        (model.keywordLabels as Map<string, string>).set(id, name);
    this.model = { at: now, model };
    return model;
  }

  /** The model with a folder this server just created (CREATE succeeded), as a LIST would show it. */
  private joined(client: ImapFlow, path: string): FolderModel {
    const like = this.listed.find((e) => e.delimiter) ?? this.listed[0];
    const delimiter = like?.delimiter ?? '/';
    const entry = {
      path,
      pathAsListed: path,
      name: path.split(delimiter).at(-1) ?? path,
      delimiter,
      parent: path.split(delimiter).slice(0, -1),
      parentPath: path.split(delimiter).slice(0, -1).join(delimiter),
      flags: new Set<string>(),
      listed: true,
      subscribed: true,
    } as ListResponse;
    this.listed = [...this.listed, entry];
    const model = buildFolderModel(this.listed, { gmail: client.capabilities.has('X-GM-EXT-1') });
    const kept = this.model?.model.keywordLabels;
    if (kept !== undefined)
      for (const [id, name] of kept) (model.keywordLabels as Map<string, string>).set(id, name);
    this.model = { at: this.now(), model };
    return model;
  }

  /**
   * The keyword labels, learnt only where names matter (list_labels, a label: search, a label
   * name to resolve): an EXAMINE per folder, kept ten minutes. A message's own keywords come
   * from its flags in every read, so nothing else waits for them (Bridge has none at all).
   */
  private async withKeywords(client: ImapFlow, model: FolderModel): Promise<FolderModel> {
    const now = this.now();
    if (this.keywords && now - this.keywords.at < KEYWORD_TTL_MS) {
      for (const [id, name] of this.keywords.names)
        (model.keywordLabels as Map<string, string>).set(id, name);
      return model;
    }
    await learnKeywords(client, model, this.indexUse);
    this.keywords = { at: now, names: new Map(model.keywordLabels) };
    return model;
  }

  async getProfile(signal?: AbortSignal): Promise<Profile> {
    return this.read(async (client, model) => {
      const cursor = await profileCursor(client, placesOf(model), this.indexUse);
      return {
        emailAddress: this.address || this.settings.user,
        messagesTotal: cursor.messages,
        threadsTotal: cursor.threads,
        historyId: cursor.historyId,
      };
    }, signal);
  }

  async listLabels(signal?: AbortSignal): Promise<Label[]> {
    return this.read(
      async (client, model) => imapLabels(client, await this.withKeywords(client, model), false),
      signal,
    );
  }

  async getLabel(id: string, signal?: AbortSignal): Promise<Label> {
    return this.read(async (client, model) => {
      const all = await imapLabels(client, await this.withKeywords(client, model), true, id);
      const found = all.find((l) => l.id === id);
      if (found === undefined) throw new MailError('not_found', `no label "${id}" on this IMAP account`);
      return found;
    }, signal);
  }

  private parse(query: string): QueryNode {
    const node = parseQuery(query);
    return this.address ? substituteMe(node, this.address) : node;
  }

  private searchContext(): SearchContext {
    return { use: this.indexUse, now: this.now(), withKeywords: (c, m) => this.withKeywords(c, m) };
  }

  async searchThreads(query: string, options: SearchOptions): Promise<Page<{ id: string }>> {
    checkMax(options.maxResults);
    const node = this.parse(query);
    // The threads of an inbox listing are read next (search reads each hit's thread) in the
    // same call: both may leave folders other than INBOX unindexed and say so.
    // Any other search re-checks places on the labels it reads: it locates copies everywhere.
    if (options.signal !== undefined)
      (listsInboxOnly(node) ? markListingCall : markEveryPlaceCall)(options.signal);
    return this.read(async (client, model) => {
      const page = await searchPage(this.searchContext(), client, model, node, options, 'thread');
      return { ...page, items: page.items.map((i) => ({ id: i.id })) };
    }, options.signal);
  }

  async searchMessages(query: string, options: SearchOptions): Promise<Page<MessageRef>> {
    checkMax(options.maxResults);
    const node = this.parse(query);
    if (options.signal !== undefined) markEveryPlaceCall(options.signal);
    return this.read(
      (client, model) => searchPage(this.searchContext(), client, model, node, options, 'message'),
      options.signal,
    );
  }

  // Concurrent getThread calls (search reads each hit's thread) are answered together: one
  // round of searches and one FETCH per folder for all of them, not a command per thread.
  private pending: Array<{
    id: string;
    format: 'full' | 'metadata';
    /** A read that judges a move out of the inbox: INBOX alone is read (inbox-moves.ts). */
    inboxOnly: boolean;
    /** A read that judges a return to the inbox: mail this server moved is read where it put it. */
    back: boolean;
    resolve: (t: MailThread) => void;
    reject: (e: unknown) => void;
  }> = [];
  /**
   * The INBOX copies a judging read found, by message id, for the write of the same call: it
   * moves exactly these UIDs. Kept a few minutes; a stale UID simply does not move (COPYUID).
   */
  private readonly judged = new Map<string, Known>();
  private flushScheduled = false;

  getThread(threadId: string, options: ThreadReadOptions): Promise<MailThread> {
    const parsed = parseImapId(threadId, 'threadId');
    if (parsed.kind === 'message') throw invalidInput('threadId', 'this is a message id; pass a thread id');
    return new Promise<MailThread>((resolve, reject) => {
      const inboxOnly =
        options.forChange !== undefined && leavesInbox(options.forChange) && parsed.kind === 'thread';
      const back = options.forChange !== undefined && returnsToInbox(options.forChange);
      this.pending.push({ id: threadId, format: options.format, inboxOnly, back, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush(options.signal));
      }
    });
  }

  private async flush(signal?: AbortSignal): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending.splice(0);
    const format = batch.some((b) => b.format === 'full') ? 'full' : 'metadata';
    try {
      const threads = await this.read(async (client, model) => {
        const out = new Map<string, { thread: MailThread }>();
        const roots = new Map<string, string>();
        for (const b of batch) {
          const p = parseImapId(b.id, 'threadId');
          if (b.inboxOnly && b.format === 'metadata' && p.kind === 'thread') roots.set(b.id, p.messageId);
        }
        // A restore of mail this server moved: where it went is known from the write's COPYUID.
        for (const [id, read] of await this.knownPlaces(
          client,
          batch.filter((b) => b.back && b.format === 'metadata').map((b) => b.id),
        )) {
          const messages = read
            .map((m) => ({ ...toMailMessage(m), threadId: id }))
            .sort((a, b) => a.internalDate - b.internalDate);
          out.set(id, { thread: { id, messages } });
        }
        const inbox = await inboxMessages(client, model, this.index, roots, this.indexUse.signal);
        if (roots.size > 0) this.learnPermanentFlags(client);
        for (const [id, read] of inbox) {
          const at = this.now();
          for (const m of read) this.judged.set(m.id, { at, message: m, threadId: id, complete: false });
          const messages = read
            .map((m) => ({ ...toMailMessage(m), threadId: id }))
            .sort((a, b) => a.internalDate - b.internalDate);
          out.set(id, { thread: { id, messages } });
        }
        this.pruneJudged();
        // The rest, and a judged thread with nothing in INBOX (the full read says where it is).
        const rest = batch.map((b) => b.id).filter((id) => !out.has(id));
        for (const [id, t] of await this.readThreads(client, model, rest, format)) out.set(id, t);
        return out;
      }, signal);
      for (const b of batch) {
        const t = threads.get(b.id);
        if (t === undefined)
          b.reject(new MailError('not_found', `no thread ${b.id.slice(0, 40)}… on this IMAP account`));
        else b.resolve(t.thread);
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }

  private async readThreads(
    client: ImapFlow,
    model: FolderModel,
    ids: readonly string[],
    format: 'full' | 'metadata',
    /** Writes: every copy's place, Archive included (reads leave what All Mail shows alone). */
    everyPlace = false,
  ): Promise<Map<string, { thread: MailThread; read: ReadMessage[] }>> {
    const out = new Map<string, { thread: MailThread; read: ReadMessage[] }>();
    const roots = new Map<string, string>();
    for (const id of new Set(ids)) {
      const p = parseImapId(id, 'threadId');
      if (p.kind === 'thread') roots.set(id, p.messageId);
      else if (p.kind === 'place') {
        const folder = model.folders.find((f) => f.path === p.path);
        if (folder === undefined) continue;
        const box = await examine(client, folder.path);
        if (String(box.uidValidity) !== p.uidValidity) continue;
        const rows = await fetchCopies(client, folder, [p.uid], format);
        const read = rows.map((r) => readCopy(r.copy, r.bytes, format === 'full'));
        const msgs = read.map((m) => ({ ...toMailMessage(m), threadId: id }));
        if (msgs.length > 0) out.set(id, { thread: { id, messages: msgs }, read });
      }
    }
    if (roots.size === 0) return out;
    const messages = await gatherThreads(
      client,
      model,
      [...roots.values()],
      format,
      everyPlace,
      this.indexUse,
    );
    for (const [id, root] of roots) {
      const component = componentOf(root, messages);
      if (component.length === 0) continue;
      // One id per conversation whichever message it was reached from: the root of its oldest
      // message (a search hit late in a long thread names a later root in its References).
      const mails = component.map(toMailMessage).sort((a, b) => a.internalDate - b.internalDate);
      const canonical = mails[0]?.threadId ?? id;
      out.set(id, {
        thread: { id: canonical, messages: mails.map((m) => ({ ...m, threadId: canonical })) },
        read: component,
      });
    }
    return out;
  }

  /** Every copy of the messages named by id, one Message-ID search per folder for all of them. */
  private async locateMessages(
    client: ImapFlow,
    model: FolderModel,
    ids: readonly ImapId[],
  ): Promise<ReadMessage[]> {
    const copies: ReadMessage[] = [];
    const wanted = new Set<string>();
    for (const p of ids) {
      if (p.kind === 'place') {
        const folder = model.folders.find((f) => f.path === p.path);
        if (folder === undefined) continue;
        const box = await examine(client, folder.path);
        if (String(box.uidValidity) === p.uidValidity)
          for (const r of await fetchCopies(client, folder, [p.uid], 'links'))
            copies.push(readCopy(r.copy, r.bytes, false));
      } else wanted.add(p.messageId);
    }
    if (wanted.size > 0)
      copies.push(...(await locateByMessageId(client, placesOf(model), [...wanted], this.indexUse)));
    return mergeCopies(copies);
  }

  async getAttachment(messageId: string, attachmentId: string, signal?: AbortSignal): Promise<Uint8Array> {
    const ref = await this.getMessageLabels(messageId, signal);
    const thread = await this.getThread(ref.threadId, { format: 'full', ...(signal ? { signal } : {}) });
    const msg = thread.messages.find((m) => m.id === messageId);
    const find = (n: MailThread['messages'][number]['root']): Uint8Array | undefined =>
      n.partId === attachmentId ? n.body : n.children.map(find).find((b) => b !== undefined);
    const bytes = msg === undefined ? undefined : find(msg.root);
    if (bytes === undefined)
      throw new MailError('not_found', `no part ${attachmentId} in message ${messageId.slice(0, 40)}`);
    return bytes;
  }

  /**
   * One message from one of its copies (Spam and Trash too, which thread reads leave out of a
   * conversation), with every copy's labels: the Message-ID search, then one FETCH.
   */
  async getMessage(messageId: string, options: ThreadReadOptions): Promise<MailMessage> {
    const p = parseImapId(messageId, 'messageId');
    if (p.kind === 'thread') throw invalidInput('messageId', 'this is a thread id; pass a message id');
    // One message may cost fewer commands than a thread, and need not build (threads.ts).
    return this.read(
      async (client, model) => {
        if (p.kind === 'message') {
          const viaAll = await messageViaAllMail(client, model, p.messageId, options.format, this.indexUse);
          if (viaAll !== undefined) return toMailMessage(viaAll);
        }
        // Not found through All Mail: the message itself is searched for, in every place.
        const everywhere = { ...this.indexUse };
        delete everywhere.budget;
        this.indexUse = everywhere;
        const [m] = await this.locateMessages(client, model, [p]);
        const c = m?.copies.find((x) => x.folder.kind !== 'virtual' && x.uid > 0) ?? m?.copies[0];
        if (m !== undefined && c !== undefined) {
          const [row] = await fetchCopies(client, c.folder, [c.uid], options.format);
          if (row !== undefined)
            return toMailMessage({
              ...readCopy(row.copy, row.bytes, options.format === 'full'),
              copies: m.copies,
            });
        }
        throw new MailError('not_found', `no message ${messageId.slice(0, 40)} on this IMAP account`);
      },
      options.signal,
      'message',
    );
  }

  async getMessageLabels(messageId: string, signal?: AbortSignal): Promise<MessageLabels> {
    const p = parseImapId(messageId, 'messageId');
    return this.read(async (client, model) => {
      const [m] = await this.locateMessages(client, model, [p]);
      if (m === undefined)
        throw new MailError('not_found', `no message ${messageId.slice(0, 40)} on this IMAP account`);
      return { id: m.id, threadId: m.threadId, labelIds: labelIdsOf(m) };
    }, signal);
  }

  async history(
    startHistoryId: string,
    options: { pageToken?: string; signal?: AbortSignal },
  ): Promise<HistoryPage> {
    return this.read(async (client, model) => {
      if (!client.capabilities.has('CONDSTORE'))
        throw new MailError(
          'unsupported',
          `account "${this.account}": the IMAP server offers no CONDSTORE (RFC 7162), so what_changed cannot list changes; use search with newer_than: instead`,
        );
      return imapHistory(client, placesOf(model), startHistoryId);
    }, options.signal);
  }

  /**
   * A tool call's first use of the connection lets the server announce what changed since the
   * last call (reader.ts beginUse: a NOOP before reusing the selected folder); the rest of the
   * same call (its signal) reuses the selection as it is. A use without a signal always syncs.
   */
  private readonly syncedCalls = new WeakMap<AbortSignal, ImapFlow>();
  /** The session's command count when each call first used the connection. */
  private readonly callStart = new WeakMap<AbortSignal, number>();
  private syncOncePerCall(client: ImapFlow, signal: AbortSignal | undefined): void {
    if (signal !== undefined && this.syncedCalls.get(signal) === client) return;
    // The call's commands are counted from its first use of a logged-in connection.
    if (signal !== undefined && !this.callStart.has(signal))
      this.callStart.set(signal, this.session.commands());
    beginUse(client);
    if (signal !== undefined) this.syncedCalls.set(signal, client);
  }

  /**
   * Writes never retry on their own: a write whose answer was lost is reported, not repeated.
   * `narrowed`: the write marks the folders it touched itself (index.changed(touched)), so the
   * checks other folders had stand; otherwise every check is void after it.
   */
  private write<T>(
    fn: (client: ImapFlow, model: FolderModel) => Promise<T>,
    signal?: AbortSignal,
    narrowed = false,
  ): Promise<T> {
    return this.session.use(
      async (client) => {
        this.syncOncePerCall(client, signal);
        this.indexUse = { index: this.index, ...(signal === undefined ? {} : { signal }) };
        try {
          return await fn(client, await this.folders(client));
        } finally {
          // Statuses seen before a write prove nothing after it, in any call — of the folders it
          // touched, when it says which (foldersTouched), else of all.
          if (!narrowed) this.index.changed();
        }
      },
      signal === undefined ? { retry: false } : { retry: false, signal },
    );
  }

  /** The judging read's SELECT of INBOX answered PERMANENTFLAGS: no separate SELECT to learn it. */
  private learnPermanentFlags(client: ImapFlow): void {
    const box = client.mailbox;
    if (this.keywordsSettable !== undefined || box === false || box.readOnly) return;
    this.keywordsSettable = box.permanentFlags?.has('\\*') === true;
  }

  /**
   * Threads whose every message this server's own write placed (the COPYUID answers said where):
   * each location copy is fetched where it was put, by UID, in one FETCH per folder; a message no
   * longer there is left out, and a thread with none left is read the full way.
   */
  private async knownPlaces(
    client: ImapFlow,
    threadIds: readonly string[],
  ): Promise<Map<string, ReadMessage[]>> {
    const out = new Map<string, ReadMessage[]>();
    const wanted = new Map<string, Known[]>();
    for (const id of threadIds) {
      const list = [...this.judged.values()].filter((k) => k.threadId === id);
      if (list.length > 0 && list.every((k) => k.complete)) wanted.set(id, list);
    }
    if (wanted.size === 0) return out;
    const byFolder = new Map<string, { folder: Copy['folder']; uidValidity: string; uids: number[] }>();
    for (const list of wanted.values())
      for (const k of list)
        for (const c of k.message.copies.filter((x) => x.folder.kind === 'location')) {
          const g = byFolder.get(c.folder.path) ?? { folder: c.folder, uidValidity: c.uidValidity, uids: [] };
          g.uids.push(c.uid);
          byFolder.set(c.folder.path, g);
        }
    const live = new Map<string, Copy>();
    for (const g of byFolder.values()) {
      // Selected read-write: the write that follows moves from here.
      const box = await client.mailboxOpen(g.folder.path, { readOnly: false });
      opened(client);
      if (String(box.uidValidity) !== g.uidValidity) continue;
      for (const r of await fetchCopies(client, g.folder, g.uids, 'metadata'))
        live.set(`${g.folder.path}\0${r.copy.uid}`, r.copy);
    }
    for (const [id, list] of wanted) {
      const found: ReadMessage[] = [];
      for (const k of list) {
        const copies = k.message.copies.flatMap((c) => {
          if (c.folder.kind !== 'location') return [c];
          const now = live.get(`${c.folder.path}\0${c.uid}`);
          return now === undefined ? [] : [now];
        });
        if (copies.some((c) => c.folder.kind === 'location')) found.push({ ...k.message, copies });
      }
      if (found.length > 0) out.set(id, found);
    }
    return out;
  }

  private pruneJudged(): void {
    const old = this.now() - JUDGED_TTL_MS;
    for (const [id, e] of this.judged) if (e.at < old) this.judged.delete(id);
  }

  /**
   * Whether keywords can be set: PERMANENTFLAGS with \\* (RFC 3501 §7.1), which a server states
   * only for a folder opened read-write (EXAMINE answers an empty list), so it is asked once, in
   * the first write, by selecting INBOX.
   */
  private async keywordsAllowed(client: ImapFlow, model: FolderModel): Promise<boolean> {
    if (this.keywordsSettable !== undefined) return this.keywordsSettable;
    const inbox = folderByRole(model, 'inbox');
    if (inbox === undefined) return (this.keywordsSettable = false);
    const box = await client.mailboxOpen(inbox.path, { readOnly: false });
    this.keywordsSettable = box.permanentFlags?.has('\\*') === true;
    return this.keywordsSettable;
  }

  modifyThread(
    threadId: string,
    change: LabelChange,
    signal?: AbortSignal,
    options: ThreadWriteOptions = {},
  ): Promise<MessageLabels[]> {
    return this.writes.enqueue(threadId, change, signal, options);
  }

  /** The agent label ready before the agent's first move (write-batches.ts prepareAgentLabel). */
  prepareAgentLabel(
    name: string,
    signal?: AbortSignal,
  ): Promise<{ kind: 'keyword' | 'folder'; place: string; created: boolean }> {
    return this.writes.prepareAgentLabel(name, signal);
  }

  modifyMessages(
    messageIds: string[],
    change: LabelChange,
    signal?: AbortSignal,
    options: Pick<ThreadWriteOptions, 'agentLabel'> = {},
  ): Promise<void> {
    return this.writes.modifyMessages(messageIds, change, signal, options);
  }

  trashThread(threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void> {
    return this.modifyThread(threadId, { add: ['TRASH'], remove: [] }, signal, options).then(() => undefined);
  }

  untrashThread(threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void> {
    return this.modifyThread(threadId, { add: [], remove: ['TRASH'] }, signal, options).then(() => undefined);
  }

  async createLabel(input: LabelInput, signal?: AbortSignal): Promise<Label> {
    return this.write(async (client, model) => {
      const existing = (await imapLabels(client, await this.withKeywords(client, model), false)).find(
        (l) => l.type === 'user' && l.name.toLowerCase() === input.name.toLowerCase(),
      );
      if (existing !== undefined) return existing;
      const target = newLabelTarget(model, input.name, await this.keywordsAllowed(client, model));
      if (target.kind === 'keyword') {
        (model.keywordLabels as Map<string, string>).set(target.id, target.id.slice(1));
        this.keywords?.names.set(target.id, target.id.slice(1));
        return { id: target.id, name: target.id.slice(1), type: 'user' };
      }
      await createFolder(client, target.path);
      this.model = undefined;
      const fresh = await this.folders(client);
      const f = fresh.folders.find((x) => x.path === target.path);
      return {
        id: f?.labelId ?? target.path,
        name: f?.name ?? input.name,
        type: 'user',
        ...(f?.kind === 'location' && f.role === undefined ? { folder: true as const } : {}),
      };
    }, signal);
  }

  updateLabel(id: string, patch: Partial<LabelInput>, signal?: AbortSignal): Promise<Label> {
    return this.write(async (client, model) => {
      const f = model.folders.find((x) => x.labelId === id && x.kind !== 'virtual' && x.role === undefined);
      if (f === undefined || patch.name === undefined)
        throw new MailError(
          'unsupported',
          `label ${id}: on IMAP only a folder can be renamed, and only its name`,
        );
      const prefix = f.path.slice(0, f.path.length - f.name.length);
      await client.mailboxRename(f.path, `${prefix}${patch.name}`);
      this.model = undefined;
      return { id: `${prefix}${patch.name}`, name: patch.name, type: 'user' };
    }, signal);
  }

  /** A keyword needs no deleting; a folder is deleted only when empty (IMAP would delete its mail). */
  deleteLabel(id: string, signal?: AbortSignal): Promise<void> {
    return this.write(async (client, model) => {
      if (id.startsWith('#')) return;
      const f = model.folders.find((x) => x.labelId === id && x.kind !== 'virtual' && x.role === undefined);
      if (f === undefined) throw new MailError('not_found', `no label ${id} on this IMAP account`);
      const box = await examine(client, f.path);
      if (box.exists > 0)
        throw new MailError(
          'forbidden_operation',
          `folder ${f.path} still holds ${box.exists} messages; deleting an IMAP folder deletes its mail, so it is left in place`,
        );
      await client.mailboxDelete(f.path);
      this.model = undefined;
    }, signal);
  }

  /** Who the person wrote to in the last `days` days, and the Sent version read at (sent.ts). */
  sentRecipients(days: number, signal?: AbortSignal): Promise<{ addresses: string[]; version?: string }> {
    return this.read((client, model) => sentRecipients(client, model, days, this.now()), signal);
  }

  /** The Sent version now, to compare with the one sentRecipients read at (sent.ts). */
  sentVersion(signal?: AbortSignal): Promise<string | undefined> {
    return this.read((client, model) => sentVersion(client, model), signal);
  }

  inboxSince(
    mark: UidMark | undefined,
    options: { limit: number; signal?: AbortSignal; read?: 'full' },
  ): Promise<UidArrivals> {
    // No folder model: a gate with nothing new costs one EXAMINE after login.
    return this.session.use(
      (client) => inboxSince(client, mark, options.limit, options.read === 'full'),
      options.signal === undefined ? { retry: true } : { retry: true, signal: options.signal },
    );
  }

  uidMarkAt(target: { uid: number } | { messageId: string }, signal?: AbortSignal): Promise<UidMarkAt> {
    return this.session.use(
      (client) => uidMarkAt(client, target, (box) => this.index.rowsIfCurrent('INBOX', box)),
      signal === undefined ? { retry: true } : { retry: true, signal },
    );
  }

  usage(): Usage {
    return { requests: this.session.commands(), quotaUnits: 0 };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

/**
 * User labels that are keywords are known from each folder's FLAGS (RFC 3501 §7.2.6), so
 * label:x can be planned before anything was read.
 */
async function learnKeywords(client: ImapFlow, model: FolderModel, use: IndexUse): Promise<void> {
  const places = placesOf(model).filter((f) => f.kind === 'location');
  const inbox = places.find((f) => f.role === 'inbox');
  if (inbox === undefined) return;
  // Each EXAMINE also reports the folder's numbers: the index's check of it is done this call.
  const open = async (path: string) => {
    const held = holds(client, path);
    const box = await examine(client, path);
    if (!held) use.index.observed(path, box, use.signal);
    return box;
  };
  const first = await open(inbox.path);
  const keywords = model.keywordLabels as Map<string, string>;
  // Proton Bridge answers every folder's FLAGS and PERMANENTFLAGS from one fixed list
  // (docs/bridge-profile.md): when INBOX's allows no new keyword (no \*) and names none, no
  // other folder can name one either, and asking them would cost an EXAMINE each for nothing.
  const keywordless =
    model.proton === true &&
    first.permanentFlags?.has('\\*') !== true &&
    ![...(first.flags ?? [])].some((flag) => userKeyword(flag) !== undefined);
  for (const f of keywordless ? [inbox] : places) {
    const box = f === inbox ? first : await open(f.path);
    for (const flag of box.flags ?? []) {
      const k = userKeyword(flag);
      if (k !== undefined) keywords.set(keywordLabelId(k), k);
    }
  }
}
