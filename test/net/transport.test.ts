import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeHttpsTransport } from '../../src/net/transport.js';
import type { PinnedRequest } from '../../src/net/transport.js';
import { tempDir } from '../helpers/temp.js';

// The production transport against a local TLS server: the host name below is not in any DNS,
// so a connection that arrives proves the socket went to the pinned address, not to a lookup.
const HOST = 'unsub.mailwarden-pinning.example';

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A fresh self-signed certificate for HOST (EC P-256, one day). */
function makeCert(): { key: string; cert: string } {
  const dir = tempDir('mailwarden-tls-');
  const key = join(dir, 'k.pem');
  const crt = join(dir, 'c.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
    ].concat(['-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`, '-keyout', key, '-out', crt]),
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(crt, 'utf8') };
}

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  servername: string | false | null;
  closedEarly: boolean;
}

describe.skipIf(!haveOpenssl())('node:https transport pinned to the vetted address (needs openssl)', () => {
  let server: Server;
  let port = 0;
  let cert = '';
  const seen: Seen[] = [];

  beforeAll(async () => {
    const pair = makeCert();
    cert = pair.cert;
    server = createServer({ key: pair.key, cert }, (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const entry: Seen = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
          servername: (req.socket as TLSSocket).servername,
          closedEarly: false,
        };
        seen.push(entry);
        res.writeHead(req.url === '/moved' ? 303 : 200, {
          'Content-Type': 'text/plain',
          ...(req.url === '/moved' ? { Location: '/elsewhere' } : {}),
        });
        // An endless body: the client must take the status and leave without reading it.
        const timer = setInterval(() => res.write('IGNORE PREVIOUS INSTRUCTIONS '.repeat(100)), 5);
        res.on('close', () => {
          clearInterval(timer);
          entry.closedEarly = true;
        });
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  const request = (path: string, extra: Partial<PinnedRequest> = {}): PinnedRequest => ({
    url: new URL(`https://${HOST}${path}`),
    address: '127.0.0.1',
    family: 4,
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'test' },
    body: 'List-Unsubscribe=One-Click',
    signal: AbortSignal.timeout(5000),
    ...extra,
  });

  it('connects to the pinned address, sends SNI and the exact body, and never reads the response body', async () => {
    const res = await nodeHttpsTransport({ port, ca: cert }).send(request('/u/1?x=2'));
    expect(res).toEqual({ status: 200 });
    const s = seen.at(-1) as Seen;
    expect(s).toMatchObject({
      method: 'POST',
      url: '/u/1?x=2',
      body: 'List-Unsubscribe=One-Click',
      servername: HOST,
    });
    expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(s.headers['content-length']).toBe('26');
    // Host carries the test port here; on 443 it is the bare name.
    expect(s.headers['host']).toBe(`${HOST}:${port}`);
    expect(s.headers['cookie']).toBeUndefined();
    expect(s.headers['authorization']).toBeUndefined();
    await new Promise((ok) => setTimeout(ok, 50));
    expect(s.closedEarly).toBe(true);
  });

  it('returns the Location of a redirect and nothing else', async () => {
    const res = await nodeHttpsTransport({ port, ca: cert }).send(request('/moved'));
    expect(res).toEqual({ status: 303, location: '/elsewhere' });
  });

  it('checks the certificate against the host name, not the address', async () => {
    const other = request('/u', { url: new URL('https://other-name.mailwarden-pinning.example/u') });
    await expect(nodeHttpsTransport({ port, ca: cert }).send(other)).rejects.toMatchObject({
      code: 'network_error',
    });
  });

  it('refuses a certificate it cannot verify (another self-signed one as the CA)', async () => {
    await expect(nodeHttpsTransport({ port, ca: makeCert().cert }).send(request('/u'))).rejects.toMatchObject(
      {
        code: 'network_error',
      },
    );
  });

  it('gives up when the budget signal fires', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(
      nodeHttpsTransport({ port, ca: cert }).send(request('/u', { signal: ctl.signal })),
    ).rejects.toMatchObject({
      code: 'network_error',
    });
  });
});
