import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { SeedThread, SeedUser } from '../../src/sandbox/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { BASE, textMail } from '../sandbox/helpers.js';

/** applyToExisting past one batchModify: 1,205 matching messages, chunks of 1,000. */

const BULK = 1205;

function seed(): SeedUser {
  const threads: SeedThread[] = Array.from({ length: BULK }, (_, i) => ({
    key: `b${i}`,
    messages: [
      {
        raw: textMail({
          from: 'digest@lists.example',
          to: DEMO_ADDRESS,
          subject: `Digest ${i}`,
          messageId: `b${i}@lists.example`,
        }),
        labelIds: ['INBOX'],
        internalDate: BASE + i * 60_000,
      },
    ],
  }));
  threads.push({
    key: 'other',
    messages: [
      {
        raw: textMail({
          from: 'pal@pals.example',
          to: DEMO_ADDRESS,
          subject: 'Hi',
          messageId: 'o@pals.example',
        }),
        labelIds: ['INBOX'],
        internalDate: BASE,
      },
    ],
  });
  return { email: DEMO_ADDRESS, userLabels: [], threads };
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    sandbox: { users: [seed()] },
    env: { MAILWARDEN_TOOLS: 'read,manage,filters' },
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const carrying = (labelId: string) =>
  stack.sandbox.mailbox(DEMO_ADDRESS).messages.filter((m) => m.labelIds.includes(labelId));

describe('applyToExisting in chunks', () => {
  it('stops at maxMessages and says more match', async () => {
    const r = await stack.call('create_filter', {
      criteria: { from: 'digest@lists.example' },
      addLabels: ['Digest A'],
      applyToExisting: true,
      maxMessages: 1100,
    });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['applied']).toEqual({
      matched: 1100,
      more: true,
      submitted: 1100,
      chunks: 2,
      failedChunks: [],
    });
    const id = (r.structured['createdLabels'] as Array<{ id: string }>)[0]?.id ?? '';
    const labelled = carrying(id);
    expect(labelled).toHaveLength(1100);
    // messages.list answers newest first: the 105 oldest are the ones left as they were.
    const oldest = Math.min(...labelled.map((m) => m.internalDate));
    expect(oldest).toBe(BASE + (BULK - 1100) * 60_000);
  }, 60_000);

  it('labels all 1,205 in two batchModify calls and verifies a sample', async () => {
    const before = stack.sandbox.stats();
    const r = await stack.call('create_filter', {
      criteria: { from: 'digest@lists.example' },
      addLabels: ['Digest B'],
      removeLabels: ['INBOX'],
      applyToExisting: true,
      maxMessages: 5000,
      verify: true,
    });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['applied']).toEqual({
      matched: BULK,
      more: false,
      submitted: BULK,
      chunks: 2,
      failedChunks: [],
      verified: { checked: 100, ok: 100, mismatched: [] },
    });
    const id = (r.structured['createdLabels'] as Array<{ id: string }>)[0]?.id ?? '';
    expect(carrying(id)).toHaveLength(BULK);
    expect(carrying('INBOX').map((m) => m.threadId)).toEqual([
      stack.sandbox.threadIdForKey(DEMO_ADDRESS, 'other'),
    ]);
    const after = stack.sandbox.stats();
    const batch = (s: typeof before) => s.byMethod['messages.batchModify']?.requests ?? 0;
    expect(batch(after) - batch(before)).toBe(2);
  }, 60_000);
});
