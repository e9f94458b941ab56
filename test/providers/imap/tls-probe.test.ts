import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchServerCertificate } from '../../../src/providers/imap/tls.js';
import { startDovecot } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';

/*
 * `--pin-from-server` fetches the certificate a server presents. When the options do not fit the
 * port, the failure says why and which option fixes it, on a real Dovecot: STARTTLS against the
 * implicit-TLS port (no greeting ever comes) fails in seconds, not after the whole probe; TLS
 * against the plain port names --starttls; a closed port says nothing listens there.
 */

describe('the certificate probe names the fix', () => {
  let server: DovecotServer;
  beforeAll(async () => {
    server = await startDovecot({ profile: 'full' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('--starttls against the implicit-TLS port: use --tls, said within a few seconds', async () => {
    const err = await fetchServerCertificate(server.host, server.tlsPort, 'starttls').catch((e: Error) => e);
    expect(String((err as Error).message)).toContain('use --tls instead of --starttls');
    // The greeting wait (5 s) answered, not the whole probe's 15 s.
    expect(String((err as Error).message)).toContain('sent no IMAP greeting within 5 s');
  }, 20_000);

  it('--tls against the plain port: use --starttls', async () => {
    const err = await fetchServerCertificate(server.host, server.plainPort, 'tls').catch((e: Error) => e);
    expect(String((err as Error).message)).toContain('use --starttls instead of --tls');
  }, 20_000);

  it('a closed port: nothing is listening, check --host and --port', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const err = await fetchServerCertificate('127.0.0.1', port, 'starttls').catch((e: Error) => e);
    expect(String((err as Error).message)).toContain('nothing is listening on 127.0.0.1:');
    expect(String((err as Error).message)).toContain('check --host and --port');
  });

  it('the right options still fetch the certificate', async () => {
    const cert = await fetchServerCertificate(server.host, server.tlsPort, 'tls');
    expect(cert.sha256).toBe(server.certSha256);
  }, 20_000);
});
