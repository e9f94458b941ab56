import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../mail/clock.js';
import {
  GoogleApiError,
  insufficientScope,
  invalidArgument,
  notFound,
  rateLimited,
  unauthenticated,
} from './errors.js';
import { BATCH_PATH } from '../providers/gmail/batch-format.js';
import { serveBatch } from './batch.js';
import { AUTHORIZE_PATH } from './consent.js';
import type { ConsentServer, HtmlAnswer } from './consent.js';
import type { Fault, FaultInjector } from './faults.js';
import type { UserMailbox } from './model.js';
import type { OAuthServer } from './oauth.js';
import type { QuotaMeter } from './quota.js';
import { QUOTA_UNITS } from './quota.js';
import { Params } from './routes/params.js';
import { findRoute } from './routes/table.js';
import type { Route } from './routes/types.js';
import { scopeAllows } from './scopes.js';
import type { StatsCounter } from './stats.js';

export interface GatewayDeps {
  clock: Clock;
  oauth: OAuthServer;
  consent: ConsentServer;
  quota: QuotaMeter;
  faults: FaultInjector;
  stats: StatsCounter;
  mailboxFor: (email: string) => UserMailbox | undefined;
  latencyMs: () => number;
  staleThreadIndex: () => boolean;
}

/** Gmail's largest message is 35 MB; anything much bigger is not a request a client would send. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export type Target =
  | { kind: 'token' }
  | { kind: 'revoke' }
  | { kind: 'authorize' }
  | { kind: 'gmail'; userId: string; route: Route; ids: string[] }
  | { kind: 'batch' }
  | { kind: 'unknown' };

export function resolve(verb: string, path: string): Target {
  if (path === BATCH_PATH) return verb === 'POST' ? { kind: 'batch' } : { kind: 'unknown' };
  if (path === '/token') return verb === 'POST' ? { kind: 'token' } : { kind: 'unknown' };
  if (path === '/revoke') return verb === 'POST' ? { kind: 'revoke' } : { kind: 'unknown' };
  // Google serves this on accounts.google.com; the sandbox serves it on its own origin.
  if (path === AUTHORIZE_PATH)
    return verb === 'GET' || verb === 'POST' ? { kind: 'authorize' } : { kind: 'unknown' };
  const m = /^\/gmail\/v1\/users\/([^/]+)\/(.+)$/.exec(path);
  if (!m?.[1] || !m[2]) return { kind: 'unknown' };
  const found = findRoute(verb, m[2]);
  if (!found) return { kind: 'unknown' };
  let userId = m[1];
  try {
    userId = decodeURIComponent(userId);
  } catch {
    // Left as written: it will not name any user and fails the delegation check.
  }
  return { kind: 'gmail', userId, ...found };
}

export const methodName = (t: Target): string =>
  t.kind === 'gmail'
    ? t.route.method
    : t.kind === 'batch'
      ? 'batch'
      : t.kind === 'token'
        ? 'oauth.token'
        : t.kind === 'revoke'
          ? 'oauth.revoke'
          : t.kind === 'authorize'
            ? 'oauth.authorize'
            : 'unknown';

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.byteLength;
    if (size > MAX_BODY_BYTES) throw new GoogleApiError(413, 'Request Entity Too Large', 'uploadTooLarge');
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function send(
  res: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): void {
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  // Google pretty-prints JSON unless prettyPrint=false; clients must not care either way.
  const text = JSON.stringify(body, null, 2);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=UTF-8',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sendError(res: ServerResponse, err: GoogleApiError): void {
  send(res, err.code, err.body(), err.headers);
}

export function faultError(fault: Fault): GoogleApiError {
  const retry =
    fault.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(fault.retryAfterSeconds) };
  switch (fault.kind) {
    case '429':
      return rateLimited(fault.retryAfterSeconds ?? 1);
    case 'http503':
      return new GoogleApiError(503, 'The service is currently unavailable.', 'backendError', {
        headers: retry,
      });
    default:
      return new GoogleApiError(500, 'Internal error encountered.', 'backendError', { headers: retry });
  }
}

function parseJson(body: Buffer): unknown {
  if (body.byteLength === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw invalidArgument('Invalid JSON payload received.');
  }
}

function sendHtml(res: ServerResponse, answer: HtmlAnswer): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Length': String(Buffer.byteLength(answer.body)),
  });
  res.end(answer.body);
}

/** Google's OAuth endpoints answer in RFC 6749 form (`error`, `error_description`), not Google's API envelope. */
function serveOAuth(
  oauth: OAuthServer,
  kind: 'token' | 'revoke',
  url: URL,
  body: Buffer,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const form = new URLSearchParams(body.toString('utf8'));
  if (kind === 'revoke') {
    const revoked = oauth.revoke(form.get('token') ?? url.searchParams.get('token') ?? '');
    if (revoked) return send(res, 200, {});
    return send(res, 400, { error: 'invalid_token', error_description: 'Bad Request' });
  }
  const answer = oauth.token(form, req.headers.authorization);
  send(res, answer.status, answer.body, {
    'Cache-Control': 'no-cache, no-store, max-age=0, must-revalidate',
  });
}

