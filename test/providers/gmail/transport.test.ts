import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GmailMailbox } from '../../../src/providers/gmail/mailbox.js';
import { loopbackTransport } from '../../../src/providers/gmail/transport.js';
import type { Transport } from '../../../src/providers/gmail/transport.js';
import { CREDENTIALS } from './helpers.js';

describe('loopbackTransport', () => {
  it('refuses a base URL that is not loopback', () => {
    for (const base of [
      'http://example.com',
      'http://10.0.0.1:8080',
      'http://127.0.0.1.nip.io:9',
      'http://[::2]:9',
      'http://gmail.googleapis.com',
      'http://user:pw@127.0.0.1:9',
      'ftp://127.0.0.1',
      'not a url',
    ]) {
      expect(() => loopbackTransport(base), base).toThrow(/loopbackTransport/);
    }
  });

  it('accepts 127.0.0.0/8, ::1 and localhost, and rewrites only Google origins', async () => {
    const seen: string[] = [];
    const inner: Transport = (url) => {
      seen.push(url);
      return Promise.resolve(new Response('{}'));
    };
    for (const base of [
      'http://127.0.0.1:1234',
      'http://127.9.8.7:1',
      'http://[::1]:9',
      'http://localhost:9/',
    ]) {
      expect(() => loopbackTransport(base, inner)).not.toThrow();
    }
    const t = loopbackTransport('http://127.0.0.1:1234/', inner);
    await t('https://gmail.googleapis.com/gmail/v1/users/me/threads?q=a%20b', {});
    await t('https://oauth2.googleapis.com/token', { method: 'POST' });
    await expect(t('https://evil.example/gmail/v1/users/me/labels', {})).rejects.toThrow(/refusing/);
    await expect(t('https://gmail.googleapis.com.evil.example/x', {})).rejects.toThrow(/refusing/);
    expect(seen).toEqual([
      'http://127.0.0.1:1234/gmail/v1/users/me/threads?q=a%20b',
      'http://127.0.0.1:1234/token',
    ]);
  });
});

describe('a real fetch over loopback HTTP', () => {
  const hits: string[] = [];
  let base = '';
  const server = createServer((req, res) => {
    hits.push(`${req.method ?? ''} ${req.url ?? ''} ${req.headers.authorization ?? ''}`);
    res.setHeader('content-type', 'application/json');
    if (req.url === '/token') {
      res.end(JSON.stringify({ access_token: 'loop-token', expires_in: 3599 }));
    } else if (req.url === '/gmail/v1/users/me/profile') {
      res.end(
        JSON.stringify({
          emailAddress: 'demo@example.com',
          messagesTotal: 3,
          threadsTotal: 2,
          historyId: '41',
        }),
      );
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { code: 404, message: 'Requested entity was not found.' } }));
    }
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reaches the simulator with Google paths, the token first', async () => {
    const mailbox = new GmailMailbox({
      account: 'demo',
      credentials: CREDENTIALS,
      tiers: new Set(['read']),
      transport: loopbackTransport(base),
    });
    expect(await mailbox.getProfile()).toEqual({
      emailAddress: 'demo@example.com',
      messagesTotal: 3,
      threadsTotal: 2,
      historyId: '41',
    });
    expect(hits).toEqual(['POST /token ', 'GET /gmail/v1/users/me/profile Bearer loop-token']);
    expect(mailbox.usage()).toEqual({ requests: 2, quotaUnits: 1 });
    await mailbox.close();
  });
});
