import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/mail/clock.js';
import { MailError } from '../../src/mail/errors.js';
import type { Label } from '../../src/mail/types.js';
import { Fence } from '../../src/mcp/untrusted.js';
import type { LabelChange, LabelInput, Mailbox } from '../../src/providers/mailbox.js';
import { runChunks } from '../../src/tools/bulk/chunks.js';
import type { ToolContext } from '../../src/tools/common/define.js';
import { GMAIL_LABEL_COLORS, ensureLabel, resolveChange } from '../../src/tools/common/label-changes.js';

/** Only what these tests touch; anything else is a bug in the test and throws. */
function fakeMailbox(over: Partial<Mailbox>): Mailbox {
  return new Proxy(
    { account: 'default', usage: () => ({ requests: 0, quotaUnits: 0 }), ...over } as Mailbox,
    {
      get(target, key) {
        const v = (target as unknown as Record<string | symbol, unknown>)[key];
        if (v === undefined && typeof key === 'string' && key !== 'then')
          throw new Error(`unexpected call ${key}`);
        return v;
      },
    },
  );
}

function context(mailbox: Mailbox, signal = new AbortController().signal) {
  const progress: Array<[number, number | undefined]> = [];
  const ctx: ToolContext = {
    mailbox,
    clock: new ManualClock(0),
    fence: new Fence(),
    signal,
    log: { info: () => undefined, warn: () => undefined },
    serverVersion: '0',
    progress: (done, total) => {
      progress.push([done, total]);
      return Promise.resolve();
    },
  };
  return { ctx, progress };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);
const change: LabelChange = { add: ['Label_1'], remove: [] };

describe('runChunks', () => {
  it('reports a failing chunk on its own and goes on; progress after each chunk', async () => {
    let call = 0;
    const { ctx, progress } = context(
      fakeMailbox({
        modifyMessages: () => {
          call += 1;
          return call === 2
            ? Promise.reject(new MailError('upstream_unavailable', 'HTTP 503'))
            : Promise.resolve();
        },
      }),
    );
    const run = await runChunks(ctx, [{ ids: ids(2500), change }]);
    expect(run.chunks.map((c) => c.outcome)).toEqual(['ok', 'failed', 'ok']);
    expect(run.chunks[1]?.error).toEqual({ code: 'upstream_unavailable', message: 'HTTP 503' });
    expect([run.submitted, run.failed, run.notAttempted, run.cancelled]).toEqual([1500, 1000, 0, false]);
    expect(run.sent.size).toBe(2500);
    expect(run.accepted).toHaveLength(1500);
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('honours cancellation between chunks and reports what was done', async () => {
    const abort = new AbortController();
    const { ctx } = context(
      fakeMailbox({
        modifyMessages: (batch: string[]) => {
          // The user cancels while the first chunk is in flight; it still completes.
          if (batch[0] === 'm0') abort.abort();
          return Promise.resolve();
        },
      }),
      abort.signal,
    );
    const run = await runChunks(ctx, [{ ids: ids(2500), change }]);
    expect(run.chunks.map((c) => c.outcome)).toEqual(['ok', 'notAttempted', 'notAttempted']);
    expect([run.submitted, run.failed, run.notAttempted, run.cancelled]).toEqual([1000, 0, 1500, true]);
    expect(run.sent.size).toBe(1000);
  });

  it('chunks each job separately (undo groups with different changes)', async () => {
    const seen: Array<[number, LabelChange]> = [];
    const { ctx } = context(
      fakeMailbox({
        modifyMessages: (batch: string[], c: LabelChange) => {
          seen.push([batch.length, c]);
          return Promise.resolve();
        },
      }),
    );
    await runChunks(ctx, [
      { ids: ids(1200), change },
      { ids: ids(3), change: { add: [], remove: ['Label_1'] } },
    ]);
    expect(seen.map(([n]) => n)).toEqual([1000, 200, 3]);
    expect(seen[2]?.[1]).toEqual({ add: [], remove: ['Label_1'] });
  });
});

describe('label resolution', () => {
  const labels: Label[] = [
    { id: 'INBOX', name: 'INBOX', type: 'system' },
    { id: 'UNREAD', name: 'UNREAD', type: 'system' },
    { id: 'Label_1', name: 'Work', type: 'user' },
    { id: 'Label_2', name: 'Work/Projects', type: 'user' },
  ];

  it('has the 102 documented palette colours', () => {
    expect(GMAIL_LABEL_COLORS.size).toBe(102);
    expect(GMAIL_LABEL_COLORS.has('#4a86e8')).toBe(true);
  });

  it('takes ids and names in any case; unknown names in add are to be created; ids must exist', async () => {
    const mailbox = fakeMailbox({ listLabels: () => Promise.resolve(labels) });
    const r = await resolveChange(
      mailbox,
      ['work/projects', 'Label_1', 'New/Thing', 'new/thing'],
      ['inbox', 'UNREAD'],
    );
    expect(r.add).toEqual([
      { kind: 'existing', label: labels[3] },
      { kind: 'existing', label: labels[2] },
      { kind: 'create', name: 'New/Thing' },
    ]);
    expect(r.remove.map((l) => l.id)).toEqual(['INBOX', 'UNREAD']);
    await expect(resolveChange(mailbox, ['Label_77'], [])).rejects.toMatchObject({ field: 'add' });
    await expect(resolveChange(mailbox, ['CATEGORY_NOPE'], [])).rejects.toMatchObject({ field: 'add' });
    await expect(resolveChange(mailbox, [], ['Nope'])).rejects.toMatchObject({ field: 'remove' });
    await expect(resolveChange(mailbox, [], [])).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('ensureLabel creates missing parents and treats a concurrent 409 as "exists now"', async () => {
    const created: string[] = [];
    const server: Label[] = [...labels];
    const mailbox = fakeMailbox({
      capabilities: { history: true, filters: true, organisation: 'labels' },
      listLabels: () => Promise.resolve([...server, { id: 'Label_9', name: 'Clients', type: 'user' }]),
      createLabel: (input: LabelInput) => {
        if (input.name === 'Clients') return Promise.reject(new MailError('invalid_input', 'HTTP 409'));
        created.push(input.name);
        const l: Label = { id: `Label_${10 + created.length}`, name: input.name, type: 'user' };
        server.push(l);
        return Promise.resolve(l);
      },
    });
    const known = [...labels];
    const out = await ensureLabel(mailbox, 'Clients/Acme', known);
    expect(created).toEqual(['Clients/Acme']);
    expect(out.label.name).toBe('Clients/Acme');
    expect(out.created.map((l) => l.name)).toEqual(['Clients/Acme']);
    expect(known.map((l) => l.name)).toContain('Clients');
  });
});
