import { systemClock } from '../../mail/clock.js';
import type { Clock } from '../../mail/clock.js';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import { GMAIL_AUTHSERV_ID } from '../../mail/vocabulary.js';
import type {
  HistoryPage,
  Label,
  MailMessage,
  MailThread,
  MessageRef,
  Page,
  Profile,
} from '../../mail/types.js';
import type { Tier } from '../../policy/tiers.js';
import type {
  LabelChange,
  LabelInput,
  Mailbox,
  MailboxCapabilities,
  MessageLabels,
  SearchOptions,
  ThreadReadOptions,
  ThreadWriteOptions,
  Usage,
} from '../mailbox.js';
import type { DraftInput, DraftRef, FilterInput, MailFilter } from '../mailbox.js';
import type { OAuthCredentials } from './auth.js';
import * as filtersDrafts from './filters-drafts.js';
import { GmailClient } from './client.js';
import type { CallOptions, GmailClientOptions } from './client.js';
import {
  decodeBase64Url,
  toHistoryPage,
  toLabel,
  toMailMessage,
  toMailThread,
  toMessageLabels,
  toProfile,
} from './convert.js';
import { ID_SEGMENT } from './endpoints.js';
import type { Sleep } from './retry.js';
import type { Transport } from './transport.js';
import { LabelCache, WriteGatherer, agentLabelRole, labelNamed, withAgentLabel } from './write-batch.js';

export interface GmailMailboxOptions {
  account: string;
  credentials: OAuthCredentials;
  tiers: ReadonlySet<Tier>;
  transport: Transport;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
  /** Deadlines and retry bounds (src/cli/runtime.ts reads them from the environment). */
  deadlines?: GmailClientOptions['deadlines'];
  retry?: GmailClientOptions['retry'];
}

/** The history change kinds the model reports (HistoryPage). */
const HISTORY_TYPES = ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'] as const;

function checkId(field: string, value: string): void {
  if (!ID_SEGMENT.test(value)) throw invalidInput(field, 'is not a Gmail id (letters, digits, "-" and "_")');
}

function checkSearch(options: SearchOptions): void {
  const n = options.maxResults;
  if (!Number.isInteger(n) || n < 1 || n > 500)
    throw invalidInput('maxResults', 'must be an integer from 1 to 500');
  for (const id of options.labelIds ?? []) checkId('labelIds', id);
}

/** messages.batchModify takes at most 1,000 ids per call (Google's reference for the method). */
const BATCH_MODIFY_MAX = 1000;

/** Gmail refuses a modify that changes nothing; say so before spending a request on it. */
function checkChange(change: LabelChange): void {
  if (change.add.length === 0 && change.remove.length === 0)
    throw invalidInput('change', 'add or remove at least one label');
  for (const id of change.add) checkId('add', id);
  for (const id of change.remove) checkId('remove', id);
  const removing = new Set(change.remove);
  const both = change.add.filter((id) => removing.has(id));
  if (both.length > 0) throw invalidInput('change', `${both.join(', ')} is both added and removed`);
}

function modifyBody(change: LabelChange): { addLabelIds: string[]; removeLabelIds: string[] } {
  return { addLabelIds: [...change.add], removeLabelIds: [...change.remove] };
}

function labelBody(input: Partial<LabelInput>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.name !== undefined) body['name'] = input.name;
  if (input.color !== undefined) body['color'] = { ...input.color };
  return body;
}

const withSignal = (signal: AbortSignal | undefined): { signal?: AbortSignal } =>
  signal === undefined ? {} : { signal };

/** threads.trash / untrash in flight at once: one request per thread, unlike the gathered writes. */
const TRASH_CONCURRENCY = 4;

