/**
 * One HTTPS request to an address the guard already vetted. The transport never resolves a
 * name: the socket goes to `address`, while TLS still sends the host name (SNI) and checks the
 * certificate against it. The response body is never read: the socket is destroyed as soon as
 * the status line and headers arrive.
 */
import type { LookupFunction } from 'node:net';
import type { RequestOptions } from 'node:https';
import { MailError } from '../mail/errors.js';
import { hostLiteral } from './guard.js';

export interface PinnedRequest {
  url: URL;
  /** The vetted address; the only one the connection may go to. */
  address: string;
  family: 4 | 6;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** All a caller learns from the endpoint: the status, and where a redirect points. */
export interface PinnedResponse {
  status: number;
  location?: string;
}

export interface HttpsTransport {
  send(req: PinnedRequest): Promise<PinnedResponse>;
}

/** A `lookup` that answers every question with the vetted address, whatever name it is asked. */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    // Node asks with { all: true } when it races address families (autoSelectFamily).
    const all =
      typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    const cb = callback as (...args: unknown[]) => void;
    if (all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
}

const MAX_HEADER_BYTES = 16 * 1024;

/** node:https options for a pinned request (exported so tests can see exactly what is sent). */
export function requestOptions(req: PinnedRequest): RequestOptions {
  const literal = hostLiteral(req.url);
  const hostname = literal ?? req.url.hostname;
  const headers: Record<string, string> = { ...req.headers };
  if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
  return {
    protocol: 'https:',
    hostname,
    port: 443,
    path: `${req.url.pathname}${req.url.search}`,
    method: req.method,
    headers,
    // SNI and certificate identity use the name; the socket uses the vetted address.
    ...(literal === undefined ? { servername: hostname } : {}),
    lookup: pinnedLookup(req.address, req.family),
    // No pooled sockets: each request opens its own connection to its own vetted address.
    agent: false,
    rejectUnauthorized: true,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
}

/**
 * The production transport (node:https, loaded on first use). `testOnly` points it at a local
 * TLS server (port and CA); the runtime never passes it, and the guard only ever vets :443.
 */
export function nodeHttpsTransport(testOnly?: { port: number; ca: string }): HttpsTransport {
  return {
    async send(req) {
      const https = await import('node:https');
      const options: RequestOptions = {
        ...requestOptions(req),
        ...(testOnly ? { port: testOnly.port, ca: testOnly.ca } : {}),
      };
      const outOfTime = (): MailError =>
        new MailError('network_error', 'the unsubscribe time budget ran out');
      if (req.signal.aborted) throw outOfTime();
      return new Promise<PinnedResponse>((resolve, reject) => {
        let settled = false;
        const done = (f: () => void): void => {
          if (settled) return;
          settled = true;
          req.signal.removeEventListener('abort', onAbort);
          f();
        };
        const r = https.request(options, (res) => {
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          // Discarded unread: nothing the endpoint writes in the body reaches mailwarden.
          res.destroy();
          r.destroy();
          done(() => resolve(location === undefined ? { status } : { status, location }));
        });
        const onAbort = (): void => {
          r.destroy();
          done(() => reject(outOfTime()));
        };
        // Errors after the response (the socket we destroyed) land here and are ignored.
        r.on('error', (e: NodeJS.ErrnoException) =>
          done(() =>
            reject(
              new MailError('network_error', `the HTTPS request failed (${e.code ?? 'error'})`, { cause: e }),
            ),
          ),
        );
        req.signal.addEventListener('abort', onAbort, { once: true });
        r.end(req.body);
      });
    },
  };
}
