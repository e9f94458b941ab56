import { afterEach, describe, expect, it } from 'vitest';
import { OffsetClock } from '../../src/mail/clock.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a 429 storm', () => {
  it('ends as rate_limited with retryAfterSeconds after one wait: 2 requests', async () => {
    stack = await startStack();
    await stack.call('get_profile'); // token fetched before the storm
    stack.sandbox.faults.script([{ kind: '429', retryAfterSeconds: 1 }]);
    stack.sandbox.resetStats();
    const r = await stack.call('get_profile');
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(r.error?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(stack.sandbox.stats().requests).toBe(2);
  });

  it('a Retry-After longer than the budget fails at once with that wait', async () => {
    stack = await startStack();
    await stack.call('get_profile');
    stack.sandbox.faults.script([{ kind: '429', retryAfterSeconds: 120 }]);
    stack.sandbox.resetStats();
    const r = await stack.call('get_profile');
    expect(r.error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 120 });
    expect(stack.sandbox.stats().requests).toBe(1);
  });

  it('the real quota budget running out is reported the same way', async () => {
    stack = await startStack({ sandbox: { quotaUnitsPerMinute: 60 } });
    // 10 units per threads.get: a 10-thread search cannot fit in a 60-unit minute.
    const r = await stack.call('search', { query: 'in:inbox', maxResults: 10 });
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'rate_limited' });
  });

  it('a transient 503 is retried and succeeds', async () => {
    stack = await startStack();
    await stack.call('get_profile');
    stack.sandbox.faults.script([{ kind: 'http503', times: 2 }]);
    stack.sandbox.resetStats();
    const r = await stack.call('get_profile');
    expect(r.isError).toBe(false);
    expect(stack.sandbox.stats().requests).toBe(3);
  });
});

describe('a revoked token', () => {
  it('comes back as needs_reauth naming the command that fixes it', async () => {
    stack = await startStack();
    expect((await stack.call('get_profile')).isError).toBe(false);
    stack.sandbox.revokeRefreshToken(stack.refreshToken);
    const r = await stack.call('get_profile');
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'needs_reauth', retryable: false });
    expect(r.error?.message).toMatch(/mailwarden auth/);
  });
});

describe('an expired history cursor', () => {
  it('is invalid_input on historyId, never an empty answer', async () => {
    const clock = new OffsetClock();
    stack = await startStack({ sandbox: { clock } });
    const p = await stack.call('get_profile');
    const start = p.structured['historyId'] as string;
    stack.sandbox.deliver(
      'you@mailwarden.example',
      'From: a@example.org\r\nSubject: x\r\nMessage-ID: <exp-1@example.org>\r\n\r\nx\r\n',
      ['INBOX'],
    );
    // Gmail keeps history for about a week; the change above falls out of the window.
    clock.advance(8 * 24 * 3600 * 1000);
    const r = await stack.call('what_changed', { historyId: start });
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'invalid_input', field: 'historyId' });
  });
});

describe('protocol 2026-07-28 over stdio', () => {
  it('serves tools/list and tools/call in the stateless revision', async () => {
    stack = await startStack({ protocol: '2026-07-28' });
    const { tools } = await stack.client.listTools();
    expect(tools.map((t) => t.name)).toContain('search');
    const r = await stack.call('search', { query: 'is:starred', maxResults: 5 });
    expect(r.isError).toBe(false);
    expect(Array.isArray(r.structured['threads'])).toBe(true);
  });
});
