import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { SeedThread, SeedUser } from '../../src/sandbox/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { BASE, HOUR, textMail } from '../sandbox/helpers.js';

/**
 * The filter tools end to end: the built server over stdio, the SDK client, the sandbox. Every
 * assertion about what changed is read from the sandbox's own state.
 */

let n = 0;
function one(key: string, from: string, labelIds: string[], subject = `Mail ${key}`): SeedThread {
  n += 1;
  return {
    key,
    messages: [
      {
        raw: textMail({ from, to: DEMO_ADDRESS, subject, messageId: `${key}@seed.example` }),
        labelIds,
        internalDate: BASE + n * HOUR,
      },
    ],
  };
}

function seed(): SeedUser {
  n = 0;
  return {
    email: DEMO_ADDRESS,
    userLabels: [{ id: 'Label_1', name: 'Receipts' }],
    threads: [
      one('r1', 'Shop <receipts@shop.example>', ['INBOX', 'UNREAD']),
      one('r2', 'Shop <receipts@shop.example>', ['INBOX']),
      one('r3', 'receipts@shop.example', ['INBOX', 'UNREAD', 'CATEGORY_UPDATES']),
      one('r4', 'receipts@shop.example', ['Label_1']),
      one('r-spam', 'receipts@shop.example', ['SPAM']),
      one('r-trash', 'receipts@shop.example', ['TRASH']),
      one('news', 'Shop News <news@shop.example>', ['INBOX']),
      one('f1', 'Pal <friend@pals.example>', ['INBOX', 'UNREAD']),
      one('f2', 'friend@pals.example', ['INBOX']),
    ],
  };
}

let stack: Stack;
const labelsOf = () =>
  new Map(stack.sandbox.mailbox(DEMO_ADDRESS).messages.map((m) => [m.threadId, [...m.labelIds].sort()]));
const tid = (key: string) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);

beforeAll(async () => {
  stack = await startStack({
    sandbox: { users: [seed()] },
    env: { MAILWARDEN_TOOLS: 'read,manage,filters' },
  });
});
afterAll(async () => {
  await stack?.close();
});

const RECEIPTS = {
  criteria: { from: 'receipts@shop.example' },
  addLabels: ['receipts', 'Shop/Orders'],
  removeLabels: ['INBOX'],
};

