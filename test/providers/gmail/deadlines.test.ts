import { describe, expect, it } from 'vitest';
import {
  fakeTime,
  googleError,
  json,
  makeClient,
  recordingTransport,
  rejection,
  tokenOk,
} from './helpers.js';
import type { Handler } from './helpers.js';
import type { Transport } from '../../../src/providers/gmail/transport.js';

const PROFILE = { emailAddress: 'a@example.com', messagesTotal: 1, threadsTotal: 1, historyId: '7' };

/** Never answers; gives up only when the request's signal aborts (as fetch does). */
const hang = (signal: AbortSignal | null | undefined): Promise<Response> =>
  new Promise((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });

/** Gmail answers tokens; every Gmail request goes to `gmail`. */
function transportOf(gmail: (url: string, init: RequestInit) => Promise<Response>): {
  transport: Transport;
  sent: string[];
} {
  const sent: string[] = [];
  return {
    sent,
    transport: (url, init) => {
      if (url.endsWith('/token')) return Promise.resolve(tokenOk());
      sent.push(`${init.method ?? 'GET'} ${url}`);
      return gmail(url, init);
    },
  };
}

const SHORT = { readMs: 40, writeMs: 60 };

describe('every request has a deadline', () => {
  it('a hung read ends as upstream_unavailable after one request, naming the setting', async () => {
    const t = transportOf((_url, init) => hang(init.signal));
    const client = makeClient(['read'], t.transport, { deadlines: SHORT });
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('upstream_unavailable');
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(/did not answer within 40 ms \(MAILWARDEN_REQUEST_TIMEOUT_MS\)/);
    expect(t.sent).toHaveLength(1);
  });

  it('a hung write is network_error, not retryable, outcome unknown — never plain "failed"', async () => {
    const t = transportOf((_url, init) => hang(init.signal));
    const client = makeClient(['read', 'manage'], t.transport, { deadlines: SHORT });
    const e = await rejection(
      client.call('messages.batchModify', { body: { ids: ['a1'], addLabelIds: ['STARRED'] } }),
    );
    expect(e.code).toBe('network_error');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/outcome is unknown/);
    expect(e.message).toMatch(/MAILWARDEN_WRITE_TIMEOUT_MS/);
    expect(t.sent).toEqual(['POST https://gmail.googleapis.com/gmail/v1/users/me/messages/batchModify']);
  });

  it('a body that stalls after the headers is held to the same deadline', async () => {
    const t = transportOf(() =>
      Promise.resolve(
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode('{"emailAddress":'));
            },
          }),
          { status: 200, headers: { 'content-type': 'application/json' } },
        ),
      ),
    );
    const client = makeClient(['read'], t.transport, { deadlines: SHORT });
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('upstream_unavailable');
    expect(e.message).toMatch(/did not answer within/);
  });

  it('the token refresh has a deadline too', async () => {
    const transport: Transport = (_url, init) => hang(init.signal);
    const client = makeClient(['read'], transport, { deadlines: SHORT });
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('upstream_unavailable');
    expect(e.message).toMatch(/token refresh/);
  });

  it("the caller's own cancellation is not reported as a deadline", async () => {
    const t = transportOf((_url, init) => hang(init.signal));
    const client = makeClient(['read'], t.transport, { deadlines: { readMs: 60_000, writeMs: 60_000 } });
    const controller = new AbortController();
    const p = client.call('users.getProfile', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by the client')), 20);
    await expect(p).rejects.toThrow('cancelled by the client');
  });

  it('an answer within the deadline is read whole', async () => {
    const t = transportOf(() => Promise.resolve(json(200, PROFILE)));
    const client = makeClient(['read'], t.transport, { deadlines: SHORT });
    expect(await client.call('users.getProfile')).toEqual(PROFILE);
  });
});

