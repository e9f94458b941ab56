import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MailError, invalidInput } from '../mail/errors.js';
import type { ErrorCode } from '../mail/errors.js';
import { scopesForTiers, tiersFromEnv } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { TOKEN_URL } from '../providers/gmail/auth.js';
import { endpointByName } from '../providers/gmail/endpoints.js';
import { mapHttpError, parseGoogleError } from '../providers/gmail/google-error.js';
import { googleTransport } from '../providers/gmail/transport.js';
import { Wire } from '../providers/gmail/wire.js';
import { accountName, readOAuthClient, tokenPath } from '../store/config.js';
import type { Env, OAuthClient } from '../store/config.js';
import { narrowTiers } from '../policy/grants.js';
import { chooseProtection, describeProtection, readTokenMeta, writeToken } from '../store/tokens.js';
import type { TokenDeps } from '../store/tokens.js';

/**
 * `mailwarden auth`: OAuth 2.0 for native apps (RFC 8252) with a Desktop-app client — a loopback
 * redirect on 127.0.0.1 and an ephemeral port, PKCE S256 (RFC 7636), a random `state` checked on
 * return (RFC 6749 §10.12). The code exchange and the profile lookup go through the same egress
 * checkpoint as every other request; the consent page itself is opened by the user's browser.
 */

export const GOOGLE_AUTHORIZE_URL = 'https://accounts.google.com/o/oauth2/v2/auth';
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const PROFILE_URL = 'https://gmail.googleapis.com/gmail/v1/users/me/profile';

export interface AuthOptions {
  env: Env;
  account?: string;
  force: boolean;
  /** Try to open the system browser (the URL is printed either way). */
  openBrowser: boolean;
  print: (line: string) => void;
  deps?: TokenDeps;
}

const nothingStored = 'Nothing was stored; run `mailwarden auth` again.';
/** Every failure before the token is written says that nothing was stored and what to do. */
const stop = (code: ErrorCode, message: string): MailError =>
  new MailError(code, `${message} ${nothingStored}`);

function timeoutOf(env: Env): number {
  const raw = env['MAILWARDEN_AUTH_TIMEOUT_MS'];
  if (raw === undefined || raw === '') return DEFAULT_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0)
    throw invalidInput('MAILWARDEN_AUTH_TIMEOUT_MS', 'must be a positive integer (milliseconds)');
  return ms;
}

/**
 * With MAILWARDEN_SANDBOX_URL the consent page is the sandbox's, at Google's path on the sandbox
 * origin. loopbackTransport has already refused a non-loopback sandbox URL by the time this runs.
 */
