import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { CallOutcome, Stack, StackOptions } from '../helpers/stack.js';
import { DIGEST_QUERY, bulkSeed } from '../tools/organise-seed.js';

/*
 * Issue 9 item 3 end to end: the built server, the SDK client, the sandbox injecting hangs and
 * rate limits. Deadlines are configured short (no test asserts on elapsed time); outcomes are
 * read from the result and from the sandbox mailbox itself.
 */

interface Envelope {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterSeconds?: number;
}

/** The error envelope, from wherever this server puts it (structured copy or text). */
function envelope(r: CallOutcome): Envelope {
  expect(r.isError).toBe(true);
  const inStructured = r.structured['error'] as Envelope | undefined;
  if (inStructured !== undefined) return inStructured;
  const parsed = JSON.parse(r.text.slice(r.text.indexOf('{'))) as { error?: Envelope } & Envelope;
  return parsed.error ?? parsed;
}

const SHORT = { MAILWARDEN_REQUEST_TIMEOUT_MS: '400', MAILWARDEN_WRITE_TIMEOUT_MS: '400' };

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function started(options: StackOptions = {}): Promise<Stack> {
  stack = await startStack({ ...options, env: { ...SHORT, ...options.env } });
  expect((await stack.call('get_profile')).isError).toBe(false); // token fetched before any fault
  return stack;
}

const inboxThreads = (s: Stack): string[] =>
  [
    ...new Set(
      s.sandbox
        .mailbox(DEMO_ADDRESS)
        .messages.filter((m) => m.labelIds.includes('INBOX'))
        .map((m) => m.threadId),
    ),
  ].sort();

const labelsOfThread = (s: Stack, threadId: string): string[][] =>
  s.sandbox
    .mailbox(DEMO_ADDRESS)
    .messages.filter((m) => m.threadId === threadId)
    .map((m) => m.labelIds);

describe('a hung request', () => {
  it('a hung read answers upstream_unavailable at the deadline, after one request', async () => {
    const s = await started();
    s.sandbox.faults.script([{ method: 'getProfile', kind: 'hang' }]);
    s.sandbox.resetStats();
    const e = envelope(await s.call('get_profile'));
    expect(e).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(e.message).toMatch(/did not answer within 400 ms/);
    expect(s.sandbox.stats().byMethod['getProfile']?.requests).toBe(1);
  });

  it('archive whose batchModify landed but never answered reports what the thread shows: changed', async () => {
    const s = await started();
    const [threadId] = inboxThreads(s);
    s.sandbox.faults.script([{ method: 'messages.batchModify', kind: 'hang', apply: true, times: 1 }]);
    const r = await s.call('archive', { threadId });
    expect(r.isError).toBe(false);
    expect(r.structured['changed']).toEqual([{ threadId, readBack: true }]);
    expect(r.structured['failed']).toEqual([]);
    expect(labelsOfThread(s, threadId as string).every((l) => !l.includes('INBOX'))).toBe(true);
  });

  it('archive of two threads whose one batchModify never arrived: both unknown, not failed, both untouched', async () => {
    const s = await started();
    const [threadId, other] = inboxThreads(s);
    s.sandbox.faults.script([{ method: 'messages.batchModify', kind: 'hang', times: 1 }]);
    s.sandbox.resetStats();
    const r = await s.call('archive', { threadIds: [threadId, other] });
    expect(r.isError).toBe(false);
    const failed = r.structured['failed'] as Array<{ threadId: string; code: string; message: string }>;
    expect(r.structured['changed']).toEqual([]);
    expect(failed.map((f) => f.threadId).sort()).toEqual([threadId, other].sort());
    for (const f of failed) {
      expect(f.code).toBe('unknown');
      expect(f.message).toMatch(/did not answer within 400 ms/);
    }
    // One write carried both threads; each was read back once to see whether it landed.
    expect(s.sandbox.stats().byMethod['messages.batchModify']?.requests).toBe(1);
    for (const t of [threadId, other])
      expect(labelsOfThread(s, t as string).some((l) => l.includes('INBOX'))).toBe(true);
  });

  it('a single-thread archive whose answer never came is a report with unknown, not an error saying nothing changed', async () => {
    const s = await started();
    const [threadId] = inboxThreads(s);
    s.sandbox.faults.script([{ method: 'messages.batchModify', kind: 'hang', times: 1 }]);
    const r = await s.call('archive', { threadId });
    expect(r.isError).toBe(false);
    expect(r.structured['changed']).toEqual([]);
    expect(r.structured['failed']).toMatchObject([{ threadId, code: 'unknown' }]);
  });

  it('bulk_modify: a hung batchModify that landed is reported ok from the read-back; one that did not is unknown', async () => {
    const s = await started({ sandbox: { users: [bulkSeed(1500)] } });
    const view = () =>
      s.sandbox.mailbox(DEMO_ADDRESS).messages.filter((m) => m.labelIds.includes('CATEGORY_PROMOTIONS'));
    s.sandbox.faults.script([
      { method: 'messages.batchModify', kind: 'hang', apply: true, times: 1 },
      { method: 'messages.batchModify', kind: 'hang', times: 1 },
    ]);
    const r = await s.call('bulk_modify', { query: DIGEST_QUERY, add: ['STARRED'] });
    expect(r.isError).toBe(false);
    const chunks = r.structured['chunks'] as Array<{
      outcome: string;
      ids: number;
      readBack?: { applied: number; notApplied: number };
    }>;
    expect(chunks.map((c) => [c.outcome, c.ids])).toEqual([
      ['ok', 1000],
      ['unknown', 500],
    ]);
    expect(chunks[0]?.readBack).toMatchObject({ applied: 1000, notApplied: 0 });
    expect(chunks[1]?.readBack).toMatchObject({ applied: 0, notApplied: 500 });
    expect(r.structured).toMatchObject({ submitted: 1000, unknown: 500, failed: 0 });
    expect(view().filter((m) => m.labelIds.includes('STARRED'))).toHaveLength(1000);
  });

  it('the call budget answers a call that would otherwise wait on a slow mailbox', async () => {
    const s = await started({
      env: { MAILWARDEN_REQUEST_TIMEOUT_MS: '60000', MAILWARDEN_CALL_BUDGET_MS: '500' },
    });
    s.sandbox.faults.script([{ method: 'getProfile', kind: 'hang' }]);
    const e = envelope(await s.call('get_profile'));
    expect(e.code).toBe('deadline_exceeded');
    expect(e.message).toMatch(/budget of 500 ms \(MAILWARDEN_CALL_BUDGET_MS\)/);
  });
});

