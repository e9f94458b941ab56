import { randomBytes } from 'node:crypto';
import type { Clock } from '../mail/clock.js';
import { DEFAULT_SCOPES, normalizeScope } from './scopes.js';

/** Google issues access tokens for an hour and reports 3599 s left. */
const ACCESS_TOKEN_SECONDS = 3599;

interface RefreshGrant {
  email: string;
  scopes: readonly string[];
  revoked: boolean;
}

interface AccessGrant {
  refresh: RefreshGrant;
  expiresAt: number;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface Principal {
  email: string;
  scopes: ReadonlySet<string>;
}

const oauthError = (status: number, error: string, description: string): TokenAnswer => ({
  status,
  body: { error, error_description: description },
});

/**
 * The sandbox's OAuth 2.0 token endpoint (Google's https://oauth2.googleapis.com/token) and the
 * bearer-token check every Gmail request goes through. Grant types are a table so the
 * authorization-code grant can be added without touching the refresh path.
 */
export class OAuthServer {
  /** One built-in "Desktop app" client, like the one a user creates in Google Cloud Console. */
  readonly client = {
    clientId: '1000000000000-sandbox.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-mailwarden-sandbox-secret',
  };
  private readonly refreshTokens = new Map<string, RefreshGrant>();
  private readonly accessTokens = new Map<string, AccessGrant>();
  private readonly defaultTokens = new Map<string, string>();
  private readonly grants: Record<string, (form: URLSearchParams, clientId: string) => TokenAnswer> = {
    refresh_token: (form) => this.refreshGrant(form),
  };

  constructor(
    private readonly clock: Clock,
    private readonly isUser: (email: string) => boolean,
  ) {}

  issueRefreshToken(email: string, scopes: readonly string[]): string {
    const key = email.toLowerCase();
    if (!this.isUser(key)) throw new Error(`sandbox: no seeded user ${email}`);
    const token = `1//sandbox-${randomBytes(24).toString('base64url')}`;
    this.refreshTokens.set(token, { email: key, scopes: scopes.map(normalizeScope), revoked: false });
    return token;
  }

  /** Adds a grant type (the authorization-code grant lives with the consent page, consent.ts). */
  addGrant(type: string, handler: (form: URLSearchParams, clientId: string) => TokenAnswer): void {
    this.grants[type] = handler;
  }

  /**
   * What a successful code exchange answers: an access token, and a refresh token when the
   * user consented to offline access (Google's access_type=offline). `handle` revokes the whole
   * grant, for when the code is replayed (RFC 6749 §4.1.2).
   */
  issueGrant(
    email: string,
    scopes: readonly string[],
    offline: boolean,
  ): { handle: string; body: Record<string, unknown> } {
    const key = email.toLowerCase();
    if (!this.isUser(key)) throw new Error(`sandbox: no seeded user ${email}`);
    const refresh: RefreshGrant = { email: key, scopes: scopes.map(normalizeScope), revoked: false };
    const body = this.accessAnswer(refresh);
    if (!offline) return { handle: String(body['access_token']), body };
    const token = `1//sandbox-${randomBytes(24).toString('base64url')}`;
    this.refreshTokens.set(token, refresh);
    return { handle: token, body: { ...body, refresh_token: token } };
  }

  refreshTokenFor(email: string): string {
    const key = email.toLowerCase();
    const existing = this.defaultTokens.get(key);
    if (existing !== undefined && this.refreshTokens.get(existing)?.revoked === false) return existing;
    const token = this.issueRefreshToken(key, DEFAULT_SCOPES);
    this.defaultTokens.set(key, token);
    return token;
  }

  /** Revoking a refresh token also kills the access tokens minted from it, as Google does. */
  revoke(token: string): boolean {
    const refresh = this.refreshTokens.get(token) ?? this.accessTokens.get(token)?.refresh;
    if (!refresh) return false;
    refresh.revoked = true;
    return true;
  }

  /** The user and scopes behind an `Authorization` header, or undefined when it does not authenticate. */
  authenticate(authorization: string | undefined): Principal | undefined {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const grant = match?.[1] === undefined ? undefined : this.accessTokens.get(match[1]);
    if (!grant || grant.refresh.revoked || this.clock.now() >= grant.expiresAt) return undefined;
    return { email: grant.refresh.email, scopes: new Set(grant.refresh.scopes) };
  }

  /** POST /token. Client credentials may come in the form or as HTTP Basic (RFC 6749 §2.3.1). */
  token(form: URLSearchParams, authorization: string | undefined): TokenAnswer {
    let clientId = form.get('client_id') ?? undefined;
    let clientSecret = form.get('client_secret') ?? undefined;
    const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (basic !== undefined) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        clientId = decodeURIComponent(decoded.slice(0, colon));
        clientSecret = decodeURIComponent(decoded.slice(colon + 1));
      }
    }
    if (clientId !== this.client.clientId) {
      return oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    }
    if (clientSecret !== this.client.clientSecret) return oauthError(401, 'invalid_client', 'Unauthorized');
    const grantType = form.get('grant_type');
    if (grantType === null)
      return oauthError(400, 'invalid_request', 'Missing required parameter: grant_type');
    const grant = this.grants[grantType];
    if (!grant) return oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType}`);
    return grant(form, clientId);
  }

  private refreshGrant(form: URLSearchParams): TokenAnswer {
    const token = form.get('refresh_token');
    if (token === null || token === '') {
      return oauthError(400, 'invalid_request', 'Missing required parameter: refresh_token');
    }
    const refresh = this.refreshTokens.get(token);
    if (!refresh || refresh.revoked)
      return oauthError(400, 'invalid_grant', 'Token has been expired or revoked.');
    return { status: 200, body: this.accessAnswer(refresh) };
  }

  private accessAnswer(refresh: RefreshGrant): Record<string, unknown> {
    const accessToken = `ya29.sandbox-${randomBytes(32).toString('base64url')}`;
    this.accessTokens.set(accessToken, {
      refresh,
      expiresAt: this.clock.now() + ACCESS_TOKEN_SECONDS * 1000,
    });
    return {
      access_token: accessToken,
      expires_in: ACCESS_TOKEN_SECONDS,
      scope: refresh.scopes.join(' '),
      token_type: 'Bearer',
    };
  }
}
