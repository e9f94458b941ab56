import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMailError } from '../../../src/mail/errors.js';
import type { MailError } from '../../../src/mail/errors.js';
import { openImapSession } from '../../../src/providers/imap/connection.js';
import type { ImapSessionOptions } from '../../../src/providers/imap/connection.js';
import type { ImapSettings } from '../../../src/providers/imap/settings.js';
import {
  fetchServerCertificate,
  isLoopbackHost,
  normalizeSha256,
  readPinCertFile,
} from '../../../src/providers/imap/tls.js';
import { appendMessage, startDovecot, startImapProxy } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer, ImapProxy } from '../../../src/sandbox/imap/index.js';
import { tempDir } from '../../helpers/temp.js';

/** The transport against a real Dovecot: trust, pooling, timeouts and dropped connections. */

let server: DovecotServer;
let other: DovecotServer;

beforeAll(async () => {
  [server, other] = await Promise.all([startDovecot({ profile: 'full' }), startDovecot({ profile: 'full' })]);
  for (let i = 1; i <= 3; i++)
    await appendMessage(
      server,
      'INBOX',
      `From: a${i}@example.com\r\nTo: alice@example.com\r\nSubject: message ${i}\r\n\r\n${'body line\r\n'.repeat(200)}`,
    );
});
afterAll(async () => {
  await Promise.all([server.stop(), other.stop()]);
});

const pinned = (s: DovecotServer, security: 'tls' | 'starttls' = 'tls'): ImapSettings => ({
  host: s.host,
  port: security === 'tls' ? s.tlsPort : s.plainPort,
  security,
  user: s.user,
  pinSha256: s.certSha256,
  pinCertPem: s.certPem,
});

async function failure(p: Promise<unknown>): Promise<MailError> {
  try {
    await p;
  } catch (e) {
    if (isMailError(e)) return e;
    throw e;
  }
  throw new Error('expected a MailError');
}

const examine = async (client: ImapFlow): Promise<number> =>
  (await client.mailboxOpen('INBOX', { readOnly: true })).exists;

async function fetchAll(client: ImapFlow): Promise<number> {
  await client.mailboxOpen('INBOX', { readOnly: true });
  let n = 0;
  for await (const m of client.fetch('1:*', { source: true })) if (m.source !== undefined) n++;
  return n;
}

