import { afterEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { BOB, startHarness } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h.sandbox.close();
});

describe('quota', () => {
  it('answers 429 with Retry-After once the per-user budget is spent, and recovers as the window moves', async () => {
    h = await startHarness({ quotaUnitsPerMinute: 30 });
    await h.token(); // the token endpoint costs no Gmail quota
    expect((await h.gmail('threads')).status).toBe(200); // 10
    h.clock.advance(20_000);
    expect((await h.gmail('threads')).status).toBe(200); // 20
    expect((await h.gmail('messages')).status).toBe(200); // 25
    expect((await h.gmail('labels')).status).toBe(200); // 26

    const limited = await h.gmail('threads');
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(limited.json.error.errors[0]).toMatchObject({
      reason: 'userRateLimitExceeded',
      domain: 'usageLimits',
    });
    // The first threads.list (10 units) leaves the rolling minute 40 s from now.
    expect(limited.headers.get('retry-after')).toBe('40');
    // Cheaper calls that still fit go through.
    expect((await h.gmail('labels')).status).toBe(200); // 27

    // The budget is per user: Bob is unaffected.
    expect((await h.gmail('threads', { token: await h.token(BOB) })).status).toBe(200);

    h.clock.advance(40_000);
    expect((await h.gmail('threads')).status).toBe(200);

    const stats = h.sandbox.stats();
    expect(stats.byMethod['threads.list']).toEqual({ requests: 5, apiCalls: 5, quotaUnits: 40 });
    expect(stats.byMethod['labels.list']).toEqual({ requests: 2, apiCalls: 2, quotaUnits: 2 });
    expect(stats.quotaUnits).toBe(40 + 2 + 5);
  });
});

describe('faults', () => {
  it('scripts a 503 then lets the retry through, counting both requests but charging once', async () => {
    h = await startHarness();
    await h.token();
    h.sandbox.resetStats();
    h.sandbox.faults.script([
      { method: 'messages.batchModify', kind: 'http503', times: 1, retryAfterSeconds: 2 },
    ]);
    const body = { ids: ['ffffffffffffffff'], addLabelIds: ['STARRED'] };
    const first = await h.gmail('messages/batchModify', { body });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(first.json.error).toMatchObject({ code: 503, status: 'UNAVAILABLE' });
    expect((await h.gmail('messages/batchModify', { body })).status).toBe(204);
    expect(h.sandbox.stats()).toEqual({
      requests: 2,
      apiCalls: 2,
      quotaUnits: 50,
      byMethod: { 'messages.batchModify': { requests: 2, apiCalls: 2, quotaUnits: 50 } },
    });
  });

  it("skips matching requests, matches by path, and 'reset' drops the connection so fetch throws", async () => {
    h = await startHarness();
    await h.token();
    h.sandbox.faults.script([
      { path: /\/labels$/, kind: '429', skip: 1, times: 1, retryAfterSeconds: 7 },
      { method: 'getProfile', kind: 'reset', times: 1 },
    ]);
    expect((await h.gmail('labels')).status).toBe(200);
    const limited = await h.gmail('labels');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await h.gmail('labels')).status).toBe(200);
    await expect(h.gmail('profile')).rejects.toThrow();
    expect((await h.gmail('profile')).status).toBe(200);
    expect(h.sandbox.stats().byMethod['getProfile']).toEqual({ requests: 2, apiCalls: 2, quotaUnits: 1 });
  });

  it('can fail the token endpoint too', async () => {
    h = await startHarness();
    h.sandbox.faults.script([{ method: 'oauth.token', kind: 'http500', times: 1 }]);
    const res = await fetch(`${h.sandbox.url}/token`, { method: 'POST', body: new URLSearchParams({}) });
    expect(res.status).toBe(500);
    expect(await h.token()).toEqual(expect.any(String));
  });

  it('injects faults at a seeded rate, reproducibly, until cleared', async () => {
    h = await startHarness();
    await h.token();
    const run = async (): Promise<number[]> => {
      h.sandbox.faults.rate(0.5, ['http500', 'http503'], 42);
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await h.gmail('labels')).status);
      return statuses;
    };
    const a = await run();
    const b = await run();
    expect(a).toEqual(b);
    expect(a.some((s) => s === 200)).toBe(true);
    expect(a.some((s) => s >= 500)).toBe(true);
    h.sandbox.faults.clear();
    for (let i = 0; i < 5; i++) expect((await h.gmail('labels')).status).toBe(200);
  });

  it("delays with 'delay' faults and with latency, in real time", async () => {
    h = await startHarness({ latencyMs: 60 });
    await h.token();
    let t = performance.now();
    await h.gmail('labels');
    expect(performance.now() - t).toBeGreaterThanOrEqual(55);
    h.sandbox.setLatency(0);
    h.sandbox.faults.script([{ kind: 'delay', delayMs: 80, times: 1 }]);
    t = performance.now();
    expect((await h.gmail('labels')).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(75);
  });
});
