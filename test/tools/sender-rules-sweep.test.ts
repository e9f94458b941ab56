import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { unfence } from '../../src/mail/fence-format.js';
import type { MailMessage, MailThread } from '../../src/mail/types.js';
import { Fence } from '../../src/mcp/untrusted.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { createGate, filePolicyStore } from '../../src/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../../src/policy/write-policy.js';
import type { LabelChange, Mailbox } from '../../src/providers/mailbox.js';
import type { ToolContext } from '../../src/tools/common/define.js';
import { sweepSenderRules } from '../../src/tools/sender-rules.js';
import { tempDir } from '../helpers/temp.js';

/*
 * sweepSenderRules on a mailbox whose search is as coarse as it can be (every inbox message is a
 * hit), so only the exact match decides; with the real gate and action log in a temp dir.
 */

const NOW = Date.parse('2026-06-18T08:00:00Z');
const clock = { now: () => NOW };

interface Fake {
  id: string;
  from: string;
  labels: string[];
}

function fakeMailbox(mail: Fake[], opts: { failAfter?: number; readBackFails?: boolean } = {}) {
  const byId = new Map(mail.map((m) => [m.id, m]));
  const calls = { writes: [] as Array<{ ids: string[]; change: LabelChange }>, reads: 0 };
  let failing = false;
  const message = (m: Fake): MailMessage => ({
    id: m.id,
    threadId: `t-${m.id}`,
    labelIds: [...m.labels],
    internalDate: NOW,
    snippet: '',
    sizeEstimate: 0,
    headers: [
      { name: 'From', value: m.from },
      { name: 'Subject', value: `about ${m.id}` },
    ],
    root: { partId: '', mimeType: 'text/plain', headers: [], filename: '', size: 0, children: [] },
  });
  const box = {
    provider: 'gmail',
    account: 'work',
    capabilities: { history: true, filters: true, organisation: 'labels' },
    async searchMessages() {
      return {
        items: mail
          .filter((m) => m.labels.includes('INBOX'))
          .map((m) => ({ id: m.id, threadId: `t-${m.id}` })),
      };
    },
    async getThread(threadId: string): Promise<MailThread> {
      calls.reads++;
      if (failing && opts.readBackFails) throw new MailError('network_error', 'gone');
      const m = byId.get(threadId.slice(2));
      if (m === undefined) throw new MailError('not_found', threadId);
      return { id: threadId, messages: [message(m)] };
    },
    async modifyMessages(ids: string[], change: LabelChange) {
      calls.writes.push({ ids: [...ids], change });
      ids.forEach((id, i) => {
        if (opts.failAfter !== undefined && i >= opts.failAfter) return;
        const m = byId.get(id);
        if (m === undefined) return;
        m.labels = [...m.labels.filter((l) => !change.remove.includes(l)), ...change.add];
      });
      if (opts.failAfter !== undefined) {
        failing = true;
        throw new MailError('network_error', 'connection reset', { retryable: false });
      }
    },
    usage: () => ({ requests: 0, quotaUnits: 0 }),
  };
  return { mailbox: box as unknown as Mailbox, calls };
}

let dir: string;
let log: ActionLog;
beforeEach(() => {
  dir = tempDir('mailwarden-rules-');
  log = new ActionLog(join(dir, 'action-log.jsonl'));
});

function contextFor(mailbox: Mailbox, protectedAddresses: string[] = []): ToolContext {
  const policy = effectivePolicy(
    {
      ...parsePolicy({
        default: {
          dailyMoveCap: 1,
          senderRules: { archive: ['rules.example'], spam: ['offers@junk.example'] },
        },
      }),
      path: join(dir, 'policy.json'),
    },
    'work',
  );
  const gate = createGate({
    policy,
    store: filePolicyStore({ MAILWARDEN_CONFIG_DIR: dir }, log, { timeoutMs: 5_000 }),
    correspondents: { has: async (a) => protectedAddresses.includes(a.toLowerCase()) },
    clock,
    timeZone: 'UTC',
  });
  return {
    mailbox,
    clock,
    fence: new Fence(),
    progress: async () => undefined,
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: () => undefined },
    serverVersion: 'test',
    gate: async () => gate,
  };
}

const records = () =>
  readFileSync(log.path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r['kind'] === 'move');

const MAIL: Fake[] = [
  { id: 'sub', from: 'News <news@a.rules.example>', labels: ['INBOX'] },
  { id: 'dom', from: 'info@rules.example', labels: ['INBOX', 'UNREAD'] },
  { id: 'addr', from: 'OFFERS@junk.example', labels: ['INBOX'] },
  { id: 'look', from: 'news@badrules.example', labels: ['INBOX'] },
  { id: 'other', from: 'other@junk.example', labels: ['INBOX'] },
  { id: 'friend', from: 'friend@rules.example', labels: ['INBOX'] },
  { id: 'none', from: 'undisclosed', labels: ['INBOX'] },
  { id: 'archived', from: 'old@rules.example', labels: [] },
];

