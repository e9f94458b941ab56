import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/server';
import type { JSONRPCMessage, McpServer, RequestId } from '@modelcontextprotocol/server';

/**
 * 2025-11-25 over Streamable HTTP, with sessions (Mcp-Session-Id). The SDK's stateless fallback
 * builds a fresh server for every POST, so that server never learns the capabilities the client
 * declared at initialize, and an elicitation answer or a notifications/cancelled arrives at a
 * server that has no such request: confirmations were never asked and cancellation changed
 * nothing. Here one server serves one session from initialize to DELETE or idle expiry.
 */

export interface SessionLimits {
  /** A session with no request in flight for this long is ended. */
  idleMs: number;
  /** Open sessions at most; past it, the least recently used idle one is ended for a new one. */
  maxSessions: number;
  maxBodyBytes: number;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_SESSIONS = 32;

interface Session {
  id: string;
  /** SHA-256 of the bearer token that opened it: a session answers only to that token. */
  principal: Buffer;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  /** Client requests received and not yet answered; a session is never idle while one runs. */
  pending: Set<RequestId>;
}

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The bearer token a request presents (the scheme's case and spacing do not matter), hashed. */
const principalOf = (authorization: string | null): Buffer =>
  createHash('sha256')
    .update(/^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '', 'utf8')
    .digest();

export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly factory: () => McpServer,
    private readonly limits: SessionLimits,
    private readonly onerror: (e: Error) => void,
    private readonly now: () => number = Date.now,
  ) {
    const every = Math.max(250, Math.min(30_000, Math.floor(limits.idleMs / 2)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** One HTTP request of the 2025 era; `body` is the parsed POST body (never a batch). */
  async fetch(request: Request, body: unknown): Promise<Response> {
    const method = request.method.toUpperCase();
    const principal = principalOf(request.headers.get('authorization'));
    if (method === 'POST' && isInitializeRequest(body)) return this.open(request, body, principal);
    if (method === 'GET')
      // Everything mailwarden sends belongs to a request and goes on that request's stream.
      return jsonRpcError(405, -32000, 'Method not allowed: this server opens no standalone stream', {
        allow: 'POST, DELETE',
      });
    if (method !== 'POST' && method !== 'DELETE')
      return jsonRpcError(405, -32000, 'Method not allowed', { allow: 'POST, DELETE' });
    const id = request.headers.get('mcp-session-id');
    if (id === null || id === '')
      return jsonRpcError(
        400,
        -32000,
        'Bad Request: Mcp-Session-Id header is required (send initialize first)',
      );
    const session = this.sessions.get(id);
    // Another bearer's session is answered exactly like one that does not exist.
    if (session === undefined || !timingSafeEqual(session.principal, principal))
      return jsonRpcError(404, -32001, 'Session not found: it ended or expired; initialize a new one');
    session.lastSeen = this.now();
    return session.transport.handleRequest(request, body === undefined ? {} : { parsedBody: body });
  }

  private async open(request: Request, body: unknown, principal: Buffer): Promise<Response> {
    if (this.closed) return jsonRpcError(503, -32000, 'the server is shutting down');
    if (this.sessions.size >= this.limits.maxSessions && !this.evictOne())
      return jsonRpcError(
        503,
        -32000,
        `Too many open sessions (${this.limits.maxSessions}), all busy; end one with DELETE or retry later`,
        { 'retry-after': '5' },
      );
    const server = this.factory();
    const session: Session = {
      id: '',
      principal,
      server,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          this.sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          this.sessions.delete(id);
          void server.close().catch(() => undefined);
        },
        maxRequestBodySize: this.limits.maxBodyBytes,
      }),
      lastSeen: this.now(),
      pending: new Set(),
    };
    const { transport } = session;
    await server.connect(transport);
    this.track(session);
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (session.id === '' || !this.sessions.has(session.id)) await this.end(session);
    return response;
  }

  /** Counts the requests a session has in flight, from the messages that pass its transport. */
  private track(session: Session): void {
    const { transport } = session;
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      session.lastSeen = this.now();
      if (isJSONRPCRequest(message)) session.pending.add(message.id);
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        // A cancelled request gets no answer (MCP cancellation), so it stops counting here.
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) session.pending.delete(id);
      }
      deliver?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message: JSONRPCMessage, options) => {
      session.lastSeen = this.now();
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
        if (message.id !== undefined) session.pending.delete(message.id);
      }
      return send(message, options);
    };
  }

  /** Ends the least recently used session with nothing in flight; false when every one is busy. */
  private evictOne(): boolean {
    let oldest: Session | undefined;
    for (const s of this.sessions.values())
      if (s.pending.size === 0 && (oldest === undefined || s.lastSeen < oldest.lastSeen)) oldest = s;
    if (oldest === undefined) return false;
    void this.end(oldest);
    return true;
  }

  private sweep(): void {
    const now = this.now();
    for (const s of [...this.sessions.values()])
      if (s.pending.size === 0 && now - s.lastSeen >= this.limits.idleMs) void this.end(s);
  }

  private async end(session: Session): Promise<void> {
    if (session.id !== '') this.sessions.delete(session.id);
    try {
      await session.transport.close();
      await session.server.close();
    } catch (e) {
      this.onerror(e instanceof Error ? e : new Error(String(e)));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
  }
}
