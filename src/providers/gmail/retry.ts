import type { Clock } from '../../mail/clock.js';
import { MailError, isMailError } from '../../mail/errors.js';
import { isRateLimitReason, parseGoogleError } from './google-error.js';
import { DeadlineExceeded } from './wire.js';

/**
 * The ONE retry layer for Google requests. The reference server stacked two (its own and the
 * client library's) and spent 16 requests over ≈ 11.5 s on a persistently failing endpoint
 * (docs/facts.md); here every HTTP request is retried by exactly this loop, bounded in attempts and in
 * wall-clock seconds, and a MailError thrown by an attempt (egress refusal, failed token refresh
 * that already had its own loop) is never retried again.
 */

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface RetryPolicy {
  /** Total HTTP attempts, first included (5xx and network errors). */
  maxAttempts: number;
  /** Wall-clock budget from the first attempt; a wait that would cross it is not started. */
  budgetMs: number;
  /** First backoff when Google gives no Retry-After; doubles per retry (0.5 s, 1 s, 2 s). */
  baseDelayMs: number;
  /**
   * A rate limit gets one wait, at most this long (issue 9: "one bounded wait honouring
   * Retry-After, about 20 s at most"); a longer Retry-After is handed to the caller at once.
   */
  rateLimitMaxWaitMs: number;
  clock: Clock;
  sleep: Sleep;
  /** 0..1, for jitter (injectable so tests are deterministic). */
  random: () => number;
}

export const DEFAULT_RETRY: Omit<RetryPolicy, 'clock' | 'sleep' | 'random'> = {
  maxAttempts: 4,
  budgetMs: 30_000,
  baseDelayMs: 500,
  rateLimitMaxWaitMs: 20_000,
};

/**
 * Shared by every request of one client (one Gmail user): Gmail's quota is per user, so a 429
 * on one request speaks for all of them. While a wait is running, other requests wait with it
 * instead of spending requests on the same 429; after the wait one request probes alone; after a
 * final rate_limited, requests fail at once (none sent) until Retry-After has passed.
 */
export class RateGate {
  private pausedUntil = 0;
  private closedUntil = 0;
  private closedFor = '';
  private probe: Promise<void> | undefined;
  private probeNext = false;

  /** Google asked for a wait of `ms` from `now`; the next request after it probes alone. */
  pause(now: number, ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    this.probeNext = true;
  }

  /** A final rate_limited: no request is sent before `until`. */
  trip(until: number, what: string): void {
    this.closedUntil = Math.max(this.closedUntil, until);
    this.closedFor = what;
  }

  /**
   * Waits until a request may be sent. Resolves with a release to call once its answer is in
   * (it lets the requests queued behind a probe go) and whether it waited on a rate limit.
   */
  async admit(
    policy: RetryPolicy,
    signal: AbortSignal | undefined,
  ): Promise<{ waited: boolean; release: () => void }> {
    let waited = false;
    for (;;) {
      signal?.throwIfAborted();
      const now = policy.clock.now();
      if (now < this.closedUntil) {
        const seconds = Math.max(1, Math.ceil((this.closedUntil - now) / 1000));
        throw new MailError(
          'rate_limited',
          `Google rate limit: ${this.closedFor} was refused moments ago; not sent. Try again in ${seconds} s.`,
          { retryAfterSeconds: seconds },
        );
      }
      if (now < this.pausedUntil) {
        waited = true;
        await policy.sleep(this.pausedUntil - now, signal);
        continue;
      }
      if (this.probe !== undefined) {
        waited = true;
        await this.probe;
        continue;
      }
      if (this.probeNext) {
        this.probeNext = false;
        let done = (): void => undefined;
        this.probe = new Promise<void>((resolve) => (done = resolve));
        return {
          waited,
          release: () => {
            this.probe = undefined;
            done();
          },
        };
      }
      return { waited, release: () => undefined };
    }
  }
}

export type Failure =
  | { kind: 'rate'; status: number; message: string | undefined; retryAfterMs: number | undefined }
  | { kind: 'upstream'; status: number; message: string | undefined; retryAfterMs: number | undefined }
  | { kind: 'network'; cause: unknown };

/** Retry-After is delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

function isAbort(e: unknown, signal: AbortSignal | undefined): boolean {
  return (
    signal?.aborted === true || (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError'))
  );
}

/** A response worth another try, or undefined when the caller should map it as is. */
async function classify(res: Response, nowMs: number): Promise<Failure | undefined> {
  const s = res.status;
  const transient = s === 429 || s === 500 || s === 502 || s === 503 || s === 504;
  if (!transient && s !== 403) return undefined;
  // Read a copy: a 403 that is not a rate limit goes back to the caller with its body intact.
  const text = await res.clone().text();
  const err = parseGoogleError(text);
  if (s === 403 && !isRateLimitReason(err)) return undefined;
  await res.body?.cancel().catch(() => undefined);
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), nowMs);
  const kind = s === 429 || s === 403 ? 'rate' : 'upstream';
  return { kind, status: s, message: err.message, retryAfterMs };
}

