import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';
import type { Protocol } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';

interface Served {
  url: string;
  proc: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
}

function baseEnv(extra: Record<string, string>): Record<string, string> {
  const dir = tempDir('mailwarden-http-');
  return { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir, ...extra };
}

/** The built server as a user starts it: `mailwarden http --demo --port 0`, URL read from stderr. */
async function serve(extra: Record<string, string>): Promise<Served> {
  const proc = spawn(process.execPath, [MAIN, 'http', '--demo', '--port', '0'], {
    env: baseEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${err}`)), 30_000);
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /MCP over Streamable HTTP at (http:\/\/\S+)/.exec(err);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exit.then((code) => reject(new Error(`server exited ${String(code)}: ${err}`)));
  });
  return { url, proc, stderr: () => err, exit };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

/** node:http rather than fetch: fetch will not send a Host header of our choosing. */
function post(url: string, headers: OutgoingHttpHeaders, body: string | Buffer = INIT): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A chunked body that never declares its length; stops writing once the server has answered. */
function postStreamed(url: string, totalBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    req.on('response', (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < totalBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe('mailwarden http: start-up', () => {
  it('refuses to start without MAILWARDEN_TOKEN', () => {
    const r = spawnSync(process.execPath, [MAIN, 'http', '--demo', '--port', '0'], {
      env: baseEnv({}),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('MAILWARDEN_TOKEN is not set');
    expect(r.stderr).toContain('MAILWARDEN_ALLOW_NO_TOKEN=1');
  });
});

describe('mailwarden http --demo', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ MAILWARDEN_TOKEN: TOKEN });
  });
  afterAll(async () => {
    if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
    await s.exit;
  });

  it('binds loopback and prints its URL to stderr', () => {
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('warns at start that the file-writing tools refuse while MAILWARDEN_DOWNLOAD_DIR is unset', () => {
    expect(s.stderr()).toContain('the manage tier is on but MAILWARDEN_DOWNLOAD_DIR is unset');
  });

  it('answers 401 without a bearer, with a wrong one, and with a wrong scheme', async () => {
    const none = await post(s.url, {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await post(s.url, { authorization: `Bearer ${TOKEN.slice(0, -1)}x` })).status).toBe(401);
    expect((await post(s.url, { authorization: 'Bearer short' })).status).toBe(401);
    expect((await post(s.url, { authorization: `Basic ${TOKEN}` })).status).toBe(401);
  });

  it('serves a correct bearer', async () => {
    const ok = await post(s.url, auth);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('"protocolVersion":"2025-11-25"');
  });

  it('answers 403 to a foreign Host or Origin (DNS rebinding), token or not', async () => {
    expect((await post(s.url, { ...auth, host: 'evil.example' })).status).toBe(403);
    expect((await post(s.url, { ...auth, host: 'localhost.evil.example:80' })).status).toBe(403);
    expect((await post(s.url, { ...auth, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(s.url, { ...auth, origin: 'http://localhost:3000' })).status).toBe(200);
  });

  it('answers 413 to a body over 1 MB, declared or streamed', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    expect((await post(s.url, auth, big)).status).toBe(413);
    expect(await postStreamed(s.url, 2 * 1024 * 1024)).toBe(413);
    // The server is still fine afterwards.
    expect((await post(s.url, auth)).status).toBe(200);
  });

  it('answers 404 off the MCP path', async () => {
    expect((await post(s.url.replace(/\/mcp$/, '/other'), auth)).status).toBe(404);
  });

  for (const protocol of ['2025-11-25', '2026-07-28'] as Protocol[]) {
    it(`serves a full SDK client session in ${protocol}`, async () => {
      const client = new Client(
        { name: 'mailwarden-http-test', version: '0' },
        { versionNegotiation: { mode: protocol === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' } },
      );
      const transport = new StreamableHTTPClientTransport(new URL(s.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      });
      await client.connect(transport);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(protocol);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['search', 'get_profile', 'list_accounts']),
        );
        const profile = await client.callTool({ name: 'get_profile', arguments: {} });
        expect(profile.isError).not.toBe(true);
        expect(profile.structuredContent).toMatchObject({ account: 'demo', emailAddress: DEMO_ADDRESS });
        const found = await client.callTool({
          name: 'search',
          arguments: { query: 'in:inbox', maxResults: 3 },
        });
        expect((found.structuredContent as { threads: unknown[] }).threads).toHaveLength(3);
      } finally {
        await client.close();
      }
    });
  }

  it('shuts down cleanly on SIGTERM', async () => {
    s.proc.kill('SIGTERM');
    expect(await s.exit).toBe(0);
  });
});

describe('MAILWARDEN_ALLOWED_CLIENTS', () => {
  it('refuses a client address outside the ranges with 403', async () => {
    const s = await serve({
      MAILWARDEN_TOKEN: TOKEN,
      MAILWARDEN_ALLOWED_CLIENTS: '10.0.0.0/8, 192.168.0.0/16',
    });
    try {
      expect((await post(s.url, auth)).status).toBe(403);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exit;
    }
  });

  it('serves one inside them; MAILWARDEN_ALLOW_NO_TOKEN=1 serves without a bearer', async () => {
    const s = await serve({
      MAILWARDEN_ALLOW_NO_TOKEN: '1',
      MAILWARDEN_ALLOWED_CLIENTS: '::ffff:127.0.0.0/104',
    });
    try {
      expect(s.stderr()).toContain('without a bearer token');
      expect((await post(s.url, {})).status).toBe(200);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exit;
    }
  });
});
