/**
 * The RFC 8058 one-click unsubscribe client: an HTTPS POST whose body is exactly
 * `List-Unsubscribe=One-Click`, to the URI a message's own List-Unsubscribe header gives.
 *
 * RFC 8058 §3.2: the POST carries no cookies, no HTTP authorization and no other context
 * information (so none is ever sent; each request has its own connection); the body is the
 * key/value pair of List-Unsubscribe-Post. §3.2 prefers multipart/form-data but allows
 * application/x-www-form-urlencoded, which is what mail receivers send in practice.
 *
 * Every hop is vetted by the guard (DNS answers all globally reachable) and the connection goes
 * to the vetted address. Redirects (RFC 9110 §15.4): at most three; 301, 302 and 303 become
 * bodiless GETs, 307 and 308 repeat the POST. One budget covers DNS and every hop.
 */
import { isMailError } from '../mail/errors.js';
import { abortable, checkUrl, timedOut, vetUrl } from './guard.js';
import type { Resolver } from './resolver.js';
import type { HttpsTransport, PinnedRequest } from './transport.js';

export const ONE_CLICK_BODY = 'List-Unsubscribe=One-Click';
export const ONE_CLICK_CONTENT_TYPE = 'application/x-www-form-urlencoded';
export const USER_AGENT = 'mailwarden (RFC 8058 one-click unsubscribe)';
export const DEFAULT_BUDGET_MS = 10_000;
export const MAX_REDIRECTS = 3;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export type OneClickOutcome =
  /** The endpoint answered (the last hop's status; 2xx means it accepted). */
  | { kind: 'response'; status: number; redirects: number; reached: true }
  /** The guard refused a hop; `reached` when an earlier hop had already answered. */
  | { kind: 'refused'; reason: string; redirects: number; reached: boolean }
  /** DNS, TLS, network or budget failure; `reached` as above. */
  | { kind: 'failed'; reason: string; redirects: number; reached: boolean };

export interface OneClickOptions {
  resolver: Resolver;
  transport: HttpsTransport;
  budgetMs?: number;
  maxRedirects?: number;
}

export class OneClickClient {
  readonly budgetMs: number;
  private readonly maxRedirects: number;

  constructor(private readonly options: OneClickOptions) {
    this.budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
    this.maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  }

  /** The checks that need no network (https, port, userinfo, host form). */
  check(url: string): { ok: true; url: string } | { ok: false; reason: string } {
    const c = checkUrl(url);
    return c.ok ? { ok: true, url: c.url.href } : c;
  }

  /**
   * One one-click POST, following redirects under the rules above. Never throws for what the
   * endpoint or the network does; the outcome says what happened. `budgetMs` may shorten (never
   * lengthen) this call's budget, for a caller with less time left.
   */
  async post(
    url: string,
    options: { signal?: AbortSignal; budgetMs?: number } = {},
  ): Promise<OneClickOutcome> {
    const ms = Math.max(0, Math.min(this.budgetMs, options.budgetMs ?? this.budgetMs));
    const budget = AbortSignal.timeout(ms);
    const signal = options.signal ? AbortSignal.any([options.signal, budget]) : budget;
    let current: string | URL = url;
    let method: PinnedRequest['method'] = 'POST';
    let redirects = 0;
    let reached = false;
    for (;;) {
      let status: number;
      let location: string | undefined;
      try {
        const target = await vetUrl(current, this.options.resolver, signal);
        if (signal.aborted) throw timedOut();
        const req: PinnedRequest = {
          url: target.url,
          address: target.address,
          family: target.family,
          method,
          headers:
            method === 'POST'
              ? { 'Content-Type': ONE_CLICK_CONTENT_TYPE, 'User-Agent': USER_AGENT }
              : { 'User-Agent': USER_AGENT },
          ...(method === 'POST' ? { body: ONE_CLICK_BODY } : {}),
          signal,
        };
        const res = await abortable(this.options.transport.send(req), signal);
        if (signal.aborted) throw timedOut();
        reached = true;
        status = res.status;
        location = res.location;
        current = target.url;
      } catch (e) {
        const reason = isMailError(e) ? e.message : `unexpected error: ${String(e)}`;
        const refused = isMailError(e) && e.code === 'forbidden_operation';
        return { kind: refused ? 'refused' : 'failed', reason, redirects, reached };
      }
      if (!REDIRECTS.has(status) || location === undefined) {
        return { kind: 'response', status, redirects, reached: true };
      }
      if (redirects >= this.maxRedirects) {
        return { kind: 'failed', reason: `more than ${this.maxRedirects} redirects`, redirects, reached };
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        return {
          kind: 'refused',
          reason: 'a redirect points to a URL that does not parse',
          redirects,
          reached,
        };
      }
      redirects++;
      // RFC 9110 §15.4.2–15.4.4: 301/302 may turn a POST into a GET, 303 asks for a GET;
      // 307/308 (§15.4.8, §15.4.9) must repeat the method and body.
      if (status === 301 || status === 302 || status === 303) method = 'GET';
      current = next;
    }
  }
}
