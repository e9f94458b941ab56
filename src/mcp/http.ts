import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import type { NodeIncomingMessageLike } from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import ipaddr from 'ipaddr.js';
import { createMcpServer } from './server.js';
import type { ServerRuntime } from './server.js';
import { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS, LegacySessions } from './sessions.js';
import { LOOPBACK_NAMES, bracketed, hostName, listenOn } from './host-check.js';

export { LOOPBACK_NAMES, hostName } from './host-check.js';

/** No MCP request mailwarden serves comes near this; a bigger body is refused unread. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const MCP_PATH = '/mcp';

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface HttpOptions {
  host: string;
  port: number;
  /** The bearer every request must present; undefined only when the operator allowed none. */
  token: string | undefined;
  /**
   * When set, replaces `token`: who a request's Authorization header says it is (clients.json,
   * MAILWARDEN_TOKEN), with the runtime that client sees; undefined refuses it with 401.
   */
  authenticate?: (authorization: string | string[] | undefined) => Promise<HttpClient | undefined>;
  /** Host/Origin names allowed beside the loopback names (MAILWARDEN_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Client addresses allowed (MAILWARDEN_ALLOWED_CLIENTS); undefined: any that can connect. */
  allowedClients?: readonly Cidr[] | undefined;
  maxBodyBytes?: number;
  /** 2025-11-25 sessions: idle expiry (default 30 min) and how many may be open (default 32). */
  sessionIdleMs?: number;
  maxSessions?: number;
  /**
   * The review page under REVIEW_PATH (src/review/server.ts), behind the same client, Host and
   * Origin checks but not the bearer: it has its own login. Loaded on its first request.
   */
  review?: () => Promise<{ handle(req: IncomingMessage, res: ServerResponse): Promise<void> }>;
}

export const REVIEW_PATH = '/review';

/** One authenticated caller: requests with the same key share handlers and 2025-11-25 sessions. */
export interface HttpClient {
  key: string;
  runtime: ServerRuntime;
}

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** "10.0.0.0/8, ::1, 192.168.1.7": bare addresses are single hosts. Throws on a bad entry. */
export function parseAllowedClients(list: string): Cidr[] {
  const out: Cidr[] = [];
  for (const raw of list.split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    let cidr: Cidr;
    try {
      if (s.includes('/')) cidr = ipaddr.parseCIDR(s);
      else {
        const a = ipaddr.parse(s);
        cidr = [a, a.kind() === 'ipv4' ? 32 : 128];
      }
    } catch {
      throw new Error(`MAILWARDEN_ALLOWED_CLIENTS: "${s}" is not an IP address or CIDR range`);
    }
    const [net, bits] = cidr;
    // Written as ::ffff:a.b.c.d/n it means IPv4 peers, which we compare unwrapped.
    if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      cidr = [(net as ipaddr.IPv6).toIPv4Address(), bits - 96];
    out.push(cidr);
  }
  return out;
}

/** A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; ipaddr.process unwraps them. */
export function clientAllowed(address: string | undefined, allowed: readonly Cidr[]): boolean {
  if (address === undefined) return false;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address.replace(/%.*$/, ''));
  } catch {
    return false;
  }
  return allowed.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Equal-length digests go to timingSafeEqual, so neither the token's length nor how much of it
 * a guess got right shows in the response time.
 */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  const m = typeof header === 'string' ? /^Bearer +([^\s]+) *$/i.exec(header) : null;
  const same = timingSafeEqual(digest(m?.[1] ?? ''), digest(token));
  return same && m !== null;
}

function refuse(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * A refusal before the bearer was checked, or for a client that has none: the answer, then the
 * connection goes. Node would otherwise keep reading the unread body of a keep-alive request, so a
 * client trickling its body would hold the socket until requestTimeout (300 s by default).
 */
function refuseAndClose(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.once('finish', () => {
    req.socket.end();
    // A peer that never reads its side of the close is cut off.
    setTimeout(() => req.socket.destroy(), 1_000).unref();
  });
  refuse(res, status, message, { ...headers, connection: 'close' });
}

/** The body, or undefined once it passes `max` (the rest is then drained and discarded). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function tooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  refuse(res, 413, `request body over ${max} bytes`);
  // Node drains the unread rest so the client can read the 413; one that keeps sending is cut off.
  const cutoff = setTimeout(() => req.destroy(), 5_000);
  cutoff.unref();
  req.once('end', () => clearTimeout(cutoff));
  req.resume();
}

/** The request as the SDK adapter reads it, with the body we already counted. */
function withBody(req: IncomingMessage, body: Buffer): NodeIncomingMessageLike {
  return {
    headers: req.headers,
    ...(req.method === undefined ? {} : { method: req.method }),
    ...(req.url === undefined ? {} : { url: req.url }),
    async *[Symbol.asyncIterator]() {
      if (body.length > 0) yield body;
    },
  };
}

/** The parsed POST body, or why it cannot be served (a batch, or not JSON). */
function parseBody(
  body: Buffer,
): { ok: true; value: unknown } | { ok: false; code: number; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, code: -32700, message: 'Parse error: the body is not JSON' };
  }
  // JSON-RPC batches were dropped from MCP in 2025-06-18; one request runs one call, so
  // confirmations, caps and cancellation stay per call.
  if (Array.isArray(value))
    return {
      ok: false,
      code: -32600,
      message: 'Invalid Request: JSON-RPC batches are not supported; send one message per HTTP request',
    };
  return { ok: true, value };
}