describe('rate limits', () => {
  it('a persistent 429 costs two requests (one wait honouring Retry-After), then rate_limited', async () => {
    const s = await started();
    s.sandbox.faults.script([{ method: 'getProfile', kind: '429', retryAfterSeconds: 1 }]);
    s.sandbox.resetStats();
    const e = envelope(await s.call('get_profile'));
    expect(e).toMatchObject({ code: 'rate_limited', retryable: true, retryAfterSeconds: 1 });
    expect(s.sandbox.stats().requests).toBe(2);
  });

  it('search under a threads.get 429 stops: its batch of reads, then once more after the one wait', async () => {
    const s = await started();
    s.sandbox.faults.script([{ method: 'threads.get', kind: '429', retryAfterSeconds: 1 }]);
    s.sandbox.resetStats();
    const e = envelope(await s.call('search', { query: 'in:inbox', maxResults: 10 }));
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // The 10 reads travel in one batch request; every call is refused, waited on once, sent again
    // once, and the second refusal is final.
    expect(s.sandbox.stats().byMethod['batch']?.requests).toBe(2);
    expect(s.sandbox.stats().byMethod['threads.get']?.apiCalls).toBe(20);
  });

  it('bulk_modify stops at the rate-limited chunk and reports the rest as not attempted', async () => {
    const s = await started({ sandbox: { users: [bulkSeed(2500)] } });
    s.sandbox.faults.script([{ method: 'messages.batchModify', kind: '429', retryAfterSeconds: 1, skip: 1 }]);
    s.sandbox.resetStats();
    const r = await s.call('bulk_modify', { query: DIGEST_QUERY, add: ['STARRED'] });
    expect(r.isError).toBe(false);
    const chunks = r.structured['chunks'] as Array<{ outcome: string; error?: { code: string } }>;
    expect(chunks.map((c) => c.outcome)).toEqual(['ok', 'failed', 'notAttempted']);
    expect(chunks[1]?.error?.code).toBe('rate_limited');
    expect(r.structured).toMatchObject({
      submitted: 1000,
      failed: 1000,
      notAttempted: 500,
      cancelled: false,
    });
    expect(r.structured['rateLimited']).toEqual({ retryAfterSeconds: 1 });
    // One ok, then the 429 and its one retry; the third chunk never sent.
    expect(s.sandbox.stats().byMethod['messages.batchModify']?.requests).toBe(3);
  });

  it('bulk_modify whose first chunk is rate-limited changed nothing: isError rate_limited with retryAfterSeconds', async () => {
    const s = await started({ sandbox: { users: [bulkSeed(1500)] } });
    s.sandbox.faults.script([{ method: 'messages.batchModify', kind: '429', retryAfterSeconds: 2 }]);
    const e = envelope(await s.call('bulk_modify', { query: DIGEST_QUERY, add: ['STARRED'] }));
    expect(e).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 2 });
    expect(e.message).toMatch(/500 id\(s\) were not attempted/);
  });
});
