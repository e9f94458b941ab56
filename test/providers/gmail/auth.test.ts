import { describe, expect, it } from 'vitest';
import { MailError } from '../../../src/mail/errors.js';
import { reauthMessage } from '../../../src/providers/gmail/auth.js';
import {
  CREDENTIALS,
  TOKEN_URL,
  codeOf,
  fakeTime,
  json,
  makeClient,
  recordingTransport,
  rejection,
  tokenOk,
} from './helpers.js';

const PROFILE = { emailAddress: 'a@example.com', messagesTotal: 1, threadsTotal: 1, historyId: '7' };

describe('access tokens', () => {
  it('concurrent calls share one refresh', async () => {
    const rec = recordingTransport(async (req) => {
      if (req.url !== TOKEN_URL) return json(200, PROFILE);
      await new Promise((r) => setTimeout(r, 10));
      return tokenOk('tok-shared');
    });
    const client = makeClient(['read'], rec.transport);
    const results = await Promise.all(Array.from({ length: 5 }, () => client.call('users.getProfile')));
    expect(results).toEqual(Array.from({ length: 5 }, () => PROFILE));
    expect(rec.sent.filter((s) => s.url === TOKEN_URL)).toHaveLength(1);
    expect(rec.gmail().every((s) => s.headers['authorization'] === 'Bearer tok-shared')).toBe(true);
  });

  it('sends a refresh_token grant as a form through the transport', async () => {
    const rec = recordingTransport();
    await makeClient(['read'], rec.transport).call('users.getProfile');
    const token = rec.sent.find((s) => s.url === TOKEN_URL);
    expect(token?.method).toBe('POST');
    expect(token?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(token?.body ?? ''))).toEqual({
      grant_type: 'refresh_token',
      client_id: CREDENTIALS.clientId,
      client_secret: CREDENTIALS.clientSecret,
      refresh_token: CREDENTIALS.refreshToken,
    });
  });

  it('reuses the token until about 60 s before it expires', async () => {
    const rec = recordingTransport((req, n) =>
      req.url === TOKEN_URL ? tokenOk(`tok-${n.token}`, 3600) : json(200, PROFILE),
    );
    const time = fakeTime();
    const client = makeClient(['read'], rec.transport, { clock: time.clock, sleep: time.sleep });
    await client.call('users.getProfile');
    time.clock.advance(3539_000);
    await client.call('users.getProfile');
    expect(rec.sent.filter((s) => s.url === TOKEN_URL)).toHaveLength(1);
    time.clock.advance(2_000);
    await client.call('users.getProfile');
    expect(rec.sent.filter((s) => s.url === TOKEN_URL)).toHaveLength(2);
    expect(rec.gmail().at(-1)?.headers['authorization']).toBe('Bearer tok-2');
  });

  it('invalid_grant → needs_reauth pointing at `mailwarden auth`, and no Gmail request', async () => {
    const rec = recordingTransport((req) =>
      req.url === TOKEN_URL
        ? json(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' })
        : json(200, PROFILE),
    );
    const client = makeClient(['read'], rec.transport);
    const e = await client.call('users.getProfile').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MailError);
    expect((e as MailError).code).toBe('needs_reauth');
    expect((e as MailError).message).toMatch(/mailwarden auth/);
    expect((e as MailError).message).toMatch(/expired or revoked/);
    expect(rec.gmail()).toHaveLength(0);
  });

  it('other token errors → not_authorized', async () => {
    const rec = recordingTransport((req) =>
      req.url === TOKEN_URL
        ? json(401, { error: 'invalid_client', error_description: 'Unauthorized' })
        : json(200, {}),
    );
    expect(await codeOf(makeClient(['read'], rec.transport).call('users.getProfile'))).toBe('not_authorized');
  });

  it('a 503 from the token endpoint is retried by the same single layer', async () => {
    const rec = recordingTransport((req, n) => {
      if (req.url !== TOKEN_URL) return json(200, PROFILE);
      return n.token === 1 ? json(503, { error: 'temporarily_unavailable' }) : tokenOk();
    });
    expect(await makeClient(['read'], rec.transport).call('users.getProfile')).toEqual(PROFILE);
    expect(rec.sent.filter((s) => s.url === TOKEN_URL)).toHaveLength(2);
  });

  it('a persistently failing token endpoint costs at most 4 token requests, not 4 × 4', async () => {
    const rec = recordingTransport((req) => (req.url === TOKEN_URL ? json(503, {}) : json(200, PROFILE)));
    const client = makeClient(['read'], rec.transport);
    expect(await codeOf(client.call('users.getProfile'))).toBe('upstream_unavailable');
    expect(rec.sent).toHaveLength(4);
  });

  it('401 → one refresh → success with the new token', async () => {
    const rec = recordingTransport((req, n) => {
      if (req.url === TOKEN_URL) return tokenOk(`tok-${n.token}`);
      return req.headers['authorization'] === 'Bearer tok-1'
        ? json(401, { error: { code: 401, message: 'Invalid Credentials', status: 'UNAUTHENTICATED' } })
        : json(200, PROFILE);
    });
    const client = makeClient(['read'], rec.transport);
    expect(await client.call('users.getProfile')).toEqual(PROFILE);
    expect(rec.sent.map((s) => s.headers['authorization'] ?? 'token')).toEqual([
      'token',
      'Bearer tok-1',
      'token',
      'Bearer tok-2',
    ]);
  });

  it('401 after the refresh too → not_authorized, no loop', async () => {
    const rec = recordingTransport((req, n) =>
      req.url === TOKEN_URL
        ? tokenOk(`tok-${n.token}`)
        : json(401, { error: { code: 401, message: 'Invalid Credentials' } }),
    );
    const client = makeClient(['read'], rec.transport);
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('not_authorized');
    expect(e.message).toMatch(/mailwarden auth/);
    expect(rec.gmail()).toHaveLength(2);
  });

  it('an aborted call sends nothing', async () => {
    const rec = recordingTransport();
    const ctl = new AbortController();
    ctl.abort();
    await expect(
      makeClient(['read'], rec.transport).call('users.getProfile', { signal: ctl.signal }),
    ).rejects.toThrow();
    expect(rec.sent).toHaveLength(0);
  });
});

describe('reauthMessage (seam for explaining expiry)', () => {
  it('says how old the sign-in is when the store knows', () => {
    const now = Date.UTC(2026, 10, 30);
    const msg = reauthMessage({ description: 'expired', refreshTokenIssuedAt: now - 7 * 86_400_000, now });
    expect(msg).toMatch(/7 day\(s\) ago/);
    expect(msg).toMatch(/`mailwarden auth`/);
  });
});
