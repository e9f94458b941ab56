import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../mail/clock.js';
import type { OAuthServer, TokenAnswer } from './oauth.js';
import { SCOPE } from './scopes.js';

/**
 * Google's authorization endpoint (https://accounts.google.com/o/oauth2/v2/auth) for the built-in
 * Desktop-app client: a consent page with Approve / Deny that redirects to the client's loopback
 * redirect_uri, and the authorization-code grant with PKCE (RFC 7636) at /token. It follows
 * RFC 6749 §4.1 where Google does: a bad client or redirect_uri gets an error page, never a
 * redirect; everything else goes back to the client as `error=…&state=…`.
 */

export const AUTHORIZE_PATH = '/o/oauth2/v2/auth';
/** Google's codes and pending consent screens live minutes, not hours. */
const CODE_TTL_MS = 10 * 60_000;

export interface HtmlAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Pending {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  challenge: string | undefined;
  method: 'S256' | 'plain';
  offline: boolean;
  forceConsent: boolean;
  expiresAt: number;
}

interface IssuedCode extends Pending {
  email: string;
  used: boolean;
  /** Revokes what the first redemption issued, if the code is replayed. */
  handle: string | undefined;
}

const DESCRIBE: Readonly<Record<string, string>> = {
  [SCOPE.full]: 'Read, compose, send, and permanently delete all your email from Gmail',
  [SCOPE.modify]: 'Read, compose, and send emails from your Gmail account',
  [SCOPE.readonly]: 'View your email messages and settings',
  [SCOPE.labels]: 'See and edit your email labels',
  [SCOPE.settingsBasic]: 'See, edit, create, or change your email settings and filters in Gmail',
  [SCOPE.compose]: 'Manage drafts and send emails',
};

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(status: number, title: string, inner: string): HtmlAnswer {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><main><h1>${esc(title)}</h1>${inner}</main></body></html>`;
  return {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
    body,
  };
}

/** Google accepts loopback redirects on any port and path for Desktop-app clients. */
function isLoopbackRedirect(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  return u.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname) && u.hash === '';
}

function redirect(redirectUri: string, params: Record<string, string | undefined>): HtmlAnswer {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return { status: 302, headers: { Location: u.href, 'Cache-Control': 'no-store' }, body: '' };
}

const tokenError = (status: number, error: string, description: string): TokenAnswer => ({
  status,
  body: { error, error_description: description },
});

export class ConsentServer {
  private readonly pending = new Map<string, Pending>();
  private readonly codes = new Map<string, IssuedCode>();
  /** Google returns a refresh token on the first offline consent only, unless prompt=consent. */
  private readonly offlineConsented = new Set<string>();

  constructor(
    private readonly oauth: OAuthServer,
    private readonly clock: Clock,
    private readonly users: () => string[],
  ) {
    oauth.addGrant('authorization_code', (form, clientId) => this.redeem(form, clientId));
  }

  /** GET /o/oauth2/v2/auth: validate, then show the consent page. */
  authorize(q: URLSearchParams): HtmlAnswer {
    const clientId = q.get('client_id') ?? '';
    if (clientId !== this.oauth.client.clientId) {
      return page(401, 'Error 401: invalid_client', '<p>The OAuth client was not found.</p>');
    }
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!isLoopbackRedirect(redirectUri)) {
      return page(
        400,
        'Error 400: redirect_uri_mismatch',
        `<p>${esc(redirectUri)} is not a loopback redirect URI.</p>`,
      );
    }
    const state = q.get('state') ?? undefined;
    const fail = (error: string, description: string): HtmlAnswer =>
      redirect(redirectUri, { error, error_description: description, state });
    if (q.get('response_type') !== 'code')
      return fail('unsupported_response_type', 'response_type must be code');
    const scopes = (q.get('scope') ?? '').split(' ').filter((s) => s !== '');
    if (scopes.length === 0) return fail('invalid_request', 'Missing required parameter: scope');
    const unknown = scopes.find((s) => DESCRIBE[s] === undefined);
    if (unknown !== undefined) return fail('invalid_scope', `Some requested scopes were invalid: ${unknown}`);
    const challenge = q.get('code_challenge') ?? undefined;
    const method = q.get('code_challenge_method') ?? 'plain';
    if (
      challenge !== undefined &&
      (!PKCE_VALUE.test(challenge) || (method !== 'S256' && method !== 'plain'))
    ) {
      return fail('invalid_request', 'Invalid code_challenge or code_challenge_method');
    }
    const id = randomBytes(16).toString('base64url');
    this.pending.set(id, {
      clientId,
      redirectUri,
      scopes,
      state,
      challenge,
      method: method === 'S256' ? 'S256' : 'plain',
      offline: q.get('access_type') === 'offline',
      forceConsent: (q.get('prompt') ?? '').split(' ').includes('consent'),
      expiresAt: this.clock.now() + CODE_TTL_MS,
    });
    return this.consentPage(id, clientId, scopes, q.get('login_hint') ?? undefined);
  }

  private consentPage(id: string, clientId: string, scopes: string[], hint: string | undefined): HtmlAnswer {
    const users = this.users();
    const chosen = users.includes(hint?.toLowerCase() ?? '') ? hint?.toLowerCase() : users[0];
    const options = users
      .map((u) => `<option value="${esc(u)}"${u === chosen ? ' selected' : ''}>${esc(u)}</option>`)
      .join('');
    // One checkbox per scope, ticked: Google's granular consent lets the user untick any of them.
    const items = scopes
      .map(
        (s) =>
          `<li><label><input type="checkbox" name="scope" value="${esc(s)}" checked> ${esc(DESCRIBE[s] ?? s)} <code>${esc(s)}</code></label></li>`,
      )
      .join('');
    return page(
      200,
      'mailwarden sandbox wants access to your Google Account',
      `<form method="post" action="${AUTHORIZE_PATH}">` +
        `<input type="hidden" name="request" value="${esc(id)}">` +
        `<p>Client: <code id="client">${esc(clientId)}</code></p>` +
        `<p><label>Account: <select name="account" id="account">${options}</select></label></p>` +
        `<p>This will allow the app to:</p><ul id="scopes">${items}</ul>` +
        `<button type="submit" name="decision" value="deny" id="deny">Deny</button> ` +
        `<button type="submit" name="decision" value="approve" id="approve">Approve</button>` +
        `</form>`,
    );
  }

  /** POST /o/oauth2/v2/auth: the user's decision, answered with a redirect to the client. */
  decide(form: URLSearchParams): HtmlAnswer {
    const id = form.get('request') ?? '';
    const req = this.pending.get(id);
    this.pending.delete(id);
    if (req === undefined || this.clock.now() >= req.expiresAt) {
      return page(400, 'This sign-in request has expired', '<p>Start the sign-in again from the app.</p>');
    }
    const deny = (): HtmlAnswer => redirect(req.redirectUri, { error: 'access_denied', state: req.state });
    if (form.get('decision') !== 'approve') return deny();
    const email = (form.get('account') ?? '').toLowerCase();
    if (!this.users().includes(email)) return page(400, 'Unknown account', `<p>${esc(email)}</p>`);
    const granted = form.getAll('scope').filter((s) => req.scopes.includes(s));
    if (granted.length === 0) return deny();
    const code = `4/0sandbox-${randomBytes(24).toString('base64url')}`;
    this.codes.set(code, {
      ...req,
      scopes: granted,
      email,
      used: false,
      handle: undefined,
      expiresAt: this.clock.now() + CODE_TTL_MS,
    });
    return redirect(req.redirectUri, { state: req.state, code, scope: granted.join(' ') });
  }

  /** grant_type=authorization_code at /token; the client is already authenticated. */
  private redeem(form: URLSearchParams, clientId: string): TokenAnswer {
    const codeValue = form.get('code');
    if (codeValue === null || codeValue === '') {
      return tokenError(400, 'invalid_request', 'Missing required parameter: code');
    }
    const code = this.codes.get(codeValue);
    if (code === undefined) return tokenError(400, 'invalid_grant', 'Malformed auth code.');
    if (code.used) {
      // A replayed code may be a stolen one: revoke what the first redemption issued.
      if (code.handle !== undefined) this.oauth.revoke(code.handle);
      return tokenError(400, 'invalid_grant', 'Bad Request');
    }
    if (this.clock.now() >= code.expiresAt) return tokenError(400, 'invalid_grant', 'Bad Request');
    if (code.clientId !== clientId) return tokenError(400, 'invalid_grant', 'Bad Request');
    if (form.get('redirect_uri') !== code.redirectUri) {
      return tokenError(400, 'redirect_uri_mismatch', 'Bad Request');
    }
    if (code.challenge !== undefined) {
      const verifier = form.get('code_verifier');
      if (verifier === null) return tokenError(400, 'invalid_grant', 'Missing code verifier.');
      const derived =
        code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
      if (!PKCE_VALUE.test(verifier) || derived !== code.challenge) {
        return tokenError(400, 'invalid_grant', 'Invalid code verifier.');
      }
    }
    code.used = true;
    const consentKey = `${clientId}\u0000${code.email}`;
    const offline = code.offline && (code.forceConsent || !this.offlineConsented.has(consentKey));
    if (code.offline) this.offlineConsented.add(consentKey);
    const issued = this.oauth.issueGrant(code.email, code.scopes, offline);
    code.handle = issued.handle;
    return { status: 200, body: issued.body };
  }
}
