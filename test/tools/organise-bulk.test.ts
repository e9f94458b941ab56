import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { DIGESTS_LABEL, DIGEST_QUERY, bulkSeed, labelState, lateDigest } from '../tools/organise-seed.js';

/**
 * bulk_modify and undo_bulk_modify end to end: the built server over stdio, the SDK client, the
 * sandbox holding 2,500 matching messages. Outcomes are read from the sandbox mailbox itself.
 */

interface Chunk {
  index: number;
  ids: number;
  outcome: 'ok' | 'failed' | 'notAttempted';
  error?: { code: string; message: string };
}
interface BulkOut {
  matched: { messages: number; threads: number };
  toWrite: number;
  submitted: number;
  failed: number;
  notAttempted: number;
  cancelled: boolean;
  chunks: Chunk[];
  change: { add: Array<{ id: string; name: string }>; remove: Array<{ id: string; name: string }> };
  labelsToCreate: string[];
  createdLabels: Array<{ id: string; name: string }>;
  unverifiedPredicates: string[];
  previewToken?: string;
  previewExpiresAt?: string;
  samples?: Array<{ subject: string; from: string }>;
  pinned?: number;
  newMatches?: number;
  noLongerMatching?: number;
  verified?: {
    method: string;
    applied: number;
    notApplied: number;
    unverifiable: number;
    quotaUnits: number;
  };
  undoPlan?: { groups: Array<{ add: string[]; remove: string[]; messageIds: string[] }> };
  usage: { requests: number; quotaUnits: number };
}

const DIGESTS = 2500;
const CHANGE = { add: [DIGESTS_LABEL.name], remove: ['INBOX'] };

/** The matched digests newest first: the order Gmail lists them, hence the chunk order. */
function digestsNewestFirst(stack: Stack): string[] {
  return stack.sandbox
    .mailbox(DEMO_ADDRESS)
    .messages.filter((m) => m.labelIds.includes('CATEGORY_PROMOTIONS'))
    .sort((a, b) => b.internalDate - a.internalDate)
    .map((m) => m.id);
}

const inTarget = (labels: string[] | undefined): boolean =>
  labels !== undefined && labels.includes(DIGESTS_LABEL.id) && !labels.includes('INBOX');