describe('filters tier', () => {
  it('lists the four filter tools only with the tier on', async () => {
    const names = (await stack.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['list_filters', 'preview_filter', 'create_filter', 'delete_filter']),
    );
    expect(names).not.toContain('create_draft');
  });

  it('starts with no filters', async () => {
    const r = await stack.call('list_filters');
    expect(r.isError).toBe(false);
    expect(r.structured).toEqual({ filters: [], forwarding: 0 });
  });

  it('preview counts the mail the criteria match now (spam and trash aside) and changes nothing', async () => {
    const before = labelsOf();
    const r = await stack.call('preview_filter', RECEIPTS);
    expect(r.isError, r.text).toBe(false);
    expect(r.structured).toMatchObject({
      query: 'from:(receipts@shop.example)',
      currentMatches: { count: 4, more: false },
      identicalFilters: [],
      overlappingFilters: [],
      labelsToCreate: ['Shop/Orders'],
      discardsFutureMatches: false,
    });
    const sample = r.structured['sample'] as Array<{ threadId: string; from: string }>;
    expect(sample.map((s) => s.threadId).sort()).toEqual([tid('r1'), tid('r2'), tid('r3'), tid('r4')].sort());
    expect(unfence(sample[0]?.from ?? '')).toContain('receipts@shop.example');
    expect(labelsOf()).toEqual(before);
    expect(stack.sandbox.mailbox(DEMO_ADDRESS).labels.some((l) => l.name === 'Shop/Orders')).toBe(false);
  });

  it('says when future matches would vanish from view', async () => {
    const r = await stack.call('preview_filter', {
      criteria: { from: 'friend@pals.example' },
      removeLabels: ['INBOX', 'UNREAD'],
    });
    expect(r.structured).toMatchObject({
      discardsFutureMatches: true,
      discardReason: 'skips_inbox_without_label',
    });
    const t = await stack.call('preview_filter', { criteria: { subject: 'Mail' }, addLabels: ['TRASH'] });
    expect(t.structured).toMatchObject({ discardsFutureMatches: true, discardReason: 'trash' });
  });

  it('create_filter with applyToExisting changes exactly the matching messages', async () => {
    const before = labelsOf();
    const r = await stack.call('create_filter', { ...RECEIPTS, applyToExisting: true, verify: true });
    expect(r.isError, r.text).toBe(false);
    const created = r.structured['createdLabels'] as Array<{ id: string; name: string }>;
    expect(created.map((l) => unfence(l.name))).toEqual(['Shop', 'Shop/Orders']);
    const orders = created[1]?.id ?? '';
    expect(r.structured['applied']).toEqual({
      matched: 4,
      more: false,
      submitted: 4,
      chunks: 1,
      failedChunks: [],
      verified: { checked: 4, ok: 4, mismatched: [] },
    });
    expect(r.structured['confirmation']).toBe('unavailable');
    const filter = r.structured['filter'] as { addLabels: Array<{ id: string; name: string }> };
    // User label names are mail-made (issue 23): fenced; Gmail's Label_N ids and INBOX are not.
    expect(filter.addLabels.map((l) => ({ ...l, name: unfence(l.name) }))).toEqual([
      { id: 'Label_1', name: 'Receipts' },
      { id: orders, name: 'Shop/Orders' },
    ]);
    expect(r.structured['filter']).toMatchObject({
      criteria: { from: 'receipts@shop.example' },
      removeLabels: [{ id: 'INBOX', name: 'INBOX' }],
      flags: [],
    });
    const after = labelsOf();
    const changed = new Set(['r1', 'r2', 'r3', 'r4'].map(tid));
    for (const [threadId, labels] of after) {
      if (!changed.has(threadId)) {
        expect(labels, threadId).toEqual(before.get(threadId));
        continue;
      }
      const want = new Set(before.get(threadId));
      want.delete('INBOX');
      want.add('Label_1');
      want.add(orders);
      expect(labels, threadId).toEqual([...want].sort());
    }
  });

  it('the filter is real: new mail from the sender is labelled on delivery', async () => {
    const msg = stack.sandbox.deliver(
      DEMO_ADDRESS,
      textMail({
        from: 'receipts@shop.example',
        to: DEMO_ADDRESS,
        subject: 'Order 5',
        messageId: 'o5@seed.example',
      }),
      ['INBOX', 'UNREAD'],
    );
    const stored = stack.sandbox.mailbox(DEMO_ADDRESS).messages.find((m) => m.id === msg.id);
    expect(stored?.labelIds).toContain('Label_1');
    expect(stored?.labelIds).not.toContain('INBOX');
  });

  it('lists the filter with label names, and finds identical and overlapping criteria', async () => {
    const list = await stack.call('list_filters');
    const filters = list.structured['filters'] as Array<{ id: string; addLabels: Array<{ name: string }> }>;
    expect(filters).toHaveLength(1);
    expect(filters[0]?.addLabels.map((l) => unfence(l.name))).toEqual(['Receipts', 'Shop/Orders']);
    const id = filters[0]?.id ?? '';
    const same = await stack.call('preview_filter', {
      criteria: { from: 'RECEIPTS@shop.example' },
      addLabels: ['Receipts'],
    });
    expect(same.structured['identicalFilters']).toEqual([id]);
    const overlap = await stack.call('preview_filter', {
      criteria: { from: 'receipts@shop.example OR news@shop.example' },
      addLabels: ['Receipts'],
    });
    expect(overlap.structured['overlappingFilters']).toEqual([
      { id, fields: ['from'], shared: ['receipts@shop.example'] },
    ]);
    expect(overlap.structured['currentMatches']).toMatchObject({ count: 6 });
  });

  it('refuses a duplicate, applyToExisting on negatedQuery alone, and trashing existing mail; nothing is written', async () => {
    const before = labelsOf();
    const labels = stack.sandbox.mailbox(DEMO_ADDRESS).labels.length;
    const dup = await stack.call('create_filter', RECEIPTS);
    expect(dup.error).toMatchObject({ code: 'invalid_input', field: 'criteria' });
    const neg = await stack.call('create_filter', {
      criteria: { negatedQuery: 'from:friend@pals.example' },
      addLabels: ['Everything'],
      applyToExisting: true,
    });
    expect(neg.error).toMatchObject({ code: 'invalid_input', field: 'applyToExisting' });
    const trash = await stack.call('create_filter', {
      criteria: { from: 'friend@pals.example' },
      addLabels: ['TRASH'],
      applyToExisting: true,
    });
    expect(trash.error).toMatchObject({ code: 'invalid_input', field: 'applyToExisting' });
    const bad = await stack.call('create_filter', { criteria: { subject: '"unclosed' }, addLabels: ['X'] });
    expect(bad.error).toMatchObject({ code: 'invalid_input', field: 'criteria.subject' });
    const fwd = await stack.call('create_filter', { ...RECEIPTS, forward: 'evil@attacker.example' });
    expect(fwd.error).toMatchObject({ code: 'invalid_input' });
    expect(labelsOf()).toEqual(before);
    expect(stack.sandbox.mailbox(DEMO_ADDRESS).labels.length).toBe(labels);
    expect(((await stack.call('list_filters')).structured['filters'] as unknown[]).length).toBe(1);
  });

  it('delete_filter removes it and returns its definition', async () => {
    const list = await stack.call('list_filters');
    const id = (list.structured['filters'] as Array<{ id: string }>)[0]?.id ?? '';
    const r = await stack.call('delete_filter', { filterId: id });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['deleted']).toMatchObject({ id, criteria: { from: 'receipts@shop.example' } });
    expect((await stack.call('list_filters')).structured['filters']).toEqual([]);
    const again = await stack.call('delete_filter', { filterId: id });
    expect(again.error).toMatchObject({ code: 'not_found' });
  });
});

describe('filters tier off', () => {
  it('the tools are not listed with the default tiers', async () => {
    const other = await startStack({ existingSandbox: stack.sandbox });
    try {
      const names = (await other.client.listTools()).tools.map((t) => t.name);
      for (const t of ['list_filters', 'preview_filter', 'create_filter', 'delete_filter'])
        expect(names).not.toContain(t);
    } finally {
      await other.close();
    }
  });
});
