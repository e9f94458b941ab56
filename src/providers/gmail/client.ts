import type { gmail_v1 } from '@googleapis/gmail';
import { systemClock } from '../../mail/clock.js';
import type { Clock } from '../../mail/clock.js';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import type { Tier } from '../../policy/tiers.js';
import type { Usage } from '../mailbox.js';
import { TokenSource } from './auth.js';
import type { OAuthCredentials } from './auth.js';
import { randomBytes } from 'node:crypto';
import { mapBounded } from '../../mail/async.js';
import { BATCH_PATH, decodeBatch, encodeBatch } from './batch-format.js';
import { GMAIL_HOST, ID_SEGMENT, USER_ID, endpointByName } from './endpoints.js';
import type { Endpoint, EndpointName } from './endpoints.js';
import { isRateLimitReason, mapHttpError, parseGoogleError } from './google-error.js';
import { DEFAULT_RETRY, RateGate, finalError, parseRetryAfter, realSleep, withRetry } from './retry.js';
import type { Failure, RetryPolicy, Sleep } from './retry.js';
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
  /** Content-Type of the body when it is not JSON (a batch's multipart/mixed). */
  contentType?: string;
  signal?: AbortSignal;
}

/** Calls per batch request: Google allows 100 and advises no more than 50 (Gmail batch guide). */
export const BATCH_CHUNK = 50;
/** Batch requests of one callMany in flight at once. */
const BATCHES_IN_FLIGHT = 2;