describe('certificate trust', () => {
  it('a pinned TLS connection logs in and reads; capabilities come from the authenticated connection', async () => {
    const session = openImapSession(pinned(server), server.password);
    expect(await session.use(examine, { retry: true })).toBe(3);
    expect(session.capabilities().has('IMAP4REV1')).toBe(true);
    expect(session.capabilities().has('MOVE')).toBe(true);
    expect(session.commands()).toBeGreaterThanOrEqual(3);
    await session.close();
  });

  it('a pinned STARTTLS connection works', async () => {
    const session = openImapSession(pinned(server, 'starttls'), server.password);
    expect(await session.use(examine, { retry: true })).toBe(3);
    expect(session.capabilities().has('STARTTLS')).toBe(false);
    await session.close();
  });

  it('another self-signed certificate fails the pin, naming both fingerprints, TLS and STARTTLS', async () => {
    for (const security of ['tls', 'starttls'] as const) {
      // Pinned to `other`'s certificate: the chain check fails before the fingerprint is compared.
      const settings = { ...pinned(other, security), port: pinned(server, security).port };
      const session = openImapSession(settings, server.password, { account: 'bridge' });
      const e = await failure(session.use(examine, { retry: true }));
      expect(e.code).toBe('forbidden_operation');
      expect(e.message).toContain(other.certSha256);
      expect(e.message).toContain(server.certSha256);
      expect(e.message).toContain('mailwarden accounts add bridge --imap … --pin-from-server');
      expect(e.message).toContain('otherwise something else is listening on the Bridge port');
      expect(e.message).not.toContain(server.password);
      await session.close();
    }
  });

  it('a wrong fingerprint with the right chain fails in checkServerIdentity, before LOGIN', async () => {
    const wrong = 'ab'.repeat(32);
    const session = openImapSession({ ...pinned(server), pinSha256: wrong }, server.password);
    const e = await failure(session.use(examine, { retry: true }));
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toContain(wrong);
    expect(e.message).toContain(server.certSha256);
    expect(session.commands()).toBe(0);
    await session.close();
  });

  it('without a pin, the self-signed certificate fails normal verification', async () => {
    const { pinSha256: _p, pinCertPem: _c, ...plain } = pinned(server);
    const session = openImapSession(plain, server.password, { account: 'home' });
    const e = await failure(session.use(examine, { retry: true }));
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toMatch(/not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);
    expect(e.message).toContain('--pin-from-server');
    await session.close();
  });

  it('fetchServerCertificate reads the certificate over TLS and STARTTLS; --pin-cert reads a PEM file', async () => {
    const viaTls = await fetchServerCertificate(server.host, server.tlsPort, 'tls');
    const viaStarttls = await fetchServerCertificate(server.host, server.plainPort, 'starttls');
    expect(viaTls.sha256).toBe(server.certSha256);
    expect(viaStarttls.sha256).toBe(server.certSha256);
    expect(viaTls.pem).toContain('BEGIN CERTIFICATE');
    const file = join(tempDir('mailwarden-pin-'), 'cert.pem');
    writeFileSync(file, server.certPem);
    expect((await readPinCertFile(file)).sha256).toBe(server.certSha256);
    await expect(fetchServerCertificate(server.host, server.plainPort, 'insecure-loopback')).rejects.toThrow(
      /no certificate/,
    );
    const colons = server.certSha256.toUpperCase().replace(/(..)(?!$)/g, '$1:');
    expect(normalizeSha256(colons, '--pin-sha256')).toBe(server.certSha256);
    expect(() => normalizeSha256('abc', '--pin-sha256')).toThrow(/64 hex digits/);
  });
});

describe('login and plain IMAP', () => {
  it('a wrong password is needs_reauth, says how to store a new one, and never shows the password', async () => {
    // On `other`: Dovecot slows later logins from an address that failed one (auth_penalty).
    const session = openImapSession(pinned(other), 'not-the-password', { account: 'bridge' });
    const e = await failure(session.use(examine, { retry: true }));
    expect(e.code).toBe('needs_reauth');
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('mailwarden accounts add bridge --imap');
    expect(e.message).not.toContain('not-the-password');
    await session.close();
  });

  it('plain IMAP only to loopback: refused for any other host before connecting', async () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('::ffff:127.0.0.2')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('192.0.2.1')).toBe(false);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
    const settings: ImapSettings = { host: '192.0.2.1', port: 143, security: 'insecure-loopback', user: 'x' };
    const session = openImapSession(settings, 'pw');
    const e = await failure(session.use(examine, { retry: true }));
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toContain('the password would cross the network in clear');
    await session.close();
  });

  it('connection refused is a network_error naming the address', async () => {
    const settings: ImapSettings = { host: '127.0.0.1', port: 1, security: 'insecure-loopback', user: 'x' };
    const session = openImapSession(settings, 'pw');
    const e = await failure(session.use(examine, { retry: true }));
    expect(e.code).toBe('network_error');
    expect(e.message).toContain('nothing is listening on 127.0.0.1:1');
    await session.close();
  });
});