function authorizeBase(env: Env): string {
  const sandbox = env['MAILWARDEN_SANDBOX_URL'];
  if (sandbox === undefined || sandbox === '') return GOOGLE_AUTHORIZE_URL;
  const u = new URL(sandbox);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}${new URL(GOOGLE_AUTHORIZE_URL).pathname}`;
}

/** Best effort: the printed URL is the contract, a browser window is a convenience. */
function openInBrowser(url: string, env: Env): void {
  let cmd: string;
  let args: string[];
  if (process.platform === 'darwin') [cmd, args] = ['open', [url]];
  else if (process.platform === 'win32')
    [cmd, args] = ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]];
  else {
    // Without a display xdg-open falls back to a terminal browser that would take over this terminal.
    if (!env['DISPLAY'] && !env['WAYLAND_DISPLAY']) return;
    [cmd, args] = ['xdg-open', [url]];
  }
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true, windowsVerbatimArguments: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Nothing to do: the URL is on the terminal.
  }
}

interface Callback {
  params: URLSearchParams;
  res: ServerResponse;
}

function finishPage(res: ServerResponse, status: number, text: string): void {
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
    if (delivered) return finishPage(res, 409, 'This sign-in was already answered; see the terminal.');
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

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const minutes =
    ms >= 60_000 ? `${Math.round(ms / 60_000)} minute(s)` : `${Math.round(ms / 1000)} second(s)`;
  const timeout = new Promise<never>((_r, reject) => {
    timer = setTimeout(
      () => reject(stop('not_authorized', `No answer from the browser within ${minutes}.`)),
      ms,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The redirect's verdict: the code, or the reason there is none. State is checked first, always. */
function codeFrom(params: URLSearchParams, state: string): string {
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

async function readJson(res: Response, what: string): Promise<Record<string, unknown>> {
  try {
    return (await res.json()) as Record<string, unknown>;
  } catch {
    throw stop('upstream_unavailable', `${what}: Google answered with something that is not JSON.`);
  }
}

/** A refusal by the egress checkpoint stays what it is; anything else thrown by fetch is the network. */
const netError = (what: string, e: unknown): MailError =>
  e instanceof MailError
    ? e
    : stop('network_error', `${what}: ${e instanceof Error ? e.message : String(e)}.`);

interface Exchanged {
  refreshToken: string;
  accessToken: string;
  scopes: string[];
}

async function exchangeCode(
  wire: Wire,
  client: OAuthClient,
  code: string,
  verifier: string,
  redirectUri: string,
): Promise<Exchanged> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }).toString();
  // One attempt: a code is single-use, so a retry after a lost answer could only fail.
  const res = await wire
    .send({
      method: 'POST',
      url: TOKEN_URL,
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    })
    .catch((e: unknown) => Promise.reject(netError('code exchange', e)));
  const json = await readJson(res, 'code exchange');
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

async function profileAddress(wire: Wire, accessToken: string): Promise<string> {
  const res = await wire
    .send({
      method: 'GET',
      url: PROFILE_URL,
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    })
    .catch((e: unknown) => Promise.reject(netError('users.getProfile', e)));
  if (!res.ok)
    throw mapHttpError(endpointByName('users.getProfile'), res.status, parseGoogleError(await res.text()));
  const address = (await readJson(res, 'users.getProfile'))['emailAddress'];
  if (typeof address !== 'string' || address === '')
    throw stop('upstream_unavailable', 'users.getProfile gave no address.');
  return address;
}

const short = (scope: string): string => scope.replace('https://www.googleapis.com/auth/', '');

export async function runAuth(o: AuthOptions): Promise<number> {
  const { env, print } = o;
  const account = accountName(env, o.account);
  const client = await readOAuthClient(env);
  const tiers = tiersFromEnv(env);
  const requested = scopesForTiers(tiers);
  const path = tokenPath(env, account);
  const previous = await readTokenMeta(path).catch(() => undefined);
  const sandbox = env['MAILWARDEN_SANDBOX_URL'];
  const transport = googleTransport(sandbox);
  const wire = new Wire(transport, tiers);
  const timeoutMs = timeoutOf(env);
  const protection = await chooseProtection(env, o.deps ?? {});

  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const listener = await listenLoopback();
  const redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  const url = new URL(authorizeBase(env));
  const params: Record<string, string> = {
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: requested.join(' '),
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    // offline + consent: Google returns a refresh token only on a consent it has just shown.
    access_type: 'offline',
    prompt: 'consent',
  };
  if (previous?.address !== undefined) params['login_hint'] = previous.address;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);

  print(
    `Signing in account "${account}" for tiers ${[...tiers].join(', ')} (scopes: ${requested.map(short).join(', ')}).`,
  );
  print(`The token will be stored ${describeProtection(protection)}`);
  print(`Open this URL in a browser and approve access (waiting up to ${Math.round(timeoutMs / 1000)} s):`);
  print('');
  print(`  ${url.href}`);
  print('');
  if (o.openBrowser) openInBrowser(url.href, env);

  let callback: Callback | undefined;
  try {
    callback = await withTimeout(listener.next, timeoutMs);
    const code = codeFrom(callback.params, state);
    const got = await exchangeCode(wire, client, code, verifier, redirectUri);
    const address = await profileAddress(wire, got.accessToken);
    if (
      previous?.address !== undefined &&
      previous.address.toLowerCase() !== address.toLowerCase() &&
      !o.force
    ) {
      throw new MailError(
        'invalid_input',
        `${path} holds the token for ${previous.address}, but this sign-in is for ${address}. Nothing was stored. ` +
          `To keep both, run \`mailwarden auth --account NAME\`; to replace it, run \`mailwarden auth --force\`.`,
        { field: 'account' },
      );
    }
    const scopes =
      got.scopes.length > 0 ? got.scopes : (callback.params.get('scope') ?? '').split(' ').filter(Boolean);
    await writeToken(
      path,
      { refreshToken: got.refreshToken, address, scopes, issuedAt: new Date().toISOString() },
      protection,
    );
    finishPage(
      callback.res,
      200,
      `Signed in as ${address}. You can close this tab and return to the terminal.`,
    );
    print(`Signed in as ${address}. Granted: ${scopes.map(short).join(', ')}.`);
    print(`Token stored at ${path}, ${describeProtection(protection)}`);
    if (previous?.protection === 'none' && protection.kind !== 'none')
      print('The previous plaintext token was replaced by an encrypted one.');
    reportMissing(tiers, scopes, print);
    return 0;
  } catch (e) {
    if (callback !== undefined && !callback.res.headersSent) {
      finishPage(callback.res, 400, `Sign-in failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    throw e;
  } finally {
    listener.close();
  }
}

/** Granular consent lets the user untick scopes; say which tiers that switched off. */
function reportMissing(tiers: ReadonlySet<Tier>, scopes: string[], print: (line: string) => void): void {
  const { dropped } = narrowTiers(tiers, scopes);
  if (dropped.length === 0) return;
  print(
    `Warning: the consent did not grant what the ${dropped.join(', ')} tier(s) need; their tools will not be listed. ` +
      'Run `mailwarden auth` again and leave every box ticked to enable them.',
  );
}
