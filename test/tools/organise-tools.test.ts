import { unfence } from '../../src/mcp/untrusted.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { CallOutcome, Stack } from '../helpers/stack.js';

/** create_label, modify_labels and the one-change thread tools, through the MCP client. */

interface LabelOut {
  label: { id: string; name: string; type: string; color?: { backgroundColor: string; textColor: string } };
  created: boolean;
  createdParents: string[];
  colorChanged: boolean;
}
interface ThreadsOut {
  changed: Array<{ threadId: string; messages?: number }>;
  failed: Array<{ threadId: string; code: string; message: string }>;
  notAttempted: string[];
  createdLabels?: Array<{ id: string; name: string }>;
}

let stack: Stack;
const tid = (key: string): string => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);
const view = () => stack.sandbox.mailbox(DEMO_ADDRESS);
const labelsOf = (threadId: string): string[][] =>
  view()
    .messages.filter((m) => m.threadId === threadId)
    .map((m) => [...m.labelIds].sort());
const labelNamed = (name: string) => view().labels.find((l) => l.name === name);

function expectInvalid(r: CallOutcome, field: string, message?: RegExp): void {
  expect(r.isError, r.text).toBe(true);
  expect(r.error?.code).toBe('invalid_input');
  expect(r.error?.field).toBe(field);
  if (message) expect(r.error?.message).toMatch(message);
}

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('create_label', () => {
  it('creates a nested label with its missing parents, then returns it on a second call instead of duplicating', async () => {
    const before = view().labels.length;
    const first = await stack.call('create_label', { name: 'Clients/Acme/Invoices' });
    expect(first.isError, first.text).toBe(false);
    const made = first.structured as unknown as LabelOut;
    expect(made).toMatchObject({
      created: true,
      createdParents: ['Clients', 'Clients/Acme'],
      colorChanged: false,
    });
    expect(view().labels.length).toBe(before + 3);

    const again = await stack.call('create_label', { name: ' clients/acme/INVOICES ' });
    const same = again.structured as unknown as LabelOut;
    expect(same).toMatchObject({ created: false, createdParents: [], label: { id: made.label.id } });
    expect(view().labels.length).toBe(before + 3);
  });

  it('an existing parent is reused as spelled; colours from the palette are applied, to an existing label too', async () => {
    const r = await stack.call('create_label', {
      name: 'work/Contracts',
      backgroundColor: '#FB4C2F',
      textColor: '#ffffff',
    });
    const out = r.structured as unknown as LabelOut;
    expect(out).toMatchObject({ created: true, createdParents: [], colorChanged: true });
    expect(out.label.name).toBe('Work/Contracts');
    expect(out.label.color).toEqual({ backgroundColor: '#fb4c2f', textColor: '#ffffff' });
    const recolour = await stack.call('create_label', {
      name: 'Travel',
      backgroundColor: '#16a766',
      textColor: '#000000',
    });
    expect(recolour.structured).toMatchObject({
      created: false,
      colorChanged: true,
      label: { id: 'Label_5' },
    });
  });

  it('refuses colours outside the palette, a lone colour and empty levels, naming the field', async () => {
    const history = view().historyId;
    expectInvalid(
      await stack.call('create_label', { name: 'X', backgroundColor: '#123456', textColor: '#ffffff' }),
      'backgroundColor',
      /palette/,
    );
    expectInvalid(await stack.call('create_label', { name: 'X', textColor: '#ffffff' }), 'backgroundColor');
    expectInvalid(await stack.call('create_label', { name: 'A//B' }), 'name', /empty level/);
    expectInvalid(
      await stack.call('create_label', { name: 'INBOX', backgroundColor: '#000000', textColor: '#ffffff' }),
      'name',
    );
    expect(view().historyId).toBe(history);
  });
});

describe('modify_labels and the thread tools', () => {
  it('reports each thread: changed, and failed with its error for an unknown id; unknown names are created', async () => {
    const a = tid(DEMO_FACTS.keys.inlineReply);
    const b = tid(DEMO_FACTS.keys.forwarded);
    const r = await stack.call('modify_labels', {
      threadIds: [a, 'ffffffffffffffff', b],
      add: ['Needs reply', 'Work'],
      remove: ['inbox'],
    });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as ThreadsOut;
    expect(out.changed.map((c) => c.threadId).sort()).toEqual([a, b].sort());
    expect(out.failed).toEqual([
      expect.objectContaining({ threadId: 'ffffffffffffffff', code: 'not_found' }),
    ]);
    expect(out.notAttempted).toEqual([]);
    const created = labelNamed('Needs reply');
    expect(out.createdLabels?.map((l) => ({ ...l, name: unfence(l.name) }))).toEqual([
      { id: created?.id, name: 'Needs reply' },
    ]);
    for (const t of [a, b]) {
      for (const labels of labelsOf(t)) {
        expect(labels).toContain(created?.id);
        expect(labels).toContain('Label_1');
        expect(labels).not.toContain('INBOX');
      }
    }
  });

  it('archive, mark_read, mark_unread, trash and untrash change every message of the thread', async () => {
    const t = tid(DEMO_FACTS.keys.outlookReply);
    const run = async (tool: string) => {
      const r = await stack.call(tool, { threadId: t });
      expect(r.isError, r.text).toBe(false);
      expect((r.structured as unknown as ThreadsOut).changed.map((c) => c.threadId)).toEqual([t]);
    };
    await run('mark_unread');
    expect(labelsOf(t).every((l) => l.includes('UNREAD'))).toBe(true);
    await run('mark_read');
    expect(labelsOf(t).some((l) => l.includes('UNREAD'))).toBe(false);
    await run('archive');
    expect(labelsOf(t).some((l) => l.includes('INBOX'))).toBe(false);
    await run('trash');
    expect(labelsOf(t).every((l) => l.includes('TRASH'))).toBe(true);
    await run('untrash');
    expect(labelsOf(t).some((l) => l.includes('TRASH'))).toBe(false);
    expect(view().messages.some((m) => m.threadId === t)).toBe(true);
  });
});