describe('the pool', () => {
  it('reuses one login for several calls and serialises them', async () => {
    const session = openImapSession(pinned(server), server.password);
    await session.use(examine, { retry: true });
    const afterFirst = session.commands();
    const order: string[] = [];
    const call = (name: string) =>
      session.use(
        async (client) => {
          order.push(`${name} start`);
          await client.noop();
          await new Promise((r) => setTimeout(r, 30));
          order.push(`${name} end`);
        },
        { retry: true },
      );
    await Promise.all([call('a'), call('b')]);
    expect(order).toEqual(['a start', 'a end', 'b start', 'b end']);
    expect(session.logins()).toBe(1);
    expect(session.commands()).toBe(afterFirst + 2);
    await session.close();
  });

  it('closes an idle connection (LOGOUT) and logs in again on the next call', async () => {
    const session = openImapSession(pinned(server), server.password, { idleMs: 150 });
    await session.use(examine, { retry: true });
    const before = session.commands();
    await new Promise((r) => setTimeout(r, 400));
    expect(session.commands()).toBe(before + 1);
    expect(await session.use(examine, { retry: true })).toBe(3);
    expect(session.logins()).toBe(2);
    await session.close();
  });

  it('a pooled connection outlives the command watchdog (socketTimeout) while idle', async () => {
    const session = openImapSession(pinned(server), server.password, { socketTimeoutMs: 300, idleMs: 5_000 });
    await session.use(examine, { retry: true });
    await new Promise((r) => setTimeout(r, 700));
    expect(await session.use(examine, { retry: true })).toBe(3);
    expect(session.logins()).toBe(1);
    await session.close();
  });

  it('a connection the server drops between calls is replaced without an error', async () => {
    const session = openImapSession(pinned(server), server.password);
    await session.use(examine, { retry: false });
    await server.doveadm(['kick', server.user]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await session.use(examine, { retry: false })).toBe(3);
    expect(session.logins()).toBe(2);
    await session.close();
  });
});

describe('faults (plain IMAP through a proxy)', () => {
  let proxy: ImapProxy;
  beforeAll(async () => {
    proxy = await startImapProxy({ target: { host: server.host, port: server.plainPort } });
  });
  afterAll(async () => {
    await proxy.stop();
  });
  const viaProxy = (options: ImapSessionOptions = {}) =>
    openImapSession(
      { host: proxy.host, port: proxy.port, security: 'insecure-loopback', user: server.user },
      server.password,
      options,
    );

  it('a drop mid-FETCH: a read reconnects once and succeeds', async () => {
    proxy.setFaults([{ kind: 'drop-midresponse', when: /FETCH/, afterBytes: 600 }]);
    const session = viaProxy();
    expect(await session.use(fetchAll, { retry: true })).toBe(3);
    expect(session.logins()).toBe(2);
    await session.close();
  });

  it('a drop mid-FETCH: a write is rejected as outcome unknown, not retried', async () => {
    proxy.setFaults([{ kind: 'drop-midresponse', when: /FETCH/, afterBytes: 600 }]);
    const session = viaProxy();
    const e = await failure(session.use(fetchAll, { retry: false }));
    expect(e.code).toBe('network_error');
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('outcome is unknown');
    expect(session.logins()).toBe(1);
    // The next call connects afresh.
    proxy.setFaults([]);
    expect(await session.use(fetchAll, { retry: false })).toBe(3);
    await session.close();
  });

  it('a server that never answers: the deadline rejects in time, closes the socket, and the session recovers', async () => {
    const sockets = (): number =>
      process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    const baseline = sockets();
    proxy.setFaults([{ kind: 'hang', when: /FETCH/ }]);
    const session = viaProxy({ deadlineMs: 800 });
    const started = Date.now();
    const e = await failure(session.use(fetchAll, { retry: true }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(e.code).toBe('upstream_unavailable');
    expect(e.message).toContain('did not finish within 0.8 s');
    proxy.setFaults([{ kind: 'hang', when: /FETCH/ }]);
    const write = await failure(session.use(fetchAll, { retry: false }));
    expect(write.message).toContain('outcome of the change is unknown');
    proxy.setFaults([]);
    expect(await session.use(fetchAll, { retry: true })).toBe(3);
    await session.close();
    // Every socket of the session (and the proxy's side of it) is gone.
    await new Promise((r) => setTimeout(r, 100));
    expect(sockets()).toBeLessThanOrEqual(baseline);
  });

  it('an aborted call rejects at once and leaves the session usable', async () => {
    proxy.setFaults([{ kind: 'hang', when: /FETCH/ }]);
    const session = viaProxy();
    const controller = new AbortController();
    const pending = session.use(fetchAll, { retry: true, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await failure(pending)).message).toContain('cancelled');
    proxy.setFaults([]);
    expect(await session.use(fetchAll, { retry: true })).toBe(3);
    await session.close();
  });
});
