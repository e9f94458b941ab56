import type { IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BATCH_MAX_CALLS, decodeBatch, encodeBatch } from '../providers/gmail/batch-format.js';
import type { BatchPart } from '../providers/gmail/batch-format.js';
import type { GoogleApiError } from './errors.js';
import { invalidArgument, notFound } from './errors.js';
import type { CallAnswer, GatewayDeps } from './http.js';
import { faultError, methodName, resolve, runGmailCall } from './http.js';

/**
 * POST /batch/gmail/v1, as Google serves it (Gmail API guide "Batching requests"): the body is
 * multipart/mixed, each part one HTTP request; every inner call is judged, charged and counted
 * as the same call sent alone (auth, scope, quota, faults), and its answer, whatever its status,
 * is one part of a multipart/mixed 200. The outer request's headers (Authorization) apply to
 * each inner call that does not set its own.
 */

export type BatchAnswer =
  { status: number; headers: Record<string, string>; body: Buffer } | 'reset' | 'hang';

const REASONS: Record<number, string> = {
  200: 'OK',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const errorAnswer = (err: GoogleApiError): CallAnswer => ({
  status: err.code,
  body: err.body(),
  headers: err.headers,
});

function outerError(err: GoogleApiError): BatchAnswer {
  const text = JSON.stringify(err.body(), null, 2);
  return {
    status: err.code,
    headers: { 'Content-Type': 'application/json; charset=UTF-8', ...err.headers },
    body: Buffer.from(text),
  };
}

/** `GET /gmail/v1/users/me/threads/x?format=full HTTP/1.1` → verb and URL (the version is optional). */
function requestLine(line: string): { verb: string; url: URL } | undefined {
  const m = /^([A-Z]+) (\/\S*)(?: HTTP\/\d(?:\.\d)?)?$/.exec(line);
  if (m === null) return undefined;
  try {
    return { verb: m[1] as string, url: new URL(m[2] as string, 'http://sandbox.invalid') };
  } catch {
    return undefined;
  }
}

async function answerPart(deps: GatewayDeps, part: BatchPart, outerAuth: string | undefined) {
  // serveBatch refused the batch before any call ran if a part had no request line.
  const line = requestLine(part.http.startLine) as { verb: string; url: URL };
  const target = resolve(line.verb, line.url.pathname);
  if (target.kind !== 'gmail') return { answer: errorAnswer(notFound()) };
  const method = methodName(target);
  deps.stats.call(method);
  const fault = deps.faults.take(method, line.url.pathname);
  if (fault?.kind === 'reset' || (fault?.kind === 'hang' && fault.apply !== true))
    return { transport: fault.kind };
  if (fault?.kind === 'delay') await sleep(fault.delayMs ?? 1000);
  else if (fault && fault.kind !== 'hang') return { answer: errorAnswer(faultError(fault)) };
  const auth = part.http.headers.get('authorization') ?? outerAuth;
  const answer = runGmailCall(deps, target, line.url.searchParams, auth, Buffer.from(part.http.body, 'utf8'));
  return fault?.kind === 'hang' ? { answer, transport: 'hang' as const } : { answer };
}

function httpPart(a: CallAnswer): string {
  const head = [`HTTP/1.1 ${a.status} ${REASONS[a.status] ?? ''}`.trimEnd()];
  for (const [k, v] of Object.entries(a.headers ?? {})) head.push(`${k}: ${v}`);
  if (a.body === undefined) return `${head.join('\r\n')}\r\n\r\n`;
  const text = JSON.stringify(a.body, null, 2);
  head.push('Content-Type: application/json; charset=UTF-8', `Content-Length: ${Buffer.byteLength(text)}`);
  return `${head.join('\r\n')}\r\n\r\n${text}`;
}

export async function serveBatch(
  deps: GatewayDeps,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<BatchAnswer> {
  const parts = decodeBatch(body, headers['content-type']);
  if (parts === undefined)
    return outerError(
      invalidArgument(
        'Failed to parse batch request: the Content-Type must be multipart/mixed with a boundary',
      ),
    );
  if (parts.length === 0) return outerError(invalidArgument('Failed to parse batch request: no parts'));
  if (parts.length > BATCH_MAX_CALLS)
    return outerError(
      invalidArgument(`Too many requests in batch: ${parts.length}; at most ${BATCH_MAX_CALLS}`),
    );
  const bad = parts.findIndex(
    (p) => p.contentType !== 'application/http' || requestLine(p.http.startLine) === undefined,
  );
  if (bad >= 0)
    return outerError(
      invalidArgument(`Failed to parse batch request: part ${bad + 1} is not an application/http request`),
    );

  const answers: Array<{ contentId?: string; http: string }> = [];
  let transport: 'reset' | 'hang' | undefined;
  // In order, one after another: a batch is one user's calls, and Gmail's per-user quota is charged in turn.
  for (const part of parts) {
    const r = await answerPart(deps, part, headers.authorization);
    if (r.transport !== undefined) transport ??= r.transport;
    if (r.answer === undefined) continue;
    const http = httpPart(r.answer);
    answers.push(part.contentId === undefined ? { http } : { contentId: `response-${part.contentId}`, http });
  }
  if (transport !== undefined) return transport;
  const boundary = `batch_${randomBytes(12).toString('base64url')}`;
  return {
    status: 200,
    headers: { 'Content-Type': `multipart/mixed; boundary=${boundary}` },
    body: Buffer.from(encodeBatch(boundary, answers)),
  };
}
