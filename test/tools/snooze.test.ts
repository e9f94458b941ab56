import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

/*
 * Snooze end to end: the built server over stdio, the SDK client, the sandbox mailbox. The first
 * server's clock is Monday 2026-06-15 10:00 in Berlin; the second one starts on Thursday
 * 2026-06-18 at 10:00, after some snoozes fell due and before others.
 */
const TZ = 'Europe/Berlin';
const MONDAY = '2026-06-15T08:00:00Z';
const THURSDAY = '2026-06-18T08:00:00Z';

let sandbox: Sandbox;
let early: Stack;
let late: Stack;
const t: Record<string, string> = {};

const view = () => sandbox.mailbox(DEMO_ADDRESS);
const labelId = (name: string) => view().labels.find((l) => l.name === name)?.id;
/** Per message of a thread, its live label ids. */
const labelsOf = (threadId: string) =>
  view()
    .messages.filter((m) => m.threadId === threadId)
    .map((m) => m.labelIds);
const batchModifies = () => sandbox.stats().byMethod['messages.batchModify']?.requests ?? 0;

interface PerThread {
  changed: string[];
  failed: Array<{ threadId: string; code: string }>;
  notAttempted: string[];
}
interface Sweep {
  dryRun: boolean;
  dueThreads: string[];
  returned: string[];
  pending: string[];
  batches: Array<{ label: string; kind: string; outcome: string; threadIds: string[] }>;
  labelsDeleted: string[];
  labelsKept: Array<{ label: string }>;
  ok: boolean;
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
  // Inbox threads, the first one with several messages so "every message" is tested.
  const v = view();
  const inbox = v.threads.filter((th) => {
    const msgs = v.messages.filter((m) => m.threadId === th.id);
    return msgs.some((m) => m.labelIds.includes('INBOX')) && !msgs.some((m) => m.labelIds.includes('TRASH'));
  });
  const multi = inbox.find((th) => th.messageIds.length >= 3);
  if (!multi) throw new Error('the demo corpus has no inbox thread with 3+ messages');
  const rest = inbox.filter((th) => th !== multi);
  for (const [i, key] of ['a', 'b', 'c', 'd', 'e', 'f'].entries()) {
    t[key] = i === 0 ? multi.id : (rest[i]?.id ?? '');
  }
  early = await startStack({ existingSandbox: sandbox, env: { TZ, MAILWARDEN_NOW: MONDAY } });
});

afterAll(async () => {
  await early?.close();
  await late?.close();
  await sandbox?.close();
});

