import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../src/providers/gmail/retry.js';
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

const PROFILE = { emailAddress: 'a@example.com', messagesTotal: 1, threadsTotal: 1, historyId: '7' };

function setup(handler: Handler, retry?: { baseDelayMs?: number }) {
  const rec = recordingTransport(handler);
  const time = fakeTime();
  const client = makeClient(['read'], rec.transport, {
    clock: time.clock,
    sleep: time.sleep,
    ...(retry === undefined ? {} : { retry }),
  });
  const start = time.clock.now();
  return { rec, time, client, elapsed: () => time.clock.now() - start };
}

describe('one retry layer', () => {
  it('a persistent 429 with Retry-After: 1 gets one wait: 2 requests, then rate_limited', async () => {
    const { rec, client, time } = setup((req) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : googleError(429, 'rateLimitExceeded', 'Too many', { 'retry-after': '1' }),
    );
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('rate_limited');
    expect(e.retryable).toBe(true);
    expect(e.retryAfterSeconds).toBe(1);
    expect(rec.gmail()).toHaveLength(2);
    expect(time.slept).toEqual([1000]);
    expect(client.usage()).toEqual({ requests: 3, quotaUnits: 2 });
  });

  it('Retry-After: 60 stops after 1 request, because the wait is longer than the one wait allowed (20 s)', async () => {
    const { rec, client, time } = setup((req) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : googleError(429, 'rateLimitExceeded', 'Too many', { 'retry-after': '60' }),
    );
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterSeconds).toBe(60);
    expect(rec.gmail()).toHaveLength(1);
    expect(time.slept).toEqual([]);
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const { client, time } = setup((req, n) => {
      if (req.url.endsWith('/token')) return tokenOk();
      if (n.gmail > 1) return json(200, PROFILE);
      const at = new Date(time.clock.now() + 5000).toUTCString();
      return googleError(503, 'backendError', 'down', { 'retry-after': at });
    });
    await client.call('users.getProfile');
    expect(time.slept).toEqual([5000]);
  });

  it('503, 503, 200 succeeds with 3 requests', async () => {
    const { rec, client } = setup((req, n) => {
      if (req.url.endsWith('/token')) return tokenOk();
      return n.gmail < 3 ? googleError(503, 'backendError', 'Backend Error') : json(200, PROFILE);
    });
    expect(await client.call('users.getProfile')).toEqual(PROFILE);
    expect(rec.gmail()).toHaveLength(3);
  });

  it('a connection reset, then 200, succeeds', async () => {
    const { rec, client } = setup((req, n) => {
      if (req.url.endsWith('/token')) return tokenOk();
      if (n.gmail === 1) {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
        });
      }
      return json(200, PROFILE);
    });
    expect(await client.call('users.getProfile')).toEqual(PROFILE);
    expect(rec.gmail()).toHaveLength(2);
  });

  it('persistent resets end as network_error naming the cause', async () => {
    const { client } = setup((req) => {
      if (req.url.endsWith('/token')) return tokenOk();
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      });
    });
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('network_error');
    expect(e.message).toMatch(/ECONNRESET/);
  });

  it('403 userRateLimitExceeded is retried; 403 insufficientPermissions is not', async () => {
    const rate = setup((req, n) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : n.gmail === 1
          ? googleError(403, 'userRateLimitExceeded', 'User rate limit')
          : json(200, PROFILE),
    );
    expect(await rate.client.call('users.getProfile')).toEqual(PROFILE);
    expect(rate.rec.gmail()).toHaveLength(2);

    const scope = setup((req) =>
      req.url.endsWith('/token')
        ? tokenOk()
        : googleError(403, 'insufficientPermissions', 'Insufficient Permission'),
    );
    const e = await rejection(scope.client.call('users.getProfile'));
    expect(e.code).toBe('insufficient_scope');
    expect(scope.rec.gmail()).toHaveLength(1);
  });

  it('without Retry-After backs off exponentially and ends as upstream_unavailable', async () => {
    const { rec, client, time } = setup((req) =>
      req.url.endsWith('/token') ? tokenOk() : googleError(503, 'backendError', 'Backend Error'),
    );
    const e = await rejection(client.call('users.getProfile'));
    expect(e.code).toBe('upstream_unavailable');
    expect(rec.gmail()).toHaveLength(4);
    // random() = 0.5 puts jitter at the midpoint: 0.5 s, 1 s, 2 s.
    expect(time.slept).toEqual([500, 1000, 2000]);
  });

  it('keeps the whole effort within 30 s, even with long backoffs and slow answers', async () => {
    const slow = setup(
      (req) => {
        if (req.url.endsWith('/token')) return tokenOk();
        slow.time.clock.advance(4000);
        return googleError(500, 'backendError', 'boom');
      },
      { baseDelayMs: 8000 },
    );
    const e = await rejection(slow.client.call('users.getProfile'));
    expect(e.code).toBe('upstream_unavailable');
    expect(slow.elapsed()).toBeLessThanOrEqual(30_000);
    expect(slow.time.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(30_000);
  });

  it('does not retry 400 or 404', async () => {
    const { rec, client } = setup((req) =>
      req.url.endsWith('/token') ? tokenOk() : googleError(400, 'invalidArgument', 'Invalid query'),
    );
    const e = await rejection(client.call('threads.list', { query: { q: 'x' } }));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toMatch(/Invalid query/);
    expect(rec.gmail()).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, ignores junk', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(new Date(now + 7000).toUTCString(), now)).toBe(7000);
    expect(parseRetryAfter(new Date(now - 7000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