/** `https://host/path?query` → `/path?query`, as a batch's inner request line names it. */
function pathAndQuery(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function parseBody(endpoint: Endpoint, text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MailError(
      'upstream_unavailable',
      `${endpoint.name}: Gmail answered with something that is not JSON`,
    );
  }
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

  /** The request `call` would send: Google's URL with the path ids and query filled in. */
  private build(name: GmailEndpointName, options: CallOptions): RawRequest {
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
    return raw;
  }

  async call<N extends GmailEndpointName>(name: N, options: CallOptions = {}): Promise<GmailResponses[N]> {
    return (await this.request(this.build(name, options))) as GmailResponses[N];
  }

  /** Parsed JSON, or undefined for an empty (204) answer. */
  async request(raw: RawRequest): Promise<unknown> {
    const { endpoint, res } = await this.exchange(raw);
    const text = await res.text();
    if (!res.ok) throw mapHttpError(endpoint, res.status, parseGoogleError(text));
    return parseBody(endpoint, text);
  }

  /**
   * Many read calls of one endpoint, sent as Gmail batch requests of at most BATCH_CHUNK calls.
   * Each call's answer, or its own MailError (a 404 is that item's not_found, as the call sent
   * alone would be), in the order given. Calls answered 429 or 5xx are sent again, only they,
   * under the same retry policy as any request; a batch request that fails as a whole rejects.
   */
  async callMany<N extends GmailEndpointName>(
    name: N,
    calls: readonly CallOptions[],
    signal?: AbortSignal,
  ): Promise<Array<GmailResponses[N] | MailError>> {
    const raws = calls.map((c) => this.build(name, c));
    // Checked before anything is sent: a refused call is the caller's error, not a batch's.
    const endpoints = raws.map((r) => this.wire.check(r));
    if (raws.length === 1) {
      const only = raws[0] as RawRequest;
      try {
        return [(await this.request(signal === undefined ? only : { ...only, signal })) as GmailResponses[N]];
      } catch (e) {
        if (isMailError(e)) return [e];
        throw e;
      }
    }
    const chunks: number[][] = [];
    for (let i = 0; i < raws.length; i += BATCH_CHUNK)
      chunks.push(raws.slice(i, i + BATCH_CHUNK).map((_r, j) => i + j));
    const results = new Array<unknown>(raws.length);
    await mapBounded(chunks, BATCHES_IN_FLIGHT, async (chunk) => {
      const answered = await this.batch(
        chunk.map((i) => ({ raw: raws[i] as RawRequest, endpoint: endpoints[i] as Endpoint })),
        signal,
      );
      chunk.forEach((i, j) => (results[i] = answered[j]));
    });
    return results as Array<GmailResponses[N] | MailError>;
  }

  /** One chunk: a batch request, then again for the calls that got a transient answer. */
  private async batch(
    calls: ReadonlyArray<{ raw: RawRequest; endpoint: Endpoint }>,
    signal: AbortSignal | undefined,
  ): Promise<unknown[]> {
    const results = new Array<unknown>(calls.length);
    const start = this.policy.clock.now();
    let pending = calls.map((_c, i) => i);
    let rateWaited = false;
    let refreshed = false;
    for (let n = 1; ; n++) {
      const boundary = `batch_${randomBytes(12).toString('base64url')}`;
      const body = encodeBatch(
        boundary,
        pending.map((i) => ({
          contentId: String(i),
          http: `GET ${pathAndQuery(calls[i]?.raw.url ?? '')}\r\n\r\n`,
        })),
      );
      const raw: RawRequest = {
        method: 'POST',
        url: `https://${GMAIL_HOST}${BATCH_PATH}`,
        body,
        contentType: `multipart/mixed; boundary=${boundary}`,
      };
      if (signal !== undefined) raw.signal = signal;
      const { endpoint, res, bearer } = await this.exchange(raw);
      const text = await res.text();
      if (!res.ok) throw mapHttpError(endpoint, res.status, parseGoogleError(text));
      const parts = decodeBatch(text, res.headers.get('content-type') ?? undefined);
      if (parts === undefined)
        throw new MailError(
          'upstream_unavailable',
          'batch: Gmail answered with something that is not multipart',
        );
      const byId = new Map(parts.map((p) => [(p.contentId ?? '').replace(/^response-/, ''), p]));
      const again: number[] = [];
      let failure: Exclude<Failure, { kind: 'network' }> | undefined;
      let unauthorised = false;
      for (const i of pending) {
        const call = calls[i] as { raw: RawRequest; endpoint: Endpoint };
        const part = byId.get(String(i));
        const status = Number(/^HTTP\/\d(?:\.\d)? (\d{3})\b/.exec(part?.http.startLine ?? '')?.[1] ?? 0);
        const err = parseGoogleError(part?.http.body ?? '');
        if (status >= 200 && status < 300) {
          try {
            results[i] = parseBody(call.endpoint, part?.http.body ?? '');
          } catch (e) {
            results[i] = e;
          }
          continue;
        }
        if (status === 401 && !refreshed) {
          unauthorised = true;
          again.push(i);
          continue;
        }
        const rate = status === 429 || (status === 403 && isRateLimitReason(err));
        // A part missing from the answer is as unanswered as a 503.
        if (rate || status === 0 || status >= 500) {
          again.push(i);
          const retryAfterMs = parseRetryAfter(
            part?.http.headers.get('retry-after') ?? null,
            this.policy.clock.now(),
          );
          const f: Exclude<Failure, { kind: 'network' }> = {
            kind: rate ? 'rate' : 'upstream',
            status,
            message: err.message,
            retryAfterMs,
          };
          if (failure === undefined || f.kind === 'rate') failure = f;
          continue;
        }
        results[i] = mapHttpError(call.endpoint, status, err);
      }
      if (again.length === 0) return results;
      pending = again;
      if (failure === undefined) {
        // Only 401s: one refresh for the batch, as for a single call.
        refreshed = true;
        if (unauthorised) this.tokens.invalidate(bearer);
        continue;
      }
      const backoff = this.policy.baseDelayMs * 2 ** (n - 1);
      const jittered = Math.round(backoff * (0.75 + this.policy.random() * 0.5));
      const wait = failure.retryAfterMs ?? jittered;
      const now = this.policy.clock.now();
      const final =
        n >= this.policy.maxAttempts ||
        now - start + wait > this.policy.budgetMs ||
        (failure.kind === 'rate' && (rateWaited || wait > this.policy.rateLimitMaxWaitMs));
      if (final) {
        if (failure.kind === 'rate') this.rateGate.trip(now + Math.max(1000, wait), 'batch');
        for (const i of again) results[i] = finalError(calls[i]?.endpoint.name ?? 'batch', failure, n, wait);
        return results;
      }
      if (failure.kind === 'rate') {
        // The gate holds every request of this user (this batch's next one too) for the wait.
        rateWaited = true;
        this.rateGate.pause(now, wait);
      } else {
        await this.policy.sleep(wait, signal);
      }
    }
  }

  /**
   * One request through the checkpoint, the token source (one refresh on 401) and the retry
   * layer; the answer as it came, with the endpoint it was judged as and the bearer it carried.
   */
  private async exchange(raw: RawRequest): Promise<{ endpoint: Endpoint; res: Response; bearer: string }> {
    // Checkpoint first: a refused request must not cost a token refresh, let alone a token.
    const endpoint = this.wire.check(raw);
    if (endpoint.name === 'oauth.token') {
      throw new MailError('forbidden_operation', 'the token endpoint is reached only by the token source');
    }
    const { signal } = raw;
    const headers: Record<string, string> = {
      accept: raw.contentType === undefined ? 'application/json' : '*/*',
    };
    if (raw.body !== undefined) headers['content-type'] = raw.contentType ?? 'application/json';
    let refreshed = false;
    let bearer = '';
    const { contentType: _omit, ...wireRaw } = raw;
    const attempt = async (): Promise<Response> => {
      const token = await this.tokens.accessToken(signal);
      const send = (b: string): Promise<Response> => {
        bearer = b;
        return this.wire.send({ ...wireRaw, headers: { ...headers, authorization: `Bearer ${b}` } });
      };
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
    return { endpoint, res, bearer };
  }

  usage(): Usage {
    return this.wire.usage();
  }
}