describe('snooze', () => {
  it('takes threads out of the inbox onto a day label, due at the start of that day', async () => {
    const r = await early.call('snooze', { threadIds: [t['a'], t['b']], until: '2026-06-17' });
    expect(r.isError).toBe(false);
    expect(r.structured).toMatchObject({
      label: 'MCP/Snoozed/2026-06-17',
      dueAt: '2026-06-17T00:00:00+02:00',
      timeZone: TZ,
      changed: [t['a'], t['b']],
      failed: [],
      notAttempted: [],
    });
    const id = labelId('MCP/Snoozed/2026-06-17');
    expect(id).toBeDefined();
    expect(labelId('MCP/Snoozed')).toBeDefined();
    for (const key of ['a', 'b']) {
      const msgs = labelsOf(t[key] as string);
      expect(msgs.length).toBeGreaterThan(0);
      for (const labels of msgs) {
        expect(labels).toContain(id);
        expect(labels).not.toContain('INBOX');
      }
    }
    expect(labelsOf(t['a'] as string).length).toBeGreaterThanOrEqual(3);
  });

  it('snoozes to a minute, and replaces an earlier snooze', async () => {
    expect(
      (await early.call('snooze', { threadId: t['c'], until: 'thursday 9am' })).structured,
    ).toMatchObject({
      label: 'MCP/Snoozed/2026-06-18T0900',
      dueAt: '2026-06-18T09:00:00+02:00',
    });
    await early.call('snooze', { threadId: t['e'], until: 'tomorrow' });
    const r = await early.call('snooze', { threadId: t['e'], until: '2026-06-17 8am' });
    expect(r.structured).toMatchObject({ label: 'MCP/Snoozed/2026-06-17T0800', changed: [t['e']] });
    const old = labelId('MCP/Snoozed/2026-06-16');
    for (const labels of labelsOf(t['e'] as string)) {
      expect(labels).toContain(labelId('MCP/Snoozed/2026-06-17T0800'));
      expect(labels).not.toContain(old);
    }
    await early.call('snooze', { threadIds: [t['d'], t['f']], until: 'in 2 weeks' });
  });

  it('refuses a past, unreadable or ambiguous until before writing anything', async () => {
    const before = view();
    const past = await early.call('snooze', { threadId: t['f'], until: 'today 9am' });
    expect(past.isError).toBe(true);
    expect(past.error).toMatchObject({ code: 'invalid_input', field: 'until' });
    const bad = await early.call('snooze', { threadId: t['f'], until: 'whenever' });
    expect(bad.error).toMatchObject({ code: 'invalid_input', field: 'until' });
    expect(bad.error?.message).toContain('tomorrow 9am');
    const both = await early.call('snooze', { threadId: t['f'], threadIds: [t['f']], until: 'tomorrow' });
    expect(both.error).toMatchObject({ code: 'invalid_input', field: 'threadIds' });
    expect(view()).toEqual(before);
  });

  it('reports a thread that does not exist and still snoozes the others', async () => {
    const r = await early.call('snooze', { threadIds: ['ffffffffffffffff', t['f']], until: '2026-06-29' });
    const out = r.structured as unknown as PerThread;
    expect(out.changed).toEqual([t['f']]);
    expect(out.failed).toMatchObject([{ threadId: 'ffffffffffffffff', code: 'not_found' }]);
  });

  it('unsnoozes back to the inbox with the snooze label gone', async () => {
    const r = await early.call('unsnooze', { threadId: t['f'] });
    expect(r.structured).toMatchObject({ changed: [t['f']], failed: [] });
    for (const labels of labelsOf(t['f'] as string)) {
      expect(labels).toContain('INBOX');
      expect(
        labels.some((l) =>
          view()
            .labels.find((x) => x.id === l)
            ?.name.startsWith('MCP/Snoozed/'),
        ),
      ).toBe(false);
    }
  });

  it('lists snoozed threads earliest first with fenced subjects', async () => {
    const r = await early.call('list_snoozed');
    const out = r.structured as {
      total: number;
      threads: Array<{ threadId: string; label: string; dueAt: string; subject: string; overdue: boolean }>;
    };
    expect(out.total).toBe(5);
    expect(out.threads.map((x) => x.label)).toEqual([
      'MCP/Snoozed/2026-06-17',
      'MCP/Snoozed/2026-06-17',
      'MCP/Snoozed/2026-06-17T0800',
      'MCP/Snoozed/2026-06-18T0900',
      'MCP/Snoozed/2026-06-29',
    ]);
    // a and b share a label, so their order between them is the index's.
    expect(new Set(out.threads.slice(0, 2).map((x) => x.threadId))).toEqual(new Set([t['a'], t['b']]));
    expect(out.threads.slice(2).map((x) => x.threadId)).toEqual([t['e'], t['c'], t['d']]);
    for (const row of out.threads) {
      expect(row.subject).toMatch(/^\u27E6mail [0-9a-f]+\u27E7/);
      expect(unfence(row.subject).length).toBeGreaterThan(0);
      expect(row.overdue).toBe(false);
    }
  });
});

