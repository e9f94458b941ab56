import { unfence } from '../../src/mcp/untrusted.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

/*
 * The write policy on bulk_modify and on labels, through the real server and the Gmail sandbox:
 * a bulk move out of the inbox is held to the day's remainder before anything is written, each
 * message it sends is counted by the cap, messages the per-message rules refuse are reported and
 * left alone, and allowedLabels stops a label before it is created.
 */

interface BulkOut {
  toWrite: number;
  submitted: number;
  failed: number;
  chunks: Array<{ index: number; ids: number; outcome: string; refused?: number; unjudged?: number }>;
  refused?: {
    messages: number;
    reasons: Array<{ rule: string; reason: string; messages: number; messageIds: string[] }>;
  };
  remainingToday?: number;
}
interface ThreadsOut {
  changed: Array<{ threadId: string }>;
  refused?: Array<{ threadId: string; rule: string; reason: string }>;
}

function raw(from: string, subject: string, id: string): string {
  return [
    `From: ${from}`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${subject}`,
    `Message-ID: <${id}@example.net>`,
    'Date: Mon, 30 Nov 2026 08:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello.',
    '',
  ].join('\r\n');
}

/** `n` messages from `from`, each its own thread; the first `archived` of them not in the inbox. */
function deliverMany(stack: Stack, from: string, tag: string, n: number, archived = 0): string[] {
  return Array.from(
    { length: n },
    (_, i) =>
      stack.sandbox.deliver(
        DEMO_ADDRESS,
        raw(from, `${tag} ${i}`, `${tag}-${i}`),
        i < archived ? ['UNREAD'] : ['INBOX', 'UNREAD'],
      ).id,
  );
}

const inboxOf = (stack: Stack): Set<string> =>
  new Set(
    stack.sandbox
      .mailbox(DEMO_ADDRESS)
      .messages.filter((m) => m.labelIds.includes('INBOX'))
      .map((m) => m.id),
  );

function moveRecords(stack: Stack): Array<Record<string, unknown>> {
  return readFileSync(join(stack.configDir, 'action-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l['kind'] === 'move' && l['tool'] === 'bulk_modify');
}

describe('bulk_modify under the daily cap (50)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ policy: { default: { dailyMoveCap: 50, protectCorrespondents: false } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('refuses a bulk archive of more than 50 inbox messages before writing anything, naming what is left', async () => {
    const before = inboxOf(stack);
    expect(before.size).toBeGreaterThan(50);
    const dry = await stack.call('bulk_modify', { query: 'in:inbox', remove: ['INBOX'], dryRun: true });
    expect(dry.isError, dry.text).toBe(false);
    expect((dry.structured as unknown as BulkOut).remainingToday).toBe(50);

    const r = await stack.call('bulk_modify', { query: 'in:inbox', remove: ['INBOX'] });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/forbidden_operation/);
    expect(r.text).toMatch(new RegExp(`would move ${before.size} messages`));
    expect(r.text).toMatch(/50 of 50 agent moves out of the inbox are left today/);
    expect(r.text).toMatch(/dailyMoveCap/);
    expect(inboxOf(stack)).toEqual(before);
    expect(moveRecords(stack)).toEqual([]);
  });

  it('lets 50 through, counts each message, and then the cap refuses a thread archive', async () => {
    const ids = deliverMany(stack, 'Bulk Sender <bulk@example.net>', 'policybulk', 50);
    const before = inboxOf(stack);
    const r = await stack.call('bulk_modify', { query: 'from:bulk@example.net in:inbox', remove: ['INBOX'] });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as BulkOut;
    expect([out.toWrite, out.submitted, out.failed]).toEqual([50, 50, 0]);
    expect(out.refused).toBeUndefined();
    expect(out.remainingToday).toBe(0);
    expect(out.chunks).toEqual([{ index: 0, ids: 50, outcome: 'ok', refused: 0, unjudged: 0 }]);
    const after = inboxOf(stack);
    for (const id of ids) expect(after.has(id)).toBe(false);
    expect(after.size).toBe(before.size - 50);

    // One line of intent and one of outcome per message, each counting one move.
    const records = moveRecords(stack);
    const moved = records.filter((l) => l['outcome'] === 'moved');
    expect(moved.map((l) => (l['ids'] as string[])[0]).sort()).toEqual([...ids].sort());
    expect(moved.every((l) => l['count'] === 1 && l['unit'] === 'message' && l['action'] === 'archive')).toBe(
      true,
    );
    expect(moved.every((l) => l['sender'] === 'bulk@example.net')).toBe(true);
    expect(records.filter((l) => l['outcome'] === 'pending')).toHaveLength(50);

    const other = [...after][0] as string;
    const threadId = stack.sandbox.mailbox(DEMO_ADDRESS).messages.find((m) => m.id === other)?.threadId;
    const a = await stack.call('archive', { threadId });
    expect(a.isError).toBe(true);
    expect(a.text).toMatch(/daily-cap/);
    expect(a.text).toMatch(/0 of 50 agent moves/);
    expect(inboxOf(stack).has(other)).toBe(true);

    // Over the remainder (0) even one message is refused before writing; a restore still works.
    const one = await stack.call('bulk_modify', {
      query: `rfc822msgid:policybulk-0@example.net`,
      add: ['TRASH'],
    });
    expect(one.isError).toBe(true);
    expect(one.text).toMatch(/0 of 50 agent moves out of the inbox are left today/);
    const back = await stack.call('bulk_modify', { query: 'from:bulk@example.net', add: ['INBOX'] });
    expect(back.isError, back.text).toBe(false);
    expect((back.structured as unknown as BulkOut).submitted).toBe(50);
    expect((back.structured as unknown as BulkOut).remainingToday).toBeUndefined();
  });
});

describe('bulk_modify and the per-message rules (guarded defaults, cap 10)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ policy: { default: { dailyMoveCap: 10 } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('moves the inbox messages, reports the ones inboxOnlyMoves refuses, and counts only what moved', async () => {
    const ids = deliverMany(stack, 'Mixed Sender <mixed@example.net>', 'policymixed', 6, 2);
    const r = await stack.call('bulk_modify', { query: 'from:mixed@example.net', add: ['TRASH'] });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as BulkOut;
    expect([out.toWrite, out.submitted]).toEqual([6, 4]);
    expect(out.chunks).toEqual([{ index: 0, ids: 6, outcome: 'ok', refused: 2, unjudged: 0 }]);
    expect(out.refused?.messages).toBe(2);
    expect(out.refused?.reasons).toEqual([
      expect.objectContaining({
        rule: 'inbox-only',
        messages: 2,
        messageIds: expect.arrayContaining(ids.slice(0, 2)),
      }),
    ]);
    expect(out.refused?.reasons[0]?.reason).toMatch(/inboxOnlyMoves/);
    expect(out.remainingToday).toBe(6);
    const view = stack.sandbox.mailbox(DEMO_ADDRESS).messages;
    for (const [i, id] of ids.entries())
      expect(view.find((m) => m.id === id)?.labelIds.includes('TRASH'), `message ${i}`).toBe(i >= 2);
  });

  it('refuses a bulk archive of a protected correspondent, message by message, as an error when nothing moved', async () => {
    const key = DEMO_FACTS.keys.awaitingOwnerReply[0] as string;
    const t = await stack.call('get_thread', { threadId: stack.sandbox.threadIdForKey(DEMO_ADDRESS, key) });
    const froms = (t.structured['messages'] as Array<{ from: string }>).map((m) => m.from);
    const address = froms
      .map((f) => /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(f)?.[0])
      .find((a) => a !== undefined && a !== DEMO_ADDRESS);
    expect(address).toBeDefined();
    const before = inboxOf(stack);
    const r = await stack.call('bulk_modify', { query: `from:${address} in:inbox`, remove: ['INBOX'] });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/protected-correspondent/);
    expect(inboxOf(stack)).toEqual(before);
  });
  it('holds an undo plan that takes mail out of the inbox to the same policy', async () => {
    const ids = deliverMany(stack, 'Plan Sender <plan@example.net>', 'policyplan', 7);
    const plan = (messageIds: string[]) => ({
      kind: 'mailwarden.undo',
      version: 1,
      account: 'default',
      createdAt: new Date().toISOString(),
      query: 'from:plan@example.net',
      labels: {},
      groups: [{ add: [], remove: ['INBOX'], messageIds }],
    });
    const before = inboxOf(stack);
    const over = await stack.call('undo_bulk_modify', { plan: plan(ids) });
    expect(over.isError).toBe(true);
    expect(over.text, over.text).toMatch(/would move 7 messages out of the inbox, but 6 of 10 agent moves/);
    expect(inboxOf(stack)).toEqual(before);

    const ok = await stack.call('undo_bulk_modify', { plan: plan(ids.slice(0, 2)) });
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.structured).toMatchObject({ submitted: 2, remainingToday: 4 });
    const after = inboxOf(stack);
    expect(ids.map((id) => after.has(id))).toEqual([false, false, true, true, true, true, true]);
  });
});

describe('allowedLabels', () => {
  let stack: Stack;
  const named = (name: string) =>
    stack.sandbox.mailbox(DEMO_ADDRESS).labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
  beforeAll(async () => {
    stack = await startStack({
      policy: {
        default: {
          dailyMoveCap: 0,
          protectCorrespondents: false,
          inboxOnlyMoves: false,
          allowedLabels: ['Receipts'],
        },
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('modify_labels may add (and create) "Receipts" but not "Secret", which is never created', async () => {
    const threadId = stack.sandbox.threadIdForKey(DEMO_ADDRESS, DEMO_FACTS.keys.longQuoted);
    const ok = await stack.call('modify_labels', { threadId, add: ['Receipts'] });
    expect(ok.isError, ok.text).toBe(false);
    expect((ok.structured as unknown as ThreadsOut).changed).toHaveLength(1);
    expect(named('Receipts')).toBeDefined();

    const no = await stack.call('modify_labels', { threadId, add: ['Secret'] });
    expect(no.isError).toBe(true);
    expect(no.text).toMatch(/forbidden_operation/);
    expect(no.text).toMatch(/allowedLabels/);
    const labels = await stack.call('list_labels', {});
    const names = (labels.structured['labels'] as Array<{ name: string }>).map((l) => unfence(l.name));
    expect(names).toContain('Receipts');
    expect(names).not.toContain('Secret');
    expect(named('Secret')).toBeUndefined();
  });

  it('create_label and bulk_modify are held to the list too; flags are not labels', async () => {
    const c = await stack.call('create_label', { name: 'Secret/Plans' });
    expect(c.isError).toBe(true);
    expect(c.text).toMatch(/allowedLabels/);
    expect(named('Secret')).toBeUndefined();
    expect(named('Secret/Plans')).toBeUndefined();

    const b = await stack.call('bulk_modify', { query: 'in:inbox', add: ['Secret'], remove: ['INBOX'] });
    expect(b.isError).toBe(true);
    expect(b.text).toMatch(/allowedLabels/);
    expect(named('Secret')).toBeUndefined();

    const star = await stack.call('bulk_modify', {
      query: 'from:nobody-at-all@example.net',
      add: ['STARRED'],
    });
    expect(star.isError, star.text).toBe(false);
  });
});
