import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../src/mail/clock.js';
import { serveHttp } from '../../src/mcp/http.js';
import type { HttpOptions, HttpServer } from '../../src/mcp/http.js';
import type { ServerRuntime } from '../../src/mcp/server.js';
import { ActionLog } from '../../src/policy/action-log.js';
import type { Mailbox } from '../../src/providers/mailbox.js';
import { defineTool } from '../../src/tools/common/define.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The 2025-11-25 sessions of the HTTP server, in process and over real loopback HTTP: how one
 * starts, what ends one (DELETE, idle expiry, the cap on open sessions), and that a session
 * answers only to the bearer token that opened it.
 */

const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  tier: 'read',
  access: 'read',
  description: 'test tool',
  input: z.strictObject({ text: z.string() }),
  output: z.object({ text: z.string() }),
  handle: (_ctx, args) => Promise.resolve({ text: args.text }),
});

/** A call that runs until the test lets it finish. */
let release: () => void = () => undefined;
const wait = defineTool({
  name: 'wait',
  title: 'Wait',
  tier: 'read',
  access: 'read',
  description: 'test tool',
  input: z.strictObject({}),
  output: z.object({ waited: z.boolean() }),
  handle: () => new Promise<{ waited: boolean }>((resolve) => (release = () => resolve({ waited: true }))),
});

const stub = new Proxy({} as Mailbox, {
  get(_t, prop) {
    if (prop === 'account') return 'probe';
    if (prop === 'then') return undefined;
    return () => Promise.resolve({});
  },
});

function runtime(): ServerRuntime {
  return {
    tools: [echo, wait],
    tiers: new Set(['read']),
    mailbox: () => Promise.resolve(stub),
    actionLog: new ActionLog(join(tempDir('mailwarden-sessions-'), 'log.jsonl')),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
  };
}

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Partial<HttpOptions> = {}): Promise<HttpServer> {
  server = await serveHttp(runtime(), { host: '127.0.0.1', port: 0, token: undefined, ...options });
  return server;
}

interface Answer {
  status: number;
  session: string | null;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
}

async function rpc(
  url: string,
  message: Record<string, unknown> | undefined,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    ...(message === undefined ? {} : { body: JSON.stringify(message) }),
  });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  return {
    status: res.status,
    session: res.headers.get('mcp-session-id'),
    body: data === '' ? undefined : (JSON.parse(data) as Answer['body']),
  };
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};

/** initialize + notifications/initialized: the session id a client would then use. */
async function open(url: string, bearer = 'alice'): Promise<string> {
  const auth = { authorization: `Bearer ${bearer}` };
  const init = await rpc(url, INIT, auth);
  expect(init.status).toBe(200);
  expect(init.session).not.toBeNull();
  const session = init.session ?? '';
  const done = await rpc(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    {
      ...auth,
      'mcp-session-id': session,
    },
  );
  expect(done.status).toBe(202);
  return session;
}

let nextId = 10;
const echoCall = (url: string, session: string, bearer = 'alice') =>
  rpc(
    url,
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' } },
    },
    { authorization: `Bearer ${bearer}`, 'mcp-session-id': session },
  );

describe('2025-11-25 sessions over HTTP', () => {
  it('initialize opens a session that later requests use; a request without one is 400, an unknown one 404', async () => {
    const { url } = await start();
    const session = await open(url);
    const ok = await echoCall(url, session);
    expect(ok.status).toBe(200);
    expect(ok.body?.result?.['structuredContent']).toEqual({ text: 'hi' });
    const missing = await rpc(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { authorization: 'Bearer alice' },
    );
    expect(missing.status).toBe(400);
    expect(missing.body?.error?.message).toMatch(/Mcp-Session-Id/);
    const unknown = await echoCall(url, '00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });

  it('DELETE ends a session', async () => {
    const { url } = await start();
    const session = await open(url);
    const del = await rpc(
      url,
      undefined,
      { authorization: 'Bearer alice', 'mcp-session-id': session },
      'DELETE',
    );
    expect(del.status).toBe(200);
    expect((await echoCall(url, session)).status).toBe(404);
  });

  it('answers only to the bearer token that opened it', async () => {
    const { url } = await start();
    const session = await open(url, 'alice');
    expect((await echoCall(url, session, 'mallory')).status).toBe(404);
    const del = await rpc(
      url,
      undefined,
      { authorization: 'Bearer mallory', 'mcp-session-id': session },
      'DELETE',
    );
    expect(del.status).toBe(404);
    // Still alice's, and still open.
    expect((await echoCall(url, session, 'alice')).status).toBe(200);
  });

  it('a session idle past its expiry is ended', async () => {
    const { url } = await start({ sessionIdleMs: 400 });
    const session = await open(url);
    expect((await echoCall(url, session)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await echoCall(url, session)).status).toBe(404);
  });

  it('at the cap, a new session ends the least recently used idle one', async () => {
    const { url } = await start({ maxSessions: 2 });
    const first = await open(url);
    const second = await open(url);
    // first is used again, so second is now the least recently used.
    expect((await echoCall(url, first)).status).toBe(200);
    const third = await open(url);
    expect((await echoCall(url, second)).status).toBe(404);
    expect((await echoCall(url, first)).status).toBe(200);
    expect((await echoCall(url, third)).status).toBe(200);
  });

  it('a session with a call in flight is neither expired nor evicted; a full server says 503', async () => {
    const { url } = await start({ maxSessions: 1, sessionIdleMs: 300 });
    const busy = await open(url);
    const running = rpc(
      url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'wait', arguments: {} } },
      { authorization: 'Bearer alice', 'mcp-session-id': busy },
    );
    await new Promise((r) => setTimeout(r, 900));
    const refused = await rpc(url, INIT, { authorization: 'Bearer alice' });
    expect(refused.status).toBe(503);
    expect(refused.body?.error?.message).toMatch(/Too many open sessions/);
    release();
    const done = await running;
    expect(done.body?.result?.['structuredContent']).toEqual({ waited: true });
    expect((await echoCall(url, busy)).status).toBe(200);
  });

  it('GET opens no standalone stream (405), since every message belongs to a request', async () => {
    const { url } = await start();
    const session = await open(url);
    const get = await fetch(url, {
      headers: { accept: 'text/event-stream', authorization: 'Bearer alice', 'mcp-session-id': session },
    });
    expect(get.status).toBe(405);
    await get.body?.cancel();
  });
});