/** What one Gmail call answers: a status, a JSON body (none: 204) and headers. */
export interface CallAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const errorAnswer = (err: GoogleApiError): CallAnswer => ({
  status: err.code,
  body: err.body(),
  headers: err.headers,
});

/**
 * One Gmail API call after its transport (latency, faults) was dealt with: auth, scope, quota,
 * then the method itself. A direct request and each call inside a batch run through this, so a
 * batched call is judged, charged and counted exactly as it would be alone.
 */
export function runGmailCall(
  deps: GatewayDeps,
  target: Extract<Target, { kind: 'gmail' }>,
  search: URLSearchParams,
  authorization: string | undefined,
  body: Buffer,
): CallAnswer {
  const method = target.route.method;
  try {
    const principal = deps.oauth.authenticate(authorization);
    if (!principal) return errorAnswer(unauthenticated());
    const mailbox = deps.mailboxFor(principal.email);
    const userId = target.userId.toLowerCase();
    if (!mailbox || (userId !== 'me' && userId !== principal.email)) {
      return errorAnswer(new GoogleApiError(403, `Delegation denied for ${target.userId}`, 'forbidden'));
    }
    if (!scopeAllows(principal.scopes, method)) return errorAnswer(insufficientScope());
    const units = QUOTA_UNITS[method] ?? 0;
    const charged = deps.quota.charge(principal.email, units);
    if (!charged.ok) return errorAnswer(rateLimited(charged.retryAfterSeconds));
    deps.stats.charge(method, units);
    return target.route.handle({
      mailbox,
      params: new Params(search),
      ids: target.ids,
      body: parseJson(body),
      now: deps.clock.now(),
      staleThreadIndex: deps.staleThreadIndex(),
    });
  } catch (err) {
    if (err instanceof GoogleApiError) return errorAnswer(err);
    throw err;
  }
}

/** The request pipeline: latency, faults, auth, scope, quota, then the Gmail method itself. */
export function createRequestListener(
  deps: GatewayDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const verb = (req.method ?? 'GET').toUpperCase();
    const target = resolve(verb, url.pathname);
    const method = methodName(target);
    deps.stats.request(method, target.kind === 'gmail');
    const body = await readBody(req);
    const latency = deps.latencyMs();
    if (latency > 0) await sleep(latency);

    const fault = deps.faults.take(method, url.pathname);
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'hang' && fault.apply !== true) return;
    const hangAfter = fault?.kind === 'hang';
    if (fault?.kind === 'delay') await sleep(fault.delayMs ?? 1000);
    else if (fault && fault.kind !== 'hang') return sendError(res, faultError(fault));

    if (target.kind === 'authorize') {
      return sendHtml(
        res,
        verb === 'GET'
          ? deps.consent.authorize(url.searchParams)
          : deps.consent.decide(new URLSearchParams(body.toString('utf8'))),
      );
    }
    if (target.kind === 'token' || target.kind === 'revoke') {
      return serveOAuth(deps.oauth, target.kind, url, body, req, res);
    }
    if (target.kind === 'batch') {
      const answer = await serveBatch(deps, req.headers, body);
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      if (answer === 'hang' || hangAfter) return;
      res.writeHead(answer.status, { ...answer.headers, 'Content-Length': String(answer.body.byteLength) });
      res.end(answer.body);
      return;
    }
    if (target.kind === 'unknown') return sendError(res, notFound());

    const answer = runGmailCall(deps, target, url.searchParams, req.headers.authorization, body);
    // Carried out, never answered: the client must find out from the mailbox what happened.
    if (hangAfter) return;
    send(res, answer.status, answer.body, answer.headers);
  };

  return (req, res) => {
    serve(req, res).catch((err: unknown) => {
      if (res.headersSent || res.destroyed) return;
      if (err instanceof GoogleApiError) return sendError(res, err);
      // Google's shape for an internal failure; the real cause rides along in a sandbox-only header for debugging.
      const internal = new GoogleApiError(500, 'Internal error encountered.', 'backendError', {
        headers: { 'X-Sandbox-Error': encodeURIComponent(err instanceof Error ? err.message : String(err)) },
      });
      sendError(res, internal);
    });
  };
}