export class GmailMailbox implements Mailbox {
  readonly provider = 'gmail' as const;
  readonly capabilities: MailboxCapabilities = { history: true, filters: true, organisation: 'labels' };
  readonly account: string;
  readonly trustedAuthservId = GMAIL_AUTHSERV_ID;
  readonly batchesWrites = true;
  /** Exposed for write paths (modify, trash, filters) built on the same checkpoint and counters. */
  readonly client: GmailClient;
  private closed = false;
  private readonly labels: LabelCache;
  private readonly gatherer = new WriteGatherer(
    (ids, change, signal) => this.batchModify(ids, change, signal),
    BATCH_MODIFY_MAX,
  );
  /** The agent label being created, by lower-cased name: concurrent writes create it once. */
  private readonly creating = new Map<string, Promise<string>>();
  private trashSlots = TRASH_CONCURRENCY;
  private readonly trashQueue: Array<() => void> = [];

  constructor(options: GmailMailboxOptions) {
    this.account = options.account;
    const clientOptions: ConstructorParameters<typeof GmailClient>[0] = {
      credentials: options.credentials,
      tiers: options.tiers,
      transport: options.transport,
    };
    if (options.clock !== undefined) clientOptions.clock = options.clock;
    if (options.sleep !== undefined) clientOptions.sleep = options.sleep;
    if (options.random !== undefined) clientOptions.random = options.random;
    if (options.deadlines !== undefined) clientOptions.deadlines = options.deadlines;
    if (options.retry !== undefined) clientOptions.retry = options.retry;
    this.client = new GmailClient(clientOptions);
    const clock = options.clock ?? systemClock;
    this.labels = new LabelCache(
      async (signal) =>
        ((await this.open().call('labels.list', withSignal(signal)))?.labels ?? []).map(toLabel),
      () => clock.now(),
    );
  }

  private open(): GmailClient {
    if (this.closed) throw new MailError('internal_error', `the Gmail mailbox "${this.account}" was closed`);
    return this.client;
  }

  async getProfile(signal?: AbortSignal): Promise<Profile> {
    return toProfile(await this.open().call('users.getProfile', signal === undefined ? {} : { signal }));
  }

  /** From this mailbox's label list (write-batch.ts), or live with `fresh`. */
  async listLabels(signal?: AbortSignal, options?: { fresh?: boolean }): Promise<Label[]> {
    return this.labels.list(signal, options?.fresh === true);
  }

  async getLabel(id: string, signal?: AbortSignal): Promise<Label> {
    checkId('id', id);
    // labels.get is the call that carries the totals and unread counts labels.list leaves out.
    const res = await this.open().call('labels.get', {
      params: { id },
      ...(signal === undefined ? {} : { signal }),
    });
    return toLabel(res ?? {});
  }

  async searchThreads(query: string, options: SearchOptions): Promise<Page<{ id: string }>> {
    checkSearch(options);
    const res = await this.open().call('threads.list', this.searchCall(query, options));
    const page: Page<{ id: string }> = { items: (res?.threads ?? []).map((t) => ({ id: t.id ?? '' })) };
    return this.finishPage(page, res?.nextPageToken, res?.resultSizeEstimate);
  }

  async searchMessages(query: string, options: SearchOptions): Promise<Page<MessageRef>> {
    checkSearch(options);
    const res = await this.open().call('messages.list', this.searchCall(query, options));
    const items = (res?.messages ?? []).map((m) => ({ id: m.id ?? '', threadId: m.threadId ?? '' }));
    return this.finishPage({ items }, res?.nextPageToken, res?.resultSizeEstimate);
  }

  async getThread(threadId: string, options: ThreadReadOptions): Promise<MailThread> {
    checkId('threadId', threadId);
    const res = await this.open().call('threads.get', readCall(threadId, options));
    return toMailThread(res ?? {});
  }

  async getThreads(
    threadIds: readonly string[],
    options: ThreadReadOptions,
  ): Promise<Array<MailThread | MailError>> {
    for (const id of threadIds) checkId('threadIds', id);
    const { signal, ...read } = options;
    const answers = await this.open().callMany(
      'threads.get',
      threadIds.map((id) => readCall(id, read)),
      signal,
    );
    return answers.map((a) => (a instanceof MailError ? a : toMailThread(a ?? {})));
  }