/**
 * Streamable HTTP for both protocol revisions from one server factory: 2026-07-28 through the
 * SDK's per-request handler, 2025-11-25 through sessions (src/mcp/sessions.ts). Everything in
 * front of them is ours: client address, Host and Origin (DNS rebinding), the bearer, the body
 * size, and refusing batches.
 */
export async function serveHttp(runtime: ServerRuntime, options: HttpOptions): Promise<HttpServer> {
  const max = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const names = new Set([
    ...LOOPBACK_NAMES,
    // The address the server is bound to is in the URL it prints (MAILWARDEN_HOST=127.0.0.2).
    bracketed(options.host.trim().toLowerCase()),
    ...(options.allowedHosts ?? []).map((h) => bracketed(h.trim().toLowerCase())),
  ]);
  const validOrigin = originValidation([...names]);
  const onerror = (e: Error): void => runtime.log.warn('http request failed', { error: String(e) });
  /**
   * The MCP handlers of one client: its own server factory over its own runtime, and its own
   * 2025-11-25 sessions, so a session id opened with one client's token is unknown to another's.
   */
  function handlersFor(scoped: ServerRuntime) {
    const factory = () => createMcpServer(scoped);
    const modern = createMcpHandler(factory, { legacy: 'reject', maxRequestBodySize: max, onerror });
    const sessions = new LegacySessions(
      factory,
      {
        idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
        maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
        maxBodyBytes: max,
      },
      onerror,
    );
    const route = {
      fetch: async (request: Request, opts?: McpHandlerRequestOptions): Promise<Response> => {
        const body = opts?.parsedBody;
        const legacy = await isLegacyRequest(request, body, { maxRequestBodySize: max });
        return legacy ? sessions.fetch(request, body) : modern.fetch(request, opts);
      },
    };
    const forward = toNodeHandler(route, { maxRequestBodySize: max, onerror });
    return { forward, close: () => Promise.all([modern.close(), sessions.close()]) };
  }
  const handlers = new Map<string, ReturnType<typeof handlersFor>>();
  const handlersOf = (client: HttpClient): ReturnType<typeof handlersFor> => {
    let h = handlers.get(client.key);
    if (h === undefined) {
      h = handlersFor(client.runtime);
      handlers.set(client.key, h);
    }
    return h;
  };
  const own: HttpClient = { key: '', runtime };
  const { token, allowedClients, authenticate } = options;
  const whoIs = async (req: IncomingMessage): Promise<HttpClient | undefined> => {
    if (authenticate !== undefined) return authenticate(req.headers.authorization);
    return token === undefined || bearerMatches(req.headers.authorization, token) ? own : undefined;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (allowedClients !== undefined && !clientAllowed(req.socket.remoteAddress, allowedClients))
      return refuseAndClose(req, res, 403, 'this client address is not allowed (MAILWARDEN_ALLOWED_CLIENTS)');
    const host = hostName(req.headers.host);
    if (host === undefined) return refuseAndClose(req, res, 400, 'Bad Request: malformed Host header');
    if (!names.has(host))
      return refuseAndClose(req, res, 403, `Invalid Host header: ${host} (MAILWARDEN_ALLOWED_HOSTS)`);
    if (!validOrigin(req, res)) return;
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (options.review !== undefined && (pathname === REVIEW_PATH || pathname.startsWith(`${REVIEW_PATH}/`)))
      return (await options.review()).handle(req, res);
    const client = await whoIs(req);
    if (client === undefined)
      return refuseAndClose(
        req,
        res,
        401,
        authenticate === undefined
          ? 'a valid bearer token is required (Authorization: Bearer $MAILWARDEN_TOKEN)'
          : 'a valid bearer token is required (Authorization: Bearer <MAILWARDEN_TOKEN or a token from `mailwarden clients add`>)',
        { 'www-authenticate': 'Bearer realm="mailwarden"' },
      );
    const { forward } = handlersOf(client);
    if (pathname !== MCP_PATH) return refuse(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
    const declared = Number(req.headers['content-length'] ?? '0');
    if (!Number.isFinite(declared) || declared > max) return tooLarge(req, res, max);
    // Counted as it streams: a chunked body declares no length.
    const body = await readBody(req, max);
    if (body === undefined) return tooLarge(req, res, max);
    if (req.method?.toUpperCase() !== 'POST') return forward(withBody(req, body), res);
    const parsed = parseBody(body);
    if (!parsed.ok) return refuse(res, 400, parsed.message, {}, parsed.code);
    await forward(withBody(req, body), res, parsed.value);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      onerror(e instanceof Error ? e : new Error(String(e)));
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.end();
    });
  });
  // No MCP request body takes long to send (at most 1 MB); these bound slow senders, not answers.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const port = await listenOn(server, options.port, options.host);
  return {
    url: `http://${bracketed(options.host)}:${port}${MCP_PATH}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.all([...handlers.values()].map((h) => h.close()));
      // Open SSE streams get a moment to finish, then are cut.
      const timer = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(timer);
    },
  };
}
