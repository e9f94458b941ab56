import { MailError } from '../../mail/errors.js';
import { parseGoogleError } from './google-error.js';
import { withRetry } from './retry.js';
import type { RetryPolicy } from './retry.js';
import type { Wire } from './wire.js';

/** Google's OAuth 2.0 token endpoint; reached only through the Wire (egress checkpoint). */
export const TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Refresh a cached token this long before Google says it expires (clock skew, slow requests). */
const EARLY_REFRESH_MS = 60_000;

export interface OAuthCredentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /**
   * When the refresh token was issued (ms since epoch), if the account store knows. Seam for
   * explaining Google's 7-day refresh-token expiry for apps left in "Testing" publishing status.
   */
  refreshTokenIssuedAt?: number;
}

interface CachedToken {
  token: string;
  expiresAt: number;
  issuedAt: number;
}

/**
 * What a needs_reauth error says. Kept separate so the explanation of *why* a grant died (e.g.
 * the Testing-mode 7-day limit, judged from `refreshTokenIssuedAt`) can grow in one place.
 */
export function reauthMessage(ctx: {
  description: string | undefined;
  refreshTokenIssuedAt?: number;
  now: number;
}): string {
  const google = ctx.description === undefined ? '' : ` (Google: ${ctx.description})`;
  const age =
    ctx.refreshTokenIssuedAt === undefined
      ? ''
      : ` It was issued ${Math.floor((ctx.now - ctx.refreshTokenIssuedAt) / 86_400_000)} day(s) ago.`;
  return `Google no longer accepts this account's sign-in${google}.${age} Run \`mailwarden auth\` to sign in again.`;
}

/** Resolves with `p`, or rejects as soon as this caller's own signal aborts (others keep waiting). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export const REVOKE_URL = 'https://oauth2.googleapis.com/revoke';

/**
 * Revokes a refresh token at Google (RFC 7009), through the checkpoint like every request.
 * Best effort: one attempt; the answer says whether Google confirmed it.
 */
export async function revokeRefreshToken(
  wire: Wire,
  refreshToken: string,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    const res = await wire.send({
      method: 'POST',
      url: REVOKE_URL,
      body: new URLSearchParams({ token: refreshToken }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      ...(signal === undefined ? {} : { signal }),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** Access tokens from a refresh token: cached, shared between concurrent callers, refreshed once. */
export class TokenSource {
  private cached: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;

  constructor(
    private readonly credentials: OAuthCredentials,
    private readonly wire: Wire,
    private readonly retry: RetryPolicy,
  ) {}

  async accessToken(signal?: AbortSignal): Promise<string> {
    const now = this.retry.clock.now();
    if (this.cached !== undefined && now < this.cached.expiresAt - EARLY_REFRESH_MS) return this.cached.token;
    // The refresh runs without any one caller's signal: a caller that gives up must not cancel
    // the refresh the others are waiting on.
    this.pending ??= this.refresh().finally(() => {
      this.pending = undefined;
    });
    return (await untilAborted(this.pending, signal)).token;
  }

  /** After a 401: drop the token that was refused (and only that one, if a newer one exists). */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  /** When the current access token was issued, by the injected clock. */
  issuedAt(): number | undefined {
    return this.cached?.issuedAt;
  }

  private async refresh(): Promise<CachedToken> {
    const body = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: this.credentials.clientId,
      client_secret: this.credentials.clientSecret,
      refresh_token: this.credentials.refreshToken,
    }).toString();
    const res = await withRetry(
      'token refresh',
      () =>
        this.wire.send({
          method: 'POST',
          url: TOKEN_URL,
          body,
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        }),
      this.retry,
    );
    const text = await res.text();
    const issuedAt = this.retry.clock.now();
    if (!res.ok) throw this.tokenError(res.status, text, issuedAt);
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new MailError(
        'upstream_unavailable',
        'token refresh: Google answered with something that is not JSON',
      );
    }
    if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
      throw new MailError('upstream_unavailable', 'token refresh: Google answered without an access_token');
    }
    // expires_in is seconds (RFC 6749 §5.1); Google issues 3599. Assume that if it is missing.
    const lifetime = typeof parsed.expires_in === 'number' ? parsed.expires_in : 3599;
    this.cached = { token: parsed.access_token, expiresAt: issuedAt + lifetime * 1000, issuedAt };
    return this.cached;
  }

  private tokenError(status: number, text: string, now: number): MailError {
    const err = parseGoogleError(text);
    // invalid_grant: the refresh token was revoked, expired (7 days in Testing), or the password
    // changed — only a new sign-in fixes it (RFC 6749 §5.2).
    if (err.status === 'invalid_grant') {
      const ctx: { description: string | undefined; refreshTokenIssuedAt?: number; now: number } = {
        description: err.message,
        now,
      };
      if (this.credentials.refreshTokenIssuedAt !== undefined) {
        ctx.refreshTokenIssuedAt = this.credentials.refreshTokenIssuedAt;
      }
      return new MailError('needs_reauth', reauthMessage(ctx));
    }
    const code = err.status ?? `HTTP ${status}`;
    const detail = err.message === undefined ? '' : `: ${err.message}`;
    return new MailError(
      'not_authorized',
      `token refresh refused (${code}${detail}). Check the OAuth client id/secret, then run \`mailwarden auth\`.`,
    );
  }
}
