import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MailError } from '../../mail/errors.js';
import type { ErrorCode } from '../../mail/errors.js';
import { TOKEN_URL } from './auth.js';
import { endpointByName } from './endpoints.js';
import { mapHttpError, parseGoogleError } from './google-error.js';
import type { Wire } from './wire.js';

/**
 * The consent flow both `mailwarden auth` and the add_account tool run: OAuth 2.0 for native apps
 * (RFC 8252) with a Desktop-app client — a loopback redirect on 127.0.0.1 and an ephemeral port,
 * PKCE S256 (RFC 7636), a random `state` checked on return (RFC 6749 §10.12). The code exchange
 * and the profile lookup go through the Wire (egress checkpoint); the consent page itself is
 * opened by a person's browser. Nothing here stores anything: the caller decides what to keep.
 */

export const GOOGLE_AUTHORIZE_URL = 'https://accounts.google.com/o/oauth2/v2/auth';
export const DEFAULT_CONSENT_TIMEOUT_MS = 5 * 60_000;
const PROFILE_URL = 'https://gmail.googleapis.com/gmail/v1/users/me/profile';

/**
 * With a sandbox URL the consent page is the sandbox's, at Google's path on the sandbox origin
 * (loopbackTransport has already refused a non-loopback sandbox URL by the time this runs).
 */
export function authorizeBase(sandboxUrl: string | undefined): string {
  if (sandboxUrl === undefined || sandboxUrl === '') return GOOGLE_AUTHORIZE_URL;
  const u = new URL(sandboxUrl);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}${new URL(GOOGLE_AUTHORIZE_URL).pathname}`;
}

export interface ConsentOptions {
  client: { clientId: string; clientSecret: string };
  scopes: readonly string[];
  wire: Wire;
  /** authorizeBase(…) */
  authorizeUrl: string;
  loginHint?: string;
  timeoutMs: number;
  /** Ends every failure's message: nothing was stored, and how to try again. */
  retryHint: string;
}

/** The browser came back, the code was exchanged and the mailbox named itself. */
export interface Granted {
  refreshToken: string;
  address: string;
  scopes: string[];
  /** Answers the browser tab (it waits until the caller has stored or refused), then closes the listener. */
  respond(ok: boolean, text: string): void;
}

export interface Consent {
  url: string;
  redirectUri: string;
  /** Rejects with a MailError on denial, a bad state, a failed exchange, the timeout or cancel(). */
  granted: Promise<Granted>;
  /** Stops waiting: the listener closes and `granted` rejects with `reason`. */
  cancel(reason: MailError): void;
}

interface Callback {
  params: URLSearchParams;
  res: ServerResponse;
}

function finishPage(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return;
  const esc = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mailwarden</title></head><body><main><h1>mailwarden</h1><p id="result">${esc}</p></main></body></html>`;
  // Connection: close, so the browser's socket does not keep this process alive afterwards.
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(body);
}

/** The loopback redirect target: the first GET /callback wins; its response is held until the flow ends. */
async function listenLoopback(): Promise<{ port: number; next: Promise<Callback>; close(): void }> {
  let deliver!: (cb: Callback) => void;
  const next = new Promise<Callback>((resolve) => (deliver = resolve));
  let delivered = false;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/callback') return finishPage(res, 404, 'Not found.');
    if (delivered) return finishPage(res, 409, 'This sign-in was already answered.');
    delivered = true;
    deliver({ params: url.searchParams, res });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    next,
    close: () => {
      server.close();
      server.closeIdleConnections();
      // A browser still holding a connection (a preconnect) must not keep the process alive.
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    },
  };
}

const span = (ms: number): string =>
  ms >= 60_000 ? `${Math.round(ms / 60_000)} minute(s)` : `${Math.round(ms / 1000)} second(s)`;