describe('a write lost on the network', () => {
  const failing = (code: string): Transport =>
    transportOf(() =>
      Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) })),
    ).transport;

  it('a connection reset on every attempt leaves the write unknown, not failed', async () => {
    const client = makeClient(['read', 'manage'], failing('ECONNRESET'));
    const e = await rejection(
      client.call('threads.modify', { params: { id: 't1' }, body: { addLabelIds: ['STARRED'] } }),
    );
    expect(e.code).toBe('network_error');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/ECONNRESET.*outcome is unknown/);
  });

  it('a connection that was never made is a plain failure (nothing can have landed)', async () => {
    const client = makeClient(['read', 'manage'], failing('ECONNREFUSED'));
    const e = await rejection(
      client.call('threads.modify', { params: { id: 't1' }, body: { addLabelIds: ['STARRED'] } }),
    );
    expect(e.code).toBe('network_error');
    expect(e.retryable).toBe(true);
    expect(e.message).not.toMatch(/unknown/);
  });

  it('a read lost on the network stays retryable', async () => {
    const client = makeClient(['read'], failing('ECONNRESET'));
    const e = await rejection(client.call('users.getProfile'));
    expect(e).toMatchObject({ code: 'network_error', retryable: true });
  });
});

describe('rate limits: one shared wait, then rate_limited, then nothing more is sent', () => {
  function rateLimited(retryAfter: string): Handler {
    return (req) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : googleError(429, 'rateLimitExceeded', 'Too many', { 'retry-after': retryAfter });
  }

  it('eight concurrent reads under a persistent 429 cost 8 + 1 requests, and the next call none', async () => {
    const rec = recordingTransport(rateLimited('1'));
    const time = fakeTime();
    const client = makeClient(['read'], rec.transport, { clock: time.clock, sleep: time.sleep });
    const calls = Array.from({ length: 8 }, (_, i) =>
      rejection(client.call('threads.get', { params: { id: `t${i}` } })),
    );
    const errors = await Promise.all(calls);
    expect(errors.map((e) => e.code)).toEqual(Array(8).fill('rate_limited'));
    expect(errors.every((e) => (e.retryAfterSeconds ?? 0) >= 1)).toBe(true);
    expect(rec.gmail()).toHaveLength(9);
    const later = await rejection(client.call('users.getProfile'));
    expect(later.code).toBe('rate_limited');
    expect(later.message).toMatch(/not sent/);
    expect(rec.gmail()).toHaveLength(9);
  });

  it('once Retry-After has passed, requests go out again', async () => {
    let limited = true;
    const rec = recordingTransport((req) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : limited
          ? googleError(429, 'rateLimitExceeded', 'Too many', { 'retry-after': '2' })
          : json(200, PROFILE),
    );
    const time = fakeTime();
    const client = makeClient(['read'], rec.transport, { clock: time.clock, sleep: time.sleep });
    expect((await rejection(client.call('users.getProfile'))).code).toBe('rate_limited');
    limited = false;
    time.clock.advance(2000);
    expect(await client.call('users.getProfile')).toEqual(PROFILE);
  });

  it('a Retry-After longer than the one wait allowed is handed over at once', async () => {
    const rec = recordingTransport(rateLimited('25'));
    const time = fakeTime();
    const client = makeClient(['read'], rec.transport, { clock: time.clock, sleep: time.sleep });
    const e = await rejection(client.call('users.getProfile'));
    expect(e).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 25 });
    expect(rec.gmail()).toHaveLength(1);
    expect(time.slept).toEqual([]);
  });

  it('the longest wait is configurable', async () => {
    const rec = recordingTransport(rateLimited('5'));
    const time = fakeTime();
    const client = makeClient(['read'], rec.transport, {
      clock: time.clock,
      sleep: time.sleep,
      retry: { rateLimitMaxWaitMs: 4000 },
    });
    expect((await rejection(client.call('users.getProfile'))).retryAfterSeconds).toBe(5);
    expect(rec.gmail()).toHaveLength(1);
  });
});
