import type { gmail_v1 } from '@googleapis/gmail';
import { systemClock } from '../../mail/clock.js';
import type { Clock } from '../../mail/clock.js';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import type { Tier } from '../../policy/tiers.js';
import type { Usage } from '../mailbox.js';
import { TokenSource } from './auth.js';
import type { OAuthCredentials } from './auth.js';
import { ID_SEGMENT, USER_ID, endpointByName } from './endpoints.js';
import type { EndpointName } from './endpoints.js';
import { mapHttpError, parseGoogleError } from './google-error.js';
import { DEFAULT_RETRY, RateGate, realSleep, withRetry } from './retry.js';
import type { RetryPolicy, Sleep } from './retry.js';
import type { Transport } from './transport.js';
import { DEFAULT_DEADLINES, Wire } from './wire.js';
import type { Deadlines } from './wire.js';

/** What each Gmail endpoint answers (Google's own schema types; undefined for 204). */
export interface GmailResponses {
  'users.getProfile': gmail_v1.Schema$Profile;
  'labels.list': gmail_v1.Schema$ListLabelsResponse;
  'labels.get': gmail_v1.Schema$Label;
  'labels.create': gmail_v1.Schema$Label;
  'labels.patch': gmail_v1.Schema$Label;
  'labels.update': gmail_v1.Schema$Label;
  'labels.delete': undefined;
  'threads.list': gmail_v1.Schema$ListThreadsResponse;
  'threads.get': gmail_v1.Schema$Thread;
  'threads.modify': gmail_v1.Schema$Thread;
  'threads.trash': gmail_v1.Schema$Thread;
  'threads.untrash': gmail_v1.Schema$Thread;
  'messages.list': gmail_v1.Schema$ListMessagesResponse;
  'messages.get': gmail_v1.Schema$Message;
  'messages.modify': gmail_v1.Schema$Message;
  'messages.batchModify': undefined;
  'messages.trash': gmail_v1.Schema$Message;
  'messages.untrash': gmail_v1.Schema$Message;
  'messages.attachments.get': gmail_v1.Schema$MessagePartBody;
  'history.list': gmail_v1.Schema$ListHistoryResponse;
  'filters.list': gmail_v1.Schema$ListFiltersResponse;
  'filters.get': gmail_v1.Schema$Filter;
  'filters.create': gmail_v1.Schema$Filter;
  'filters.delete': undefined;
  'drafts.create': gmail_v1.Schema$Draft;
}
export type GmailEndpointName = keyof GmailResponses & EndpointName;

export type QueryValue = string | number | boolean | readonly string[] | undefined;

export interface CallOptions {
  /** Path ids by pattern name (`id`, `messageId`); `userId` is always `me`. */
  params?: Record<string, string>;
  query?: Record<string, QueryValue>;
  /** JSON-serialised as the request body. */
  body?: unknown;
  signal?: AbortSignal;
}

/** A request in raw form: the URL exactly as it would be sent (tests drive the checkpoint with it). */
export interface RawRequest {
  method: string;
  url: string;
  body?: string;
  signal?: AbortSignal;
}

export interface GmailClientOptions {
  credentials: OAuthCredentials;
  tiers: ReadonlySet<Tier>;
  transport: Transport;
  clock?: Clock;
  sleep?: Sleep;
  /** 0..1 source for backoff jitter. */
  random?: () => number;
  retry?: Partial<Pick<RetryPolicy, 'maxAttempts' | 'budgetMs' | 'baseDelayMs' | 'rateLimitMaxWaitMs'>>;
  /** Per-request deadlines; default DEFAULT_DEADLINES (MAILWARDEN_REQUEST_TIMEOUT_MS / _WRITE_). */
  deadlines?: Partial<Deadlines>;
}

/** Errors that mean the request never left this machine, so a write cannot have landed. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

function causeCode(e: unknown): string | undefined {
  for (let cur = e, i = 0; cur instanceof Error && i < 5; cur = cur.cause, i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * A write whose last attempt failed on the network (a reset, a dropped connection) may have been
 * applied: its outcome is unknown (not retryable), unless the connection was never made.
 */