describe('bulk_modify: chunks, a failing chunk, undo and the action log', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ sandbox: { users: [bulkSeed(DIGESTS)] } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('reports a failed chunk 2 while chunks 1 and 3 stand, and undo restores every message exactly', async () => {
    const before = labelState(stack.sandbox.mailbox(DEMO_ADDRESS));
    const order = digestsNewestFirst(stack);
    expect(order).toHaveLength(DIGESTS);
    // skip the first batchModify, then fail more attempts than the client retries (4).
    stack.sandbox.faults.script([{ method: 'messages.batchModify', kind: 'http503', skip: 1, times: 6 }]);
    stack.sandbox.resetStats();
    const r = await stack.call('bulk_modify', { query: DIGEST_QUERY, ...CHANGE, undo: true });
    stack.sandbox.faults.clear();
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as BulkOut;
    expect(out.chunks.map((c) => [c.index, c.ids, c.outcome])).toEqual([
      [0, 1000, 'ok'],
      [1, 1000, 'failed'],
      [2, 500, 'ok'],
    ]);
    expect(out.chunks[1]?.error?.code).toBe('upstream_unavailable');
    expect([out.submitted, out.failed, out.notAttempted]).toEqual([1500, 1000, 0]);
    expect(out.unverifiedPredicates).toEqual([]);

    const after = labelState(stack.sandbox.mailbox(DEMO_ADDRESS));
    order.forEach((id, i) => {
      if (i >= 1000 && i < 2000) expect(after.get(id), `chunk 2 message ${i}`).toEqual(before.get(id));
      else expect(inTarget(after.get(id)), `message ${i}`).toBe(true);
    });
    for (const [id, labels] of before) if (!order.includes(id)) expect(after.get(id)).toEqual(labels);

    // The plan covers every message that was sent, grouped by inverse; none that already had the target state.
    const plan = out.undoPlan;
    expect(plan).toBeDefined();
    // policy.json agentLabel (default mailwarden) went on every message sent; a group of its own
    // takes it off those the write did not otherwise change.
    const agent = stack.sandbox.mailbox(DEMO_ADDRESS).labels.find((l) => l.name === 'mailwarden')?.id;
    const agentOnly = (g: { add: string[]; remove: string[] }) =>
      g.add.length === 0 && g.remove.length === 1 && g.remove[0] === agent;
    const planned = new Set(plan?.groups.filter((g) => !agentOnly(g)).flatMap((g) => g.messageIds));
    const alreadyThere = order.filter((id) => inTarget(before.get(id)));
    expect(alreadyThere.length).toBeGreaterThan(0);
    for (const id of alreadyThere) expect(planned.has(id)).toBe(false);
    expect(planned.size).toBe(DIGESTS - alreadyThere.length);

    const undo = await stack.call('undo_bulk_modify', { plan });
    expect(undo.isError, undo.text).toBe(false);
    expect(undo.structured).toMatchObject({ failed: 0, notAttempted: 0, cancelled: false });
    expect(labelState(stack.sandbox.mailbox(DEMO_ADDRESS))).toEqual(before);
  });

  it('writes an intent line before each batchModify and its outcome after, with account, tool, ids and change (mode 0600)', () => {
    const path = join(stack.configDir, 'action-log.jsonl');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const bulk = lines.filter((l) => l['tool'] === 'bulk_modify' && l['op'] === 'modifyMessages');
    // Over 1000 messages the write asks the human first; this client cannot be asked, which the
    // log records before the first write.
    const asked = lines.filter((l) => l['tool'] === 'bulk_modify' && l['op'] === 'confirm');
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(lines.indexOf(asked[0] as Record<string, unknown>)).toBeLessThan(
      lines.indexOf(bulk[0] as Record<string, unknown>),
    );
    expect(bulk.map((l) => [l['op'], (l['messageIds'] as string[]).length, l['outcome']])).toEqual([
      ['modifyMessages', 1000, 'pending'],
      ['modifyMessages', 1000, 'ok'],
      ['modifyMessages', 1000, 'pending'],
      ['modifyMessages', 1000, 'failed'],
      ['modifyMessages', 500, 'pending'],
      ['modifyMessages', 500, 'ok'],
    ]);
    // Each outcome line names the intent line it closes.
    for (let i = 0; i < bulk.length; i += 2) expect(bulk[i + 1]?.['call']).toBe(bulk[i]?.['call']);
    for (const l of bulk) {
      expect(l['account']).toBe('default');
      expect(l['change']).toEqual({ add: [DIGESTS_LABEL.id], remove: ['INBOX'] });
    }
    expect(bulk[3]?.['error']).toBe('upstream_unavailable');
    // The undo's provider writes (its per-message policy records, kind "move", are judged apart).
    const undone = lines.filter(
      (l) => l['tool'] === 'undo_bulk_modify' && l['kind'] !== 'move' && l['outcome'] !== 'pending',
    );
    expect(undone.length).toBeGreaterThan(0);
    expect(undone.filter((l) => l['outcome'] !== 'ok')).toEqual([]);
  });

  it('writes nothing when the undo plan cannot be built (its label reads fail)', async () => {
    const before = labelState(stack.sandbox.mailbox(DEMO_ADDRESS));
    // The five pages of the matched set pass; every label listing after them fails.
    stack.sandbox.faults.script([{ method: 'messages.list', kind: 'http503', skip: 5, times: 20 }]);
    stack.sandbox.resetStats();
    const r = await stack.call('bulk_modify', { query: DIGEST_QUERY, ...CHANGE, undo: true });
    stack.sandbox.faults.clear();
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(stack.sandbox.stats().byMethod['messages.batchModify']).toBeUndefined();
    expect(labelState(stack.sandbox.mailbox(DEMO_ADDRESS))).toEqual(before);
  });
});

