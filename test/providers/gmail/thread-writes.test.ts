import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { startStack } from '../../helpers/stack.js';
import type { Stack } from '../../helpers/stack.js';

/*
 * Issue 21 on Gmail, end to end (built server, SDK client, sandbox): what a thread write costs
 * in requests, counted by the sandbox itself, and the agent label on the mail it moves.
 */

/** The write policy's rules that judge moves, without the cap and the Sent lookup. */
const POLICY = { default: { dailyMoveCap: 0, protectCorrespondents: false } };

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function started(policy: Record<string, unknown> = POLICY): Promise<Stack> {
  stack = await startStack({ policy });
  expect((await stack.call('get_profile')).isError).toBe(false); // the token, before any count
  return stack;
}

const view = (s: Stack) => s.sandbox.mailbox(DEMO_ADDRESS);

/** Threads whose every message is in the inbox and none is the user's own, oldest ids first. */
function inboxThreads(s: Stack): string[] {
  const v = view(s);
  const labels = new Map(v.messages.map((m) => [m.id, m.labelIds]));
  return v.threads
    .filter((t) =>
      t.messageIds.every((id) => {
        const l = labels.get(id) ?? [];
        return l.includes('INBOX') && !l.includes('SENT') && !l.includes('DRAFT');
      }),
    )
    .map((t) => t.id)
    .sort();
}

const messagesOf = (s: Stack, threadId: string) => view(s).messages.filter((m) => m.threadId === threadId);
const labelId = (s: Stack, name: string) => view(s).labels.find((l) => l.name === name)?.id;

/** Requests by method since the last resetStats. */
function spent(s: Stack): Record<string, number> {
  return Object.fromEntries(Object.entries(s.sandbox.stats().byMethod).map(([m, v]) => [m, v.requests]));
}

describe('Gmail thread writes: requests per call', () => {
  it('archive of 10 threads: one metadata read per thread and one batchModify (12 with the agent label created)', async () => {
    const s = await started();
    await s.call('list_labels'); // the label list this mailbox keeps
    const [first, second] = [inboxThreads(s).slice(0, 10), inboxThreads(s).slice(10, 20)];
    s.sandbox.resetStats();
    const r = await s.call('archive', { threadIds: first });
    expect(r.isError, r.text).toBe(false);
    expect((r.structured['changed'] as unknown[]).length).toBe(10);
    expect(spent(s)).toEqual({ 'threads.get': 10, 'labels.create': 1, 'messages.batchModify': 1 });
    const agent = labelId(s, 'mailwarden');
    expect(agent).toBeDefined();
    for (const t of first)
      for (const m of messagesOf(s, t)) {
        expect(m.labelIds).not.toContain('INBOX');
        expect(m.labelIds).toContain(agent);
      }
    // Making the label forgot the kept list: the next archive lists the labels once (12), the
    // one after it does not (11).
    s.sandbox.resetStats();
    expect((await s.call('archive', { threadIds: second.slice(0, 5) })).isError).toBe(false);
    expect(spent(s)).toEqual({ 'labels.list': 1, 'threads.get': 5, 'messages.batchModify': 1 });
    s.sandbox.resetStats();
    expect((await s.call('archive', { threadIds: second.slice(5) })).isError).toBe(false);
    expect(spent(s)).toEqual({ 'threads.get': 5, 'messages.batchModify': 1 });
    expect(view(s).labels.filter((l) => l.name === 'mailwarden')).toHaveLength(1);
  });

  it('modify_labels on one thread: 2 requests; a label made by a call is used by the next without a stale list', async () => {
    const s = await started();
    const [a, b, c] = inboxThreads(s);
    await s.call('list_labels');
    s.sandbox.resetStats();
    expect((await s.call('modify_labels', { threadId: a, add: ['STARRED'] })).isError).toBe(false);
    expect(spent(s)).toEqual({ 'threads.get': 1, 'messages.batchModify': 1 });
    for (const m of messagesOf(s, a as string)) expect(m.labelIds).toContain('STARRED');

    // A new name is created once; the creation forgets the kept list, so the next call sees it.
    expect((await s.call('modify_labels', { threadId: b, add: ['Receipts 21'] })).isError).toBe(false);
    const receipts = labelId(s, 'Receipts 21');
    expect(receipts).toBeDefined();
    s.sandbox.resetStats();
    expect((await s.call('modify_labels', { threadId: c, add: ['Receipts 21'] })).isError).toBe(false);
    expect(spent(s)['labels.create']).toBeUndefined();
    expect(view(s).labels.filter((l) => l.name === 'Receipts 21')).toHaveLength(1);
    for (const m of messagesOf(s, c as string)) expect(m.labelIds).toContain(receipts);

    // create_label forgets the kept list too: the next call lists once and uses the new label.
    expect((await s.call('create_label', { name: 'Made 21' })).isError).toBe(false);
    s.sandbox.resetStats();
    expect((await s.call('modify_labels', { threadId: a, add: ['Made 21'] })).isError).toBe(false);
    expect(spent(s)).toEqual({ 'labels.list': 1, 'threads.get': 1, 'messages.batchModify': 1 });
    expect(view(s).labels.filter((l) => l.name === 'Made 21')).toHaveLength(1);
    for (const m of messagesOf(s, a as string)) expect(m.labelIds).toContain(labelId(s, 'Made 21'));
  });
});