describe('sweep, on a server started after some snoozes fell due', () => {
  beforeAll(async () => {
    late = await startStack({ existingSandbox: sandbox, env: { TZ, MAILWARDEN_NOW: THURSDAY } });
  });

  it('lists what is overdue', async () => {
    const out = (await late.call('list_snoozed')).structured as {
      threads: Array<{ threadId: string; overdue: boolean }>;
    };
    const overdue = Object.fromEntries(out.threads.map((x) => [x.threadId, x.overdue]));
    expect(overdue).toEqual({
      [t['a'] as string]: true,
      [t['b'] as string]: true,
      [t['e'] as string]: true,
      [t['c'] as string]: true,
      [t['d'] as string]: false,
    });
  });

  it('dryRun says what is due and writes nothing', async () => {
    const before = view();
    const writes = batchModifies();
    const r = await late.call('sweep_snoozed', { dryRun: true });
    expect(r.isError).toBe(false);
    const out = r.structured as unknown as Sweep;
    expect(out.dryRun).toBe(true);
    expect(new Set(out.dueThreads)).toEqual(new Set([t['a'], t['b'], t['e'], t['c']]));
    expect(out.batches).toEqual([]);
    expect(out.labelsDeleted).toEqual([]);
    expect(view()).toEqual(before);
    expect(batchModifies()).toBe(writes);
  });

  it('interrupted mid-way by a failing batch, it loses nothing; run again, it finishes without repeating', async () => {
    // Due labels in order: 06-16 (emptied by the re-snooze), 06-17 (a, b), 06-17T0800 (e),
    // 06-18T0900 (c). The second batch fails on every retry.
    sandbox.faults.script([
      { method: 'messages.batchModify', kind: 'http503', retryAfterSeconds: 0, skip: 1, times: 4 },
    ]);
    const first = (await late.call('sweep_snoozed')).structured as unknown as Sweep;
    sandbox.faults.clear();
    expect(first.ok).toBe(false);
    expect(first.batches.map((b) => [b.label, b.outcome])).toEqual([
      ['MCP/Snoozed/2026-06-17', 'ok'],
      ['MCP/Snoozed/2026-06-17T0800', 'failed'],
      ['MCP/Snoozed/2026-06-18T0900', 'ok'],
    ]);
    expect(new Set(first.returned)).toEqual(new Set([t['a'], t['b'], t['c']]));
    expect(first.pending).toEqual([t['e']]);
    expect(new Set(first.labelsDeleted)).toEqual(
      new Set(['MCP/Snoozed/2026-06-16', 'MCP/Snoozed/2026-06-17', 'MCP/Snoozed/2026-06-18T0900']),
    );
    expect(first.labelsKept.map((k) => k.label)).toEqual(['MCP/Snoozed/2026-06-17T0800']);
    // The thread whose batch failed is still snoozed, not lost in the archive.
    const kept = labelId('MCP/Snoozed/2026-06-17T0800');
    for (const labels of labelsOf(t['e'] as string)) {
      expect(labels).toContain(kept);
      expect(labels).not.toContain('INBOX');
    }

    const writes = batchModifies();
    const second = (await late.call('sweep_snoozed')).structured as unknown as Sweep;
    expect(second.ok).toBe(true);
    expect(second.returned).toEqual([t['e']]);
    expect(second.batches).toMatchObject([
      { label: 'MCP/Snoozed/2026-06-17T0800', outcome: 'ok', threadIds: [t['e']] },
    ]);
    expect(batchModifies()).toBe(writes + 1);
    expect(second.labelsDeleted).toEqual(['MCP/Snoozed/2026-06-17T0800']);

    for (const key of ['a', 'b', 'c', 'e']) {
      for (const labels of labelsOf(t[key] as string)) {
        expect(labels).toContain('INBOX');
        expect(labels).toContain('UNREAD');
        expect(labels.filter((l) => l === 'INBOX')).toHaveLength(1);
      }
    }
    for (const name of ['2026-06-16', '2026-06-17', '2026-06-17T0800', '2026-06-18T0900']) {
      expect(labelId(`MCP/Snoozed/${name}`)).toBeUndefined();
    }
    // Not yet due: untouched.
    for (const labels of labelsOf(t['d'] as string)) {
      expect(labels).toContain(labelId('MCP/Snoozed/2026-06-29'));
      expect(labels).not.toContain('INBOX');
    }

    const third = (await late.call('sweep_snoozed')).structured as unknown as Sweep;
    expect(third).toMatchObject({ ok: true, dueThreads: [], returned: [], batches: [] });
  });
});
