import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startHttp } from '../helpers/interop.js';
import type { HttpProcess } from '../helpers/interop.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/** HTTP edges of `mailwarden http`, against the built server as a user starts it. */

const TOKEN = 'edges-token-0123456789abcdef0123456789abcdef';

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDir('mailwarden-edges-');
  return { HOME: dir, MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOKEN: TOKEN, ...extra };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

/** node:http, since fetch will not send a Host header of our choosing. */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(INIT);
  });
}

describe('mailwarden http --demo', () => {
  let s: HttpProcess;
  beforeAll(async () => {
    s = await startHttp(env(), ['--demo']);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('answers 400, not 500, to a Host header with userinfo or other URL parts', async () => {
    for (const host of [
      'evil.example@localhost',
      `evil.example@127.0.0.1:${new URL(s.url).port}`,
      'localhost/x',
      'a b',
    ]) {
      const r = await post(s.url, { host });
      expect(r.status, host).toBe(400);
      expect(JSON.parse(r.body)).toMatchObject({ error: { message: expect.stringMatching(/Host/) } });
    }
    // The server is unharmed and still serves a proper Host.
    expect((await post(s.url, {})).status).toBe(200);
  });

  it('closes the socket of an unauthenticated request right after the 401, however slowly it sends', async () => {
    const { port, hostname } = new URL(s.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    );
    const started = Date.now();
    // A byte every 100 ms: a client that would otherwise hold the socket for minutes.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 100);
    socket.on('error', () => undefined);
    try {
      const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
      expect(received).toMatch(/^HTTP\/1\.1 401/);
      expect(received.toLowerCase()).toContain('connection: close');
      expect(at).toBeGreaterThan(0);
      expect(at - started).toBeLessThan(3_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });
});

describe('MAILWARDEN_HOST=127.0.0.2', () => {
  it('prints a URL on that address and serves it, to raw requests and to an SDK client', async () => {
    const s = await startHttp(env({ MAILWARDEN_HOST: '127.0.0.2' }), ['--demo']);
    try {
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/mcp$/);
      expect((await post(s.url, {})).status).toBe(200);
      const c = await connectClient('v1', 'http', { env: {}, http: { url: s.url, token: TOKEN } });
      try {
        const r = await c.call('get_profile');
        expect(r.isError, r.text).toBe(false);
      } finally {
        await c.close();
      }
      // Other loopback names stay refused: only the bound address joins the allowed ones.
      expect((await post(s.url, { host: `127.0.0.3:${new URL(s.url).port}` })).status).toBe(403);
    } finally {
      await s.stop();
    }
  });
});

describe('session limits from the environment', () => {
  it('a bad MAILWARDEN_MAX_SESSIONS or MAILWARDEN_SESSION_IDLE_SECONDS stops the start, naming it', () => {
    for (const [name, value] of [
      ['MAILWARDEN_MAX_SESSIONS', 'lots'],
      ['MAILWARDEN_SESSION_IDLE_SECONDS', '0'],
    ] as const) {
      const r = spawnSync(process.execPath, [MAIN, 'http', '--demo', '--port', '0'], {
        env: { PATH: process.env['PATH'] ?? '', ...env({ [name]: value }) },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status, name).not.toBe(0);
      expect(r.stderr).toContain(name);
    }
  });

  it('MAILWARDEN_SESSION_IDLE_SECONDS ends an idle 2025-11-25 session', async () => {
    const s = await startHttp(env({ MAILWARDEN_SESSION_IDLE_SECONDS: '1' }), ['--demo']);
    try {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
      };
      const init = await fetch(s.url, { method: 'POST', headers, body: INIT });
      await init.text();
      const session = init.headers.get('mcp-session-id') ?? '';
      expect(session).not.toBe('');
      const list = () =>
        fetch(s.url, {
          method: 'POST',
          headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        });
      const first = await list();
      await first.text();
      expect(first.status).toBe(200);
      await new Promise((r) => setTimeout(r, 2_500));
      const later = await list();
      await later.text();
      expect(later.status).toBe(404);
    } finally {
      await s.stop();
    }
  });
});