/** undici reports "fetch failed" and hides the useful part (ECONNRESET…) in `cause`. */
function describeNetworkError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const inner = e.cause instanceof Error ? e.cause : undefined;
  const code = (inner as { code?: unknown } | undefined)?.code ?? (e as { code?: unknown }).code;
  const parts = [e.message, inner?.message, typeof code === 'string' ? code : undefined];
  return [...new Set(parts.filter((p): p is string => p !== undefined && p !== ''))].join(': ');
}

export function finalError(what: string, f: Failure, attempts: number, waitMs: number): MailError {
  const tried = `after ${attempts} request${attempts === 1 ? '' : 's'}`;
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  if (f.kind === 'network') {
    const detail = describeNetworkError(f.cause);
    return new MailError('network_error', `${what}: could not reach Google ${tried} (${detail})`, {
      cause: f.cause,
      retryAfterSeconds,
    });
  }
  const google = f.message === undefined ? '' : ` — "${f.message}"`;
  if (f.kind === 'rate') {
    return new MailError(
      'rate_limited',
      `${what}: Google rate limit (HTTP ${f.status})${google}; gave up ${tried}. Try again in ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    );
  }
  return new MailError(
    'upstream_unavailable',
    `${what}: Google answered HTTP ${f.status}${google} ${tried}. Try again in ${retryAfterSeconds} s.`,
    { retryAfterSeconds },
  );
}

/**
 * Runs `attempt` (one HTTP request) until it yields a response that is not transient, or the
 * attempts or the time budget run out. Transient: 429, 403 rateLimitExceeded /
 * userRateLimitExceeded, 500/502/503/504, and network errors. A rate limit gets exactly one wait
 * (Retry-After, or the backoff), at most `rateLimitMaxWaitMs`; the next one is final. A request
 * that passed its deadline is never retried: the deadline is the bound the caller was promised.
 */
export async function withRetry(
  what: string,
  attempt: () => Promise<Response>,
  policy: RetryPolicy,
  signal?: AbortSignal,
  gate?: RateGate,
): Promise<Response> {
  const start = policy.clock.now();
  let rateWaited = false;
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    const admitted = gate === undefined ? undefined : await gate.admit(policy, signal);
    if (admitted?.waited === true) rateWaited = true;
    let failure: Failure | undefined;
    try {
      const res = await attempt();
      failure = await classify(res, policy.clock.now());
      if (failure === undefined) {
        admitted?.release();
        return res;
      }
    } catch (e) {
      admitted?.release();
      if (e instanceof DeadlineExceeded) throw deadlineError(what, e);
      if (isMailError(e) || isAbort(e, signal)) throw e;
      failure = { kind: 'network', cause: e };
    }
    const backoff = policy.baseDelayMs * 2 ** (n - 1);
    const jittered = Math.round(backoff * (0.75 + policy.random() * 0.5));
    const wait = failure.kind === 'network' ? jittered : (failure.retryAfterMs ?? jittered);
    const now = policy.clock.now();
    if (failure.kind === 'rate') {
      const final = rateWaited || wait > policy.rateLimitMaxWaitMs || now - start + wait > policy.budgetMs;
      if (final) {
        gate?.trip(now + Math.max(1000, wait), what);
        admitted?.release();
        throw finalError(what, failure, n, wait);
      }
      rateWaited = true;
      gate?.pause(now, wait);
      admitted?.release();
      // With a gate the wait happens in admit(), together with every other request.
      if (gate === undefined) await policy.sleep(wait, signal);
      continue;
    }
    admitted?.release();
    if (n >= policy.maxAttempts) throw finalError(what, failure, n, wait);
    if (now - start + wait > policy.budgetMs) throw finalError(what, failure, n, wait);
    await policy.sleep(wait, signal);
  }
}

/**
 * A request Gmail did not answer in time. A read changed nothing and may be asked again; a write
 * may or may not have landed, so it is `network_error` and not retryable: the caller reads the
 * state back or reports the outcome unknown (guarded.ts, bulk/chunks.ts).
 */
function deadlineError(what: string, e: DeadlineExceeded): MailError {
  const seconds = e.ms / 1000;
  const within = e.ms < 1000 ? `${e.ms} ms` : `${Math.round(e.ms / 100) / 10} s`;
  if (e.write) {
    return new MailError(
      'network_error',
      `${what}: Gmail did not answer within ${within} (MAILWARDEN_WRITE_TIMEOUT_MS); the change may or may not have been applied — its outcome is unknown`,
      { retryable: false, cause: e },
    );
  }
  return new MailError(
    'upstream_unavailable',
    `${what}: Gmail did not answer within ${within} (MAILWARDEN_REQUEST_TIMEOUT_MS); nothing was changed. Try again shortly.`,
    { retryable: true, retryAfterSeconds: Math.max(1, Math.ceil(seconds)), cause: e },
  );
}
