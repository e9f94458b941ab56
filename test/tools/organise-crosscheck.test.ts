import { unfence } from '../../src/mcp/untrusted.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { startHarness } from '../sandbox/helpers.js';
import type { Harness } from '../sandbox/helpers.js';

/**
 * The stale message index: messages.list answers read-state predicates in q from stale
 * per-thread state while its labelIds filter stays live, which is the disagreement bulk_modify's
 * crossCheck exists to catch.
 */

describe('sandbox staleMessageIndex', () => {
  let h: Harness;
  const ids = async (query: string): Promise<string[]> => {
    const r = await h.gmail(`messages?${query}`);
    return ((r.json.messages ?? []) as Array<{ id: string }>).map((m) => m.id);
  };
  const staleMessage = (): string => {
    const threadId = h.sandbox.threadIdForKey('alice@example.com', 'stale');
    const t = h.sandbox.mailbox('alice@example.com').threads.find((x) => x.id === threadId);
    return t?.messageIds[0] ?? '';
  };

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.sandbox.close();
  });

  it('is off by default: messages.list stays exact', async () => {
    expect(await ids('q=is:unread')).not.toContain(staleMessage());
  });

  it('answers q from the stale thread state while labelIds stays live; threads.list is untouched', async () => {
    h.sandbox.setStaleMessageIndex(true);
    try {
      const stale = staleMessage();
      expect(await ids('q=is:unread')).toContain(stale);
      expect(await ids('q=is:read')).not.toContain(stale);
      expect(await ids('labelIds=UNREAD')).not.toContain(stale);
      expect(await ids('q=is:unread&labelIds=UNREAD')).not.toContain(stale);
      expect(await ids('q=is:unread&labelIds=INBOX')).toContain(stale);
      const threads = await h.gmail('threads?q=is:unread');
      expect((threads.json.threads as Array<{ id: string }>).map((t) => t.id)).not.toContain(
        h.sandbox.threadIdForKey('alice@example.com', 'stale'),
      );
    } finally {
      h.sandbox.setStaleMessageIndex(false);
    }
    expect(await ids('q=is:unread')).not.toContain(staleMessage());
  });
});

interface CrossOut {
  matched: { messages: number };
  toWrite: number;
  submitted: number;
  unverifiedPredicates: string[];
  crossCheck?: { predicates: string[]; contradicted: number; contradictedIds: string[] };
  createdLabels: Array<{ id: string; name: string }>;
}

describe('bulk_modify crossCheck against a stale index', () => {
  let stack: Stack;
  const query = 'category:updates is:unread';
  beforeAll(async () => {
    stack = await startStack({ sandbox: { staleMessageIndex: true } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** The truth, from live labels: unread updates outside spam and trash. */
  const truth = (): Set<string> =>
    new Set(
      stack.sandbox
        .mailbox(DEMO_ADDRESS)
        .messages.filter(
          (m) =>
            m.labelIds.includes('CATEGORY_UPDATES') &&
            m.labelIds.includes('UNREAD') &&
            !m.labelIds.includes('SPAM') &&
            !m.labelIds.includes('TRASH'),
        )
        .map((m) => m.id),
    );
  const staleIds = (): Set<string> => {
    const view = stack.sandbox.mailbox(DEMO_ADDRESS);
    const threads = new Set(
      DEMO_FACTS.staleUnreadKeys.map((k) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, k)),
    );
    return new Set(view.messages.filter((m) => threads.has(m.threadId)).map((m) => m.id));
  };

  it('without crossCheck, unverifiedPredicates names the read-state predicate the index answered', async () => {
    const r = await stack.call('bulk_modify', { query, add: ['Follow up'], dryRun: true });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as CrossOut;
    expect(out.unverifiedPredicates).toEqual(['category:updates', 'is:unread']);
    expect(out.matched.messages).toBe(truth().size + staleIds().size);
  });

  it('with crossCheck, messages whose live labels contradict the index are left unchanged and listed', async () => {
    const expected = truth();
    const stale = staleIds();
    expect(stale.size).toBeGreaterThan(0);
    const r = await stack.call('bulk_modify', { query, add: ['Follow up'], crossCheck: true });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as CrossOut;
    expect(out.unverifiedPredicates).toEqual(['category:updates', 'is:unread']);
    expect(out.crossCheck?.predicates).toEqual(['category:updates', 'is:unread']);
    expect(out.crossCheck?.contradicted).toBe(stale.size);
    expect(new Set(out.crossCheck?.contradictedIds)).toEqual(new Set([...stale].slice(0, 100)));
    expect([out.toWrite, out.submitted]).toEqual([expected.size, expected.size]);

    const label = out.createdLabels.find((l) => unfence(l.name) === 'Follow up')?.id ?? '';
    const carrying = stack.sandbox
      .mailbox(DEMO_ADDRESS)
      .messages.filter((m) => m.labelIds.includes(label))
      .map((m) => m.id);
    expect(new Set(carrying)).toEqual(expected);
  });
});