describe('bad input changes nothing', () => {
  const t = () => tid(DEMO_FACTS.keys.longQuoted);
  const cases: Array<[string, () => [string, Record<string, unknown>], string, RegExp?]> = [
    [
      'an unknown label id',
      () => ['modify_labels', { threadId: t(), add: ['Label_999'] }],
      'add',
      /Label_999/,
    ],
    ['an empty change', () => ['modify_labels', { threadId: t() }], 'add'],
    [
      'removing a label that does not exist',
      () => ['modify_labels', { threadId: t(), remove: ['Nope'] }],
      'remove',
    ],
    [
      'a label both added and removed',
      () => ['modify_labels', { threadId: t(), add: ['Work'], remove: ['Label_1'] }],
      'remove',
    ],
    ['adding SENT', () => ['modify_labels', { threadId: t(), add: ['SENT'] }], 'add'],
    [
      'more than 100 threadIds',
      () => ['archive', { threadIds: Array.from({ length: 101 }, (_, i) => `a${i}`) }],
      'threadIds',
    ],
    ['threadId and threadIds together', () => ['mark_read', { threadId: t(), threadIds: [t()] }], 'threadId'],
    ['neither threadId nor threadIds', () => ['trash', {}], 'threadId'],
    ['a malformed thread id', () => ['archive', { threadId: '../x' }], 'threadId'],
    ['bulk: an empty change', () => ['bulk_modify', { query: 'in:inbox' }], 'add'],
    ['bulk: an empty query', () => ['bulk_modify', { query: '  ', add: ['STARRED'] }], 'query'],
    ['bulk: an unknown label id', () => ['bulk_modify', { query: 'in:inbox', add: ['Label_999'] }], 'add'],
    ['bulk: a bad query', () => ['bulk_modify', { query: 'is:bogus', add: ['STARRED'] }], 'query'],
    [
      'bulk: a token nobody issued',
      () => ['bulk_modify', { query: 'in:inbox', add: ['STARRED'], previewToken: 'pv_nope' }],
      'previewToken',
      /unknown token/,
    ],
    [
      'bulk: a token on a dry run',
      () => ['bulk_modify', { query: 'in:inbox', add: ['STARRED'], previewToken: 'pv_x', dryRun: true }],
      'previewToken',
    ],
    [
      'bulk: maxMessages above 100000',
      () => ['bulk_modify', { query: 'in:inbox', add: ['STARRED'], maxMessages: 100001 }],
      'maxMessages',
    ],
  ];
  for (const [what, make, field, message] of cases) {
    it(`refuses ${what}, naming ${field}`, async () => {
      const history = view().historyId;
      const labels = view().labels.length;
      const [tool, args] = make();
      expectInvalid(await stack.call(tool, args), field, message);
      expect(view().historyId).toBe(history);
      expect(view().labels.length).toBe(labels);
    });
  }
});

describe('undo_bulk_modify refuses a bad plan', () => {
  const plan = (over: Record<string, unknown> = {}, group: Record<string, unknown> = {}) => ({
    kind: 'mailwarden.undo',
    version: 1,
    account: 'default',
    createdAt: new Date().toISOString(),
    query: 'in:inbox',
    labels: {},
    groups: [{ add: ['INBOX'], remove: [], messageIds: [view().messages[0]?.id ?? 'x'], ...group }],
    ...over,
  });
  const cases: Array<[string, () => Record<string, unknown>, string, RegExp?]> = [
    ['a missing field', () => ({ ...plan(), groups: undefined }), 'plan.groups'],
    ['another kind of document', () => plan({ kind: 'something' }), 'plan.kind'],
    ['an unknown version', () => plan({ version: 2 }), 'plan.version'],
    ['another account', () => plan({ account: 'work' }), 'plan.account', /"work"/],
    [
      'a label id that no longer exists',
      () => plan({}, { remove: ['Label_999'] }),
      'plan.groups',
      /Label_999/,
    ],
    ['a group that changes nothing', () => plan({}, { add: [], remove: [] }), 'plan.groups.0'],
    ['a malformed message id', () => plan({}, { messageIds: ['a/b'] }), 'plan.groups.0.messageIds.0'],
    [
      'a message in two groups',
      () => {
        const p = plan();
        const g = (p.groups as Array<Record<string, unknown>>)[0];
        return { ...p, groups: [g, { ...g, add: ['STARRED'] }] };
      },
      'plan.groups.1.messageIds',
    ],
  ];
  for (const [what, make, field, message] of cases) {
    it(`refuses ${what}, naming ${field}`, async () => {
      const history = view().historyId;
      expectInvalid(await stack.call('undo_bulk_modify', { plan: make() }), field, message);
      expect(view().historyId).toBe(history);
    });
  }
});
