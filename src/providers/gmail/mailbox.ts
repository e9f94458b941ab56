import type { Clock } from '../../mail/clock.js';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import type { HistoryPage, Label, MailThread, MessageRef, Page, Profile } from '../../mail/types.js';
import type { Tier } from '../../policy/tiers.js';
import type { Mailbox, MailboxCapabilities, SearchOptions, ThreadReadOptions, Usage } from '../mailbox.js';
import type { OAuthCredentials } from './auth.js';
import { GmailClient } from './client.js';
import type { CallOptions } from './client.js';
import { decodeBase64Url, toHistoryPage, toLabel, toMailThread, toProfile } from './convert.js';
import { ID_SEGMENT } from './endpoints.js';
import type { Sleep } from './retry.js';
import type { Transport } from './transport.js';

export interface GmailMailboxOptions {
  account: string;
  credentials: OAuthCredentials;
  tiers: ReadonlySet<Tier>;
  transport: Transport;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
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
}

export class GmailMailbox implements Mailbox {
  readonly provider = 'gmail' as const;
  readonly capabilities: MailboxCapabilities = { history: true, filters: true, organisation: 'labels' };
  readonly account: string;
  /** Exposed for write paths (modify, trash, filters) built on the same checkpoint and counters. */
  readonly client: GmailClient;
  private closed = false;

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
    this.client = new GmailClient(clientOptions);
  }

  private open(): GmailClient {
    if (this.closed) throw new MailError('internal_error', `the Gmail mailbox "${this.account}" was closed`);
    return this.client;
  }

  async getProfile(signal?: AbortSignal): Promise<Profile> {
    return toProfile(await this.open().call('users.getProfile', signal === undefined ? {} : { signal }));
  }

  async listLabels(signal?: AbortSignal): Promise<Label[]> {
    const res = await this.open().call('labels.list', signal === undefined ? {} : { signal });
    return (res?.labels ?? []).map(toLabel);
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
    const query: Record<string, string | readonly string[] | undefined> = { format: options.format };
    if (options.format === 'metadata') query['metadataHeaders'] = options.metadataHeaders;
    const res = await this.open().call('threads.get', {
      params: { id: threadId },
      query,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return toMailThread(res ?? {});
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
      return toHistoryPage(res ?? {}, startHistoryId);
    } catch (e) {
      // Gmail keeps history for about a week and answers 404 for older start ids (FACTS.md).
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