export async function startConsent(o: ConsentOptions): Promise<Consent> {
  const stop = (code: ErrorCode, message: string, retryable = false): MailError =>
    new MailError(code, `${message} ${o.retryHint}`, { retryable });
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const listener = await listenLoopback();
  const redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  const url = new URL(o.authorizeUrl);
  const params: Record<string, string> = {
    client_id: o.client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: o.scopes.join(' '),
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    // offline + consent: Google returns a refresh token only on a consent it has just shown.
    access_type: 'offline',
    prompt: 'consent',
  };
  if (o.loginHint !== undefined) params['login_hint'] = o.loginHint;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);

  let abort!: (e: MailError) => void;
  const aborted = new Promise<never>((_r, reject) => (abort = reject));
  aborted.catch(() => undefined);
  const timer = setTimeout(
    () => abort(stop('not_authorized', `No answer from the browser within ${span(o.timeoutMs)}.`, true)),
    o.timeoutMs,
  );
  timer.unref();

  const granted = (async (): Promise<Granted> => {
    let callback: Callback | undefined;
    try {
      callback = await Promise.race([listener.next, aborted]);
      clearTimeout(timer);
      const code = codeFrom(callback.params, state, stop);
      const got = await exchangeCode(o, code, verifier, redirectUri, stop);
      const address = await profileAddress(o.wire, got.accessToken, stop);
      const scopes =
        got.scopes.length > 0 ? got.scopes : (callback.params.get('scope') ?? '').split(' ').filter(Boolean);
      const res = callback.res;
      return {
        refreshToken: got.refreshToken,
        address,
        scopes,
        respond(ok, text) {
          finishPage(res, ok ? 200 : 400, text);
          listener.close();
        },
      };
    } catch (e) {
      clearTimeout(timer);
      if (callback !== undefined)
        finishPage(callback.res, 400, `Sign-in failed: ${e instanceof Error ? e.message : String(e)}`);
      listener.close();
      throw e;
    }
  })();
  granted.catch(() => undefined);
  return { url: url.href, redirectUri, granted, cancel: (reason) => abort(reason) };
}

type Stop = (code: ErrorCode, message: string, retryable?: boolean) => MailError;

/** The redirect's verdict: the code, or the reason there is none. State is checked first, always. */
function codeFrom(params: URLSearchParams, state: string, stop: Stop): string {
  if (params.get('state') !== state) {
    throw stop(
      'not_authorized',
      'The browser came back with a different "state" than this sign-in sent, so the answer may not come from it (possible cross-site request forgery).',
    );
  }
  const error = params.get('error');
  if (error === 'access_denied') {
    throw stop('not_authorized', 'Access was denied on the consent screen (access_denied).');
  }
  if (error !== null) {
    const desc = params.get('error_description');
    throw stop('not_authorized', `Google answered the sign-in with "${error}"${desc ? `: ${desc}` : ''}.`);
  }
  const code = params.get('code');
  if (code === null || code === '') throw stop('not_authorized', 'The browser came back without a code.');
  return code;
}

async function readJson(res: Response, what: string, stop: Stop): Promise<Record<string, unknown>> {
  try {
    return (await res.json()) as Record<string, unknown>;
  } catch {
    throw stop('upstream_unavailable', `${what}: Google answered with something that is not JSON.`);
  }
}

/** A refusal by the egress checkpoint stays what it is; anything else thrown by fetch is the network. */
const netError = (what: string, e: unknown, stop: Stop): MailError =>
  e instanceof MailError
    ? e
    : stop('network_error', `${what}: ${e instanceof Error ? e.message : String(e)}.`, true);

async function exchangeCode(
  o: ConsentOptions,
  code: string,
  verifier: string,
  redirectUri: string,
  stop: Stop,
): Promise<{ refreshToken: string; accessToken: string; scopes: string[] }> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    client_id: o.client.clientId,
    client_secret: o.client.clientSecret,
  }).toString();
  // One attempt: a code is single-use, so a retry after a lost answer could only fail.
  const res = await o.wire
    .send({
      method: 'POST',
      url: TOKEN_URL,
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    })
    .catch((e: unknown) => Promise.reject(netError('code exchange', e, stop)));
  const json = await readJson(res, 'code exchange', stop);
  if (!res.ok) {
    const err = parseGoogleError(JSON.stringify(json));
    const clientFix =
      err.status === 'invalid_client'
        ? ' The client id/secret in credentials.json are not right: download the Desktop-app client again.'
        : '';
    const google = `${err.status ?? `HTTP ${res.status}`}${err.message ? `: ${err.message}` : ''}`;
    throw stop('not_authorized', `Google refused the sign-in code (${google}).${clientFix}`);
  }
  const { refresh_token: refresh, access_token: access, scope } = json;
  if (typeof access !== 'string' || access === '')
    throw stop('upstream_unavailable', 'code exchange: no access_token.');
  if (typeof refresh !== 'string' || refresh === '') {
    throw stop('not_authorized', 'Google issued no refresh token (offline access was not granted).');
  }
  const scopes = typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [];
  return { refreshToken: refresh, accessToken: access, scopes };
}

async function profileAddress(wire: Wire, accessToken: string, stop: Stop): Promise<string> {
  const res = await wire
    .send({
      method: 'GET',
      url: PROFILE_URL,
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    })
    .catch((e: unknown) => Promise.reject(netError('users.getProfile', e, stop)));
  if (!res.ok)
    throw mapHttpError(endpointByName('users.getProfile'), res.status, parseGoogleError(await res.text()));
  const address = (await readJson(res, 'users.getProfile', stop))['emailAddress'];
  if (typeof address !== 'string' || address === '')
    throw stop('upstream_unavailable', 'users.getProfile gave no address.');
  return address;
}