  async getMessage(messageId: string, options: ThreadReadOptions): Promise<MailMessage> {
    checkId('messageId', messageId);
    const res = await this.open().call('messages.get', readCall(messageId, options));
    return toMailMessage(res ?? {});
  }

  async getAttachment(messageId: string, attachmentId: string, signal?: AbortSignal): Promise<Uint8Array> {
    checkId('messageId', messageId);
    checkId('attachmentId', attachmentId);
    const res = await this.open().call('messages.attachments.get', {
      params: { messageId, id: attachmentId },
      ...(signal === undefined ? {} : { signal }),
    });
    return decodeBase64Url(res?.data ?? '');
  }

  async history(
    startHistoryId: string,
    options: { pageToken?: string; signal?: AbortSignal },
  ): Promise<HistoryPage> {
    if (!/^\d+$/.test(startHistoryId)) throw invalidInput('historyId', 'must be a Gmail historyId (digits)');
    try {
      const res = await this.open().call('history.list', {
        query: { startHistoryId, pageToken: options.pageToken, historyTypes: HISTORY_TYPES, maxResults: 500 },
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      const page = toHistoryPage(res ?? {}, startHistoryId);
      // Gmail answers a start id from the future with an empty page and the mailbox's current
      // (smaller) historyId: taken as the next cursor, it would move backwards and repeat changes.
      if (/^\d+$/.test(page.historyId) && BigInt(page.historyId) < BigInt(startHistoryId)) {
        throw new MailError(
          'invalid_input',
          `historyId ${startHistoryId} is newer than this mailbox's current historyId ${page.historyId}; pass a historyId from get_profile or a previous what_changed of this account`,
          { field: 'historyId' },
        );
      }
      return page;
    } catch (e) {
      // Gmail keeps history for about a week and answers 404 for older start ids (docs/facts.md).
      // An empty page would read as "nothing changed", which is false; say how to recover.
      if (isMailError(e) && e.code === 'not_found') {
        throw new MailError(
          'invalid_input',
          `historyId ${startHistoryId} is older than Gmail keeps (about a week); call get_profile for a fresh historyId`,
          { field: 'historyId', cause: e },
        );
      }
      throw e;
    }
  }

  async createLabel(input: LabelInput, signal?: AbortSignal): Promise<Label> {
    if (input.name.trim() === '') throw invalidInput('name', 'must not be empty');
    // Visible in the label list and on messages, as a label made in Gmail's own UI would be.
    const body = { ...labelBody(input), labelListVisibility: 'labelShow', messageListVisibility: 'show' };
    return toLabel(
      (await this.labelWrite(() => this.open().call('labels.create', { body, ...withSignal(signal) }))) ?? {},
    );
  }

  async updateLabel(id: string, patch: Partial<LabelInput>, signal?: AbortSignal): Promise<Label> {
    checkId('id', id);
    const body = labelBody(patch);
    if (Object.keys(body).length === 0) throw invalidInput('patch', 'change the name or the color');
    // patch, not update: update replaces the whole label and would reset what was not sent.
    const res = await this.labelWrite(() =>
      this.open().call('labels.patch', { params: { id }, body, ...withSignal(signal) }),
    );
    return toLabel(res ?? {});
  }

  async deleteLabel(id: string, signal?: AbortSignal): Promise<void> {
    checkId('id', id);
    await this.labelWrite(() => this.open().call('labels.delete', { params: { id }, ...withSignal(signal) }));
  }

  /** A label write, after which (whatever its outcome) the kept label list is not trusted. */
  private async labelWrite<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.labels.forget();
    }
  }