describe('policy.json agentLabel on Gmail', () => {
  it('is on what archive and snooze move out of the inbox; not on Spam or Trash moves; a move back removes it', async () => {
    const s = await started();
    const [archived, spam, trashed, snoozed] = inboxThreads(s);
    expect((await s.call('archive', { threadId: archived })).isError).toBe(false);
    const agent = labelId(s, 'mailwarden') as string;
    expect(agent).toBeDefined();
    expect((await s.call('move_to_spam', { threadId: spam })).isError).toBe(false);
    expect((await s.call('trash', { threadId: trashed })).isError).toBe(false);
    const snooze = await s.call('snooze', { threadId: snoozed, until: 'tomorrow 9am' });
    expect(snooze.isError, snooze.text).toBe(false);
    const has = (t: string | undefined) => messagesOf(s, t as string).map((m) => m.labelIds.includes(agent));
    expect(has(archived).every(Boolean)).toBe(true);
    expect(has(snoozed).every(Boolean)).toBe(true);
    expect(has(spam).some(Boolean)).toBe(false);
    expect(has(trashed).some(Boolean)).toBe(false);
    for (const m of messagesOf(s, spam as string)) expect(m.labelIds).toContain('SPAM');

    // A person finds everything the agent moved with one search: label:mailwarden.
    const found = await s.call('search', { query: 'label:mailwarden', maxResults: 50 });
    const ids = (found.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
    expect(ids.sort()).toEqual([archived, snoozed].sort());

    // Back to the inbox: restore and unsnooze take it off.
    expect((await s.call('restore', { threadId: archived })).isError).toBe(false);
    expect((await s.call('unsnooze', { threadId: snoozed })).isError).toBe(false);
    for (const t of [archived, snoozed])
      for (const m of messagesOf(s, t as string)) {
        expect(m.labelIds).toContain('INBOX');
        expect(m.labelIds).not.toContain(agent);
      }
  });

  it('archive by messageIds and bulk_modify label each message they move out, in the same batchModify', async () => {
    const s = await started();
    const [t] = inboxThreads(s);
    const ids = messagesOf(s, t as string).map((m) => m.id);
    await s.call('list_labels');
    // The first move creates the label; measured on the second.
    expect((await s.call('archive', { threadId: inboxThreads(s)[1] })).isError).toBe(false);
    s.sandbox.resetStats();
    const r = await s.call('archive', { messageIds: ids });
    expect(r.isError, r.text).toBe(false);
    expect(spent(s)['messages.batchModify']).toBe(1);
    const agent = labelId(s, 'mailwarden');
    for (const m of messagesOf(s, t as string)) {
      expect(m.labelIds).not.toContain('INBOX');
      expect(m.labelIds).toContain(agent);
    }

    const forums = view(s)
      .messages.filter((m) => m.labelIds.includes('INBOX') && m.labelIds.includes('CATEGORY_FORUMS'))
      .map((m) => m.id);
    expect(forums.length).toBeGreaterThan(0);
    s.sandbox.resetStats();
    const bulk = await s.call('bulk_modify', { query: 'in:inbox category:forums', remove: ['INBOX'] });
    expect(bulk.isError, bulk.text).toBe(false);
    expect(spent(s)['messages.batchModify']).toBe(1);
    for (const m of view(s).messages.filter((x) => forums.includes(x.id))) {
      expect(m.labelIds).not.toContain('INBOX');
      expect(m.labelIds).toContain(agent);
    }
  });

  it('null: nothing is labelled and no label is made', async () => {
    const s = await started({ default: { ...POLICY.default, agentLabel: null } });
    const [t] = inboxThreads(s);
    s.sandbox.resetStats();
    expect((await s.call('archive', { threadId: t })).isError).toBe(false);
    expect(spent(s)['labels.create']).toBeUndefined();
    expect(labelId(s, 'mailwarden')).toBeUndefined();
    for (const m of messagesOf(s, t as string)) expect(m.labelIds).not.toContain('INBOX');
  });
});

describe('an answered call sends nothing more', () => {
  it('search under a persistent 503 without Retry-After: no request reaches Gmail after the error answer', async () => {
    const s = await started();
    s.sandbox.faults.script([{ kind: 'http503' }]);
    s.sandbox.resetStats();
    const r = await s.call('search', { query: 'in:inbox', maxResults: 10 });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('upstream_unavailable');
    const atAnswer = s.sandbox.stats().requests;
    // Longer than the last backoff a retry could still be sleeping (2 s, jittered to 2.5 s).
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(s.sandbox.stats().requests).toBe(atAnswer);
  });

  it('archive of several threads under the same fault: none of its reads goes out after the answer', async () => {
    const s = await started();
    const threads = inboxThreads(s).slice(0, 12);
    s.sandbox.faults.script([{ kind: 'http503' }]);
    s.sandbox.resetStats();
    const r = await s.call('archive', { threadIds: threads });
    expect(r.isError).toBe(true);
    const atAnswer = s.sandbox.stats().requests;
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(s.sandbox.stats().requests).toBe(atAnswer);
    for (const t of threads) for (const m of messagesOf(s, t)) expect(m.labelIds).toContain('INBOX');
  });
});