function lostWrite(e: unknown): unknown {
  if (!isMailError(e) || e.code !== 'network_error' || !e.retryable) return e;
  const code = causeCode(e.cause);
  if (code !== undefined && NOT_SENT.has(code)) return e;
  return new MailError(
    'network_error',
    `${e.message}; the change may or may not have been applied — its outcome is unknown`,
    { retryable: false, cause: e },
  );
}

/**
 * Gmail REST over one injected transport: URL building, the egress checkpoint (before a token is
 * fetched), bearer auth with one refresh on 401, the single retry layer, error mapping, usage.
 */
export class GmailClient {
  private readonly wire: Wire;
  private readonly tokens: TokenSource;
  private readonly policy: RetryPolicy;
  /** One per client: Gmail's quota is per user, so one 429 speaks for every request. */
  private readonly rateGate = new RateGate();

  constructor(options: GmailClientOptions) {
    this.wire = new Wire(options.transport, options.tiers, { ...DEFAULT_DEADLINES, ...options.deadlines });
    this.policy = {
      ...DEFAULT_RETRY,
      ...options.retry,
      clock: options.clock ?? systemClock,
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
    };
    this.tokens = new TokenSource(options.credentials, this.wire, this.policy);
  }

  async call<N extends GmailEndpointName>(name: N, options: CallOptions = {}): Promise<GmailResponses[N]> {
    const endpoint = endpointByName(name);
    const path = endpoint.pathPattern.replace(/\{(\w+)\}/g, (_all, key: string) => {
      if (key === 'userId') return USER_ID;
      const value = options.params?.[key];
      if (value === undefined || value === '') throw invalidInput(key, 'is required');
      // Checked here so a malformed id is the caller's invalid_input, not an egress refusal.
      if (!ID_SEGMENT.test(value)) throw invalidInput(key, 'may hold only letters, digits, "-" and "_"');
      return value;
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      if (typeof value === 'object') for (const v of value) search.append(key, v);
      else search.append(key, String(value));
    }
    const qs = search.toString();
    const raw: RawRequest = {
      method: endpoint.method,
      url: `https://${endpoint.host}${path}${qs === '' ? '' : `?${qs}`}`,
    };
    if (options.body !== undefined) raw.body = JSON.stringify(options.body);
    if (options.signal !== undefined) raw.signal = options.signal;
    return (await this.request(raw)) as GmailResponses[N];
  }

  /** Parsed JSON, or undefined for an empty (204) answer. */
  async request(raw: RawRequest): Promise<unknown> {
    // Checkpoint first: a refused request must not cost a token refresh, let alone a token.
    const endpoint = this.wire.check(raw);
    if (endpoint.name === 'oauth.token') {
      throw new MailError('forbidden_operation', 'the token endpoint is reached only by the token source');
    }
    const { signal } = raw;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (raw.body !== undefined) headers['content-type'] = 'application/json';
    let refreshed = false;
    const attempt = async (): Promise<Response> => {
      const token = await this.tokens.accessToken(signal);
      const send = (bearer: string): Promise<Response> =>
        this.wire.send({ ...raw, headers: { ...headers, authorization: `Bearer ${bearer}` } });
      const res = await send(token);
      // One refresh per call: a revoked or rotated token gets a second chance, a token Google
      // keeps refusing does not loop.
      if (res.status !== 401 || refreshed) return res;
      refreshed = true;
      await res.body?.cancel().catch(() => undefined);
      this.tokens.invalidate(token);
      return send(await this.tokens.accessToken(signal));
    };
    const write = this.wire.deadlineOf(endpoint).write;
    const res = await withRetry(endpoint.name, attempt, this.policy, signal, this.rateGate).catch(
      (e: unknown) => {
        throw write ? lostWrite(e) : e;
      },
    );
    const text = await res.text();
    if (!res.ok) throw mapHttpError(endpoint, res.status, parseGoogleError(text));
    if (res.status === 204 || text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new MailError(
        'upstream_unavailable',
        `${endpoint.name}: Gmail answered with something that is not JSON`,
      );
    }
  }

  usage(): Usage {
    return this.wire.usage();
  }
}