  /**
   * With the judged message ids (a policy-judged write): those messages only, in one
   * messages.batchModify shared with the other threads of the call that make the same change
   * (write-batch.ts). batchModify answers nothing, so each message's labels are returned as the
   * change leaves them known: what it added. Without ids: threads.modify, the thread as it is.
   */
  async modifyThread(
    threadId: string,
    change: LabelChange,
    signal?: AbortSignal,
    options?: ThreadWriteOptions,
  ): Promise<MessageLabels[]> {
    checkId('threadId', threadId);
    checkChange(change);
    const ids = options?.messageIds;
    if (ids !== undefined) for (const id of ids) checkId('messageIds', id);
    const labelled = await this.labelled(change, options?.agentLabel, signal);
    if (ids === undefined) {
      const res = await this.changeLabels(() =>
        this.open().call('threads.modify', {
          params: { id: threadId },
          body: modifyBody(labelled),
          ...withSignal(signal),
        }),
      );
      return (res?.messages ?? []).map((m) => toMessageLabels(m, threadId));
    }
    if (ids.length === 0) return [];
    await this.gatherer.add(ids, labelled, signal, options?.together);
    return ids.map((id) => ({ id, threadId, labelIds: [...labelled.add] }));
  }

  async modifyMessages(
    messageIds: string[],
    change: LabelChange,
    signal?: AbortSignal,
    options?: Pick<ThreadWriteOptions, 'agentLabel'>,
  ): Promise<void> {
    if (messageIds.length === 0) throw invalidInput('messageIds', 'at least one id is required');
    if (messageIds.length > BATCH_MODIFY_MAX)
      throw invalidInput(
        'messageIds',
        `at most ${BATCH_MODIFY_MAX} ids per call (Gmail's batchModify limit)`,
      );
    for (const id of messageIds) checkId('messageIds', id);
    checkChange(change);
    await this.batchModify(messageIds, await this.labelled(change, options?.agentLabel, signal), signal);
  }

  private async batchModify(
    messageIds: readonly string[],
    change: LabelChange,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.changeLabels(() =>
      this.open().call('messages.batchModify', {
        body: { ids: [...messageIds], ...modifyBody(change) },
        ...withSignal(signal),
      }),
    );
  }