describe('bulk_modify: preview tokens, chunk count and progress', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ sandbox: { users: [bulkSeed(DIGESTS)] } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a dry run counts and pins; the write touches only the pinned set in 3 batchModify calls with one progress notification each', async () => {
    const before = labelState(stack.sandbox.mailbox(DEMO_ADDRESS));
    const dry = await stack.call('bulk_modify', { query: DIGEST_QUERY, ...CHANGE, dryRun: true });
    expect(dry.isError, dry.text).toBe(false);
    const preview = dry.structured as unknown as BulkOut;
    expect(preview.matched).toEqual({ messages: DIGESTS, threads: DIGESTS / 2 });
    expect(preview.toWrite).toBe(DIGESTS);
    expect(preview.labelsToCreate).toEqual([]);
    expect(preview.samples?.length).toBe(3);
    expect(preview.samples?.[0]?.subject).toMatch(/⟦mail [0-9a-f]+⟧Digest \d+⟦\/mail [0-9a-f]+⟧/u);
    expect(preview.previewToken).toMatch(/^pv_/);
    expect(Date.parse(preview.previewExpiresAt ?? '') - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(labelState(stack.sandbox.mailbox(DEMO_ADDRESS))).toEqual(before);

    const late = stack.sandbox.deliver(DEMO_ADDRESS, lateDigest(1), ['INBOX', 'CATEGORY_PROMOTIONS']);
    stack.sandbox.resetStats();
    const progress: number[] = [];
    // What the server put on the wire, seen before the SDK dispatches it.
    const wire: Array<{ progress: number; total?: number }> = [];
    const transport = stack.client.transport;
    const deliver = transport?.onmessage;
    if (transport && deliver) {
      transport.onmessage = (message, extra) => {
        if ('method' in message && message.method === 'notifications/progress') {
          wire.push(message.params as { progress: number; total?: number });
        }
        deliver.call(transport, message, extra);
      };
    }
    const raw = await stack.client.callTool(
      {
        name: 'bulk_modify',
        arguments: { query: DIGEST_QUERY, ...CHANGE, previewToken: preview.previewToken },
      },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(raw.isError).not.toBe(true);
    const out = raw.structuredContent as unknown as BulkOut;
    expect(out.matched.messages).toBe(DIGESTS + 1);
    expect([out.pinned, out.newMatches, out.noLongerMatching, out.toWrite]).toEqual([DIGESTS, 1, 0, DIGESTS]);
    expect(out.submitted).toBe(DIGESTS);
    expect(stack.sandbox.stats().byMethod['messages.batchModify']?.requests).toBe(3);
    if (transport && deliver) transport.onmessage = deliver;
    expect(wire.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(progress).toEqual([1, 2, 3]);

    const after = stack.sandbox.mailbox(DEMO_ADDRESS);
    const lateNow = after.messages.find((m) => m.id === late.id);
    expect(lateNow?.labelIds.sort()).toEqual(['CATEGORY_PROMOTIONS', 'INBOX']);
    const digests = after.messages.filter(
      (m) => before.has(m.id) && m.labelIds.includes('CATEGORY_PROMOTIONS'),
    );
    expect(digests).toHaveLength(DIGESTS);
    for (const m of digests) expect(inTarget(m.labelIds)).toBe(true);

    const reuse = await stack.call('bulk_modify', {
      query: DIGEST_QUERY,
      ...CHANGE,
      previewToken: preview.previewToken,
    });
    expect(reuse.isError).toBe(true);
    expect(reuse.error).toMatchObject({ code: 'invalid_input', field: 'previewToken' });
    expect(String(reuse.error?.message)).toMatch(/already used/);
  });

  it('a token is refused for a different query or change, and the refusal does not use it up', async () => {
    const dry = await stack.call('bulk_modify', { query: DIGEST_QUERY, add: ['STARRED'], dryRun: true });
    const token = (dry.structured as unknown as BulkOut).previewToken;
    const history = stack.sandbox.mailbox(DEMO_ADDRESS).historyId;
    for (const args of [
      { query: `${DIGEST_QUERY} is:unread`, add: ['STARRED'] },
      { query: DIGEST_QUERY, add: ['IMPORTANT'] },
      { query: DIGEST_QUERY, add: ['STARRED'], remove: ['UNREAD'] },
    ]) {
      const r = await stack.call('bulk_modify', { ...args, previewToken: token });
      expect(r.isError).toBe(true);
      expect(r.error).toMatchObject({ code: 'invalid_input', field: 'previewToken' });
    }
    expect(stack.sandbox.mailbox(DEMO_ADDRESS).historyId).toBe(history);
    const ok = await stack.call('bulk_modify', {
      query: DIGEST_QUERY,
      add: ['STARRED'],
      previewToken: token,
    });
    expect(ok.isError, ok.text).toBe(false);
    expect((ok.structured as unknown as BulkOut).submitted).toBe(DIGESTS + 1);
  });

  it('verify re-reads labels with one labelIds listing per label and says so', async () => {
    const r = await stack.call('bulk_modify', { query: DIGEST_QUERY, remove: ['STARRED'], verify: true });
    expect(r.isError, r.text).toBe(false);
    const out = r.structured as unknown as BulkOut;
    expect(out.verified).toMatchObject({
      method: 'labelIds-list',
      applied: DIGESTS + 1,
      notApplied: 0,
      unverifiable: 0,
    });
    // labels.get (1) + an empty STARRED listing (5), against 2,501 × 5 for per-message reads.
    expect(out.verified?.quotaUnits).toBe(6);
  });

  it('refuses more matches than maxMessages before writing, naming the count', async () => {
    const history = stack.sandbox.mailbox(DEMO_ADDRESS).historyId;
    const r = await stack.call('bulk_modify', { query: DIGEST_QUERY, add: ['STARRED'], maxMessages: 1200 });
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({ code: 'invalid_input', field: 'maxMessages' });
    expect(String(r.error?.message)).toMatch(/more than 1200 messages.*1500/);
    expect(stack.sandbox.mailbox(DEMO_ADDRESS).historyId).toBe(history);
  });
});
