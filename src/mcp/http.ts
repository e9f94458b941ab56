import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import type { NodeIncomingMessageLike } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import ipaddr from 'ipaddr.js';
import { createMcpServer } from './server.js';
import type { ServerRuntime } from './server.js';

/** No MCP request mailwarden serves comes near this; a bigger body is refused unread. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const MCP_PATH = '/mcp';
/** Host and Origin names a loopback server answers to (DNS rebinding: any other name is refused). */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface HttpOptions {
  host: string;
  port: number;
  /** The bearer every request must present; undefined only when the operator allowed none. */
  token: string | undefined;
  /** Host/Origin names allowed beside the loopback names (MAILWARDEN_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Client addresses allowed (MAILWARDEN_ALLOWED_CLIENTS); undefined: any that can connect. */
  allowedClients?: readonly Cidr[] | undefined;
  maxBodyBytes?: number;
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
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
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

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Streamable HTTP for both protocol revisions: the SDK's handler serves 2026-07-28 per request
 * and 2025-11-25 through its stateless fallback, from one server factory. Everything in front of
 * it is ours: client address, Host and Origin (DNS rebinding), the bearer, and the body size.
 */
export async function serveHttp(runtime: ServerRuntime, options: HttpOptions): Promise<HttpServer> {
  const max = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const names = [
    ...LOOPBACK_NAMES,
    ...(options.allowedHosts ?? []).map((h) => bracketed(h.trim().toLowerCase())),
  ];
  const validHost = hostHeaderValidation(names);
  const validOrigin = originValidation(names);
  const onerror = (e: Error): void => runtime.log.warn('http request failed', { error: String(e) });
  const mcp = createMcpHandler(() => createMcpServer(runtime), { maxRequestBodySize: max, onerror });
  const forward = toNodeHandler(mcp, { maxRequestBodySize: max, onerror });
  const { token, allowedClients } = options;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (allowedClients !== undefined && !clientAllowed(req.socket.remoteAddress, allowedClients))
      return refuse(res, 403, 'this client address is not allowed (MAILWARDEN_ALLOWED_CLIENTS)');
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    if (token !== undefined && !bearerMatches(req.headers.authorization, token))
      return refuse(res, 401, 'a valid bearer token is required (Authorization: Bearer $MAILWARDEN_TOKEN)', {
        'www-authenticate': 'Bearer realm="mailwarden"',
      });
    if (new URL(req.url ?? '/', 'http://x').pathname !== MCP_PATH)
      return refuse(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
    const declared = Number(req.headers['content-length'] ?? '0');
    if (!Number.isFinite(declared) || declared > max) return tooLarge(req, res, max);
    // Counted as it streams: a chunked body declares no length.
    const body = await readBody(req, max);
    if (body === undefined) return tooLarge(req, res, max);
    await forward(withBody(req, body), res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      onerror(e instanceof Error ? e : new Error(String(e)));
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${bracketed(options.host)}:${port}${MCP_PATH}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await mcp.close();
      // Open SSE streams get a moment to finish, then are cut.
      const timer = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(timer);
    },
  };
}