  /** A label change Gmail refused may name a label deleted since the list was kept. */
  private async changeLabels<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (isMailError(e) && e.code === 'invalid_input') this.labels.forget();
      throw e;
    }
  }

  /**
   * policy.json agentLabel placed on `change` (write-batch.ts agentLabelRole): created the first
   * time mail leaves the inbox with it (the write policy has allowed the write by then); a move
   * back removes it where it exists, and never creates it.
   */
  private async labelled(change: LabelChange, agentLabel: string | undefined, signal?: AbortSignal) {
    if (agentLabel === undefined) return change;
    const role = agentLabelRole(change);
    if (role === undefined) return change;
    const id = await this.agentLabelId(agentLabel, role === 'add', signal);
    return id === undefined ? change : withAgentLabel(change, id, role);
  }

  private async agentLabelId(
    name: string,
    create: boolean,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const known = labelNamed(await this.labels.list(signal), name);
    if (known !== undefined || !create) return known?.id;
    const key = name.toLowerCase();
    let pending = this.creating.get(key);
    if (pending === undefined) {
      pending = (async () => {
        try {
          return (await this.createLabel({ name }, signal)).id;
        } catch (e) {
          // 409: made meanwhile (another process, or a person); the live list has it.
          if (!(isMailError(e) && e.code === 'invalid_input')) throw e;
          const found = labelNamed(await this.labels.list(signal, true), name);
          if (found === undefined) throw e;
          return found.id;
        }
      })().finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  async trashThread(threadId: string, signal?: AbortSignal): Promise<void> {
    checkId('threadId', threadId);
    await this.throttled(() =>
      this.open().call('threads.trash', { params: { id: threadId }, ...withSignal(signal) }),
    );
  }

  /**
   * threads.untrash takes no label change: when agentLabel is given and a message comes back into
   * the inbox still carrying it, one batchModify takes it off those messages.
   */
  async untrashThread(threadId: string, signal?: AbortSignal, options?: ThreadWriteOptions): Promise<void> {
    checkId('threadId', threadId);
    const res = await this.throttled(() =>
      this.open().call('threads.untrash', { params: { id: threadId }, ...withSignal(signal) }),
    );
    if (options?.agentLabel === undefined) return;
    const id = await this.agentLabelId(options.agentLabel, false, signal);
    if (id === undefined) return;
    const back = (res?.messages ?? [])
      .filter((m) => (m.labelIds ?? []).includes('INBOX') && (m.labelIds ?? []).includes(id))
      .map((m) => m.id ?? '')
      .filter((m) => m !== '');
    if (back.length > 0) await this.batchModify(back, { add: [], remove: [id] }, signal);
  }

  /** At most TRASH_CONCURRENCY of these requests at once, however many threads a call names. */
  private async throttled<T>(request: () => Promise<T>): Promise<T> {
    if (this.trashSlots === 0) await new Promise<void>((resolve) => this.trashQueue.push(resolve));
    else this.trashSlots -= 1;
    try {
      return await request();
    } finally {
      const next = this.trashQueue.shift();
      if (next !== undefined) next();
      else this.trashSlots += 1;
    }
  }

  async getMessageLabels(messageId: string, signal?: AbortSignal): Promise<MessageLabels> {
    checkId('messageId', messageId);
    // minimal: ids and labels only, no headers or body (the cheapest read that has live labels).
    const res = await this.open().call('messages.get', {
      params: { id: messageId },
      query: { format: 'minimal' },
      ...withSignal(signal),
    });
    return toMessageLabels(res ?? {}, '');
  }

  // ---- filters (tier filters) and drafts (tier drafts): see filters-drafts.ts -----------------

  async listFilters(signal?: AbortSignal): Promise<MailFilter[]> {
    return filtersDrafts.listFilters(this.open(), signal);
  }

  async createFilter(input: FilterInput, signal?: AbortSignal): Promise<MailFilter> {
    return filtersDrafts.createFilter(this.open(), input, signal);
  }

  async deleteFilter(id: string, signal?: AbortSignal): Promise<void> {
    return filtersDrafts.deleteFilter(this.open(), id, signal);
  }

  async createDraft(input: DraftInput, signal?: AbortSignal): Promise<DraftRef> {
    return filtersDrafts.createDraft(this.open(), input, signal);
  }

  // ---- end filters and drafts ------------------------------------------------------------------

  usage(): Usage {
    return this.client.usage();
  }

  close(): Promise<void> {
    // fetch keeps no per-mailbox connection state to release; closing only stops further use.
    this.closed = true;
    return Promise.resolve();
  }

  private searchCall(query: string, options: SearchOptions): CallOptions {
    const call: CallOptions = {
      query: {
        q: query === '' ? undefined : query,
        maxResults: options.maxResults,
        pageToken: options.pageToken,
        includeSpamTrash: options.includeSpamTrash,
        labelIds: options.labelIds,
      },
    };
    if (options.signal !== undefined) call.signal = options.signal;
    return call;
  }

  private finishPage<T>(
    page: Page<T>,
    next: string | null | undefined,
    estimate: number | null | undefined,
  ): Page<T> {
    if (typeof next === 'string' && next !== '') page.nextPageToken = next;
    if (typeof estimate === 'number') page.resultSizeEstimate = estimate;
    return page;
  }
}

/** threads.get and messages.get take the same read: a format, its headers, and the call's signal. */
function readCall(id: string, options: ThreadReadOptions) {
  const query: Record<string, string | readonly string[] | undefined> = { format: options.format };
  if (options.format === 'metadata') query['metadataHeaders'] = options.metadataHeaders;
  return { params: { id }, query, ...withSignal(options.signal) };
}