describe('sweepSenderRules', () => {
  it('moves exactly the covered inbox mail in one batch per action, logged as rule moves outside the cap', async () => {
    const { mailbox, calls } = fakeMailbox(structuredClone(MAIL));
    const ctx = contextFor(mailbox, ['friend@rules.example']);
    const r = await sweepSenderRules(ctx, { dryRun: false });
    expect(r.ok).toBe(true);
    expect(r.counts).toEqual({
      matched: 4,
      moved: 3,
      wouldMove: 0,
      refused: 1,
      failed: 0,
      unknown: 0,
      notChecked: 0,
    });
    expect(r.messages.map((m) => [m.id, m.action, m.rule, m.outcome, m.refusedBy])).toEqual([
      ['sub', 'archive', 'rules.example', 'moved', undefined],
      ['dom', 'archive', 'rules.example', 'moved', undefined],
      ['friend', 'archive', 'rules.example', 'refused', 'protected-correspondent'],
      ['addr', 'spam', 'offers@junk.example', 'moved', undefined],
    ]);
    expect(unfence(r.messages[0]?.sender ?? '')).toBe('news@a.rules.example');
    expect(calls.writes).toEqual([
      { ids: ['sub', 'dom'], change: { add: [], remove: ['INBOX'] } },
      { ids: ['addr'], change: { add: ['SPAM'], remove: ['INBOX'] } },
    ]);
    const moves = records().filter((x) => x['outcome'] === 'moved');
    expect(moves.map((x) => [x['ids'], x['actor'], x['senderRule'], x['tool']])).toEqual([
      [['sub'], 'rule', 'rules.example', 'sender-rules'],
      [['dom'], 'rule', 'rules.example', 'sender-rules'],
      [['addr'], 'rule', 'offers@junk.example', 'sender-rules'],
    ]);
    // The cap of 1 is untouched.
    expect(await (await (ctx.gate as NonNullable<ToolContext['gate']>)()).remaining()).toBe(1);
  });

  it('dryRun writes nothing, to the mailbox or the log', async () => {
    const { mailbox, calls } = fakeMailbox(structuredClone(MAIL));
    const r = await sweepSenderRules(contextFor(mailbox, ['friend@rules.example']), { dryRun: true });
    expect(r.counts).toMatchObject({ matched: 4, wouldMove: 3, refused: 1, moved: 0 });
    expect(calls.writes).toEqual([]);
    expect(() => readFileSync(log.path)).toThrow();
  });

  it('a refusal is logged once per process, not at every sweep', async () => {
    const { mailbox } = fakeMailbox(
      structuredClone(MAIL).filter((m) => m.id === 'friend' || m.id === 'look'),
    );
    const ctx = contextFor(mailbox, ['friend@rules.example']);
    const first = await sweepSenderRules(ctx, { dryRun: false });
    const again = await sweepSenderRules(ctx, { dryRun: false });
    expect(first.counts.refused).toBe(1);
    expect(again.counts.refused).toBe(1);
    expect(records().filter((x) => x['outcome'] === 'refused')).toHaveLength(1);
  });

  it('a batch that fails partway records what left the inbox: moved, failed, or unknown when it cannot be read back', async () => {
    const partial = fakeMailbox(structuredClone(MAIL), { failAfter: 1 });
    const r = await sweepSenderRules(contextFor(partial.mailbox), { dryRun: false });
    expect(r.ok).toBe(false);
    const got = Object.fromEntries(r.messages.map((m) => [m.id, m.outcome]));
    expect(got).toEqual({ sub: 'moved', dom: 'failed', friend: 'failed', addr: 'moved' });
    const last = new Map(records().map((x) => [(x['ids'] as string[])[0], x['outcome']]));
    expect(Object.fromEntries(last)).toEqual({
      sub: 'moved',
      dom: 'failed',
      friend: 'failed',
      addr: 'moved',
    });

    log = new ActionLog(join(tempDir('mailwarden-rules-'), 'action-log.jsonl'));
    const lost = fakeMailbox(structuredClone(MAIL), { failAfter: 0, readBackFails: true });
    const u = await sweepSenderRules(contextFor(lost.mailbox), { dryRun: false });
    expect(u.counts).toMatchObject({ matched: 4, unknown: 4, moved: 0, failed: 0 });
    expect(u.ok).toBe(false);
  });

  it('without the write policy nothing is moved', async () => {
    const { mailbox, calls } = fakeMailbox(structuredClone(MAIL));
    const { gate: _, ...ctx } = contextFor(mailbox);
    await expect(sweepSenderRules(ctx, { dryRun: false })).rejects.toThrow(/write policy/);
    expect(calls.writes).toEqual([]);
  });
});
