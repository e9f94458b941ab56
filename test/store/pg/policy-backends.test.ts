import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/mail/clock.js';
import { ActionLog } from '../../../src/policy/action-log.js';
import { createGate, filePolicyStore } from '../../../src/policy/gate.js';
import type { GateIntent, GateItem, PerItemOutcome, PolicyStore } from '../../../src/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../../../src/policy/write-policy.js';
import { pgPolicyStore } from '../../../src/store/pg/index.js';
import { usePostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * The write policy's promises on both state backends, one suite: the daily cap, the records a
 * call leaves, count_moves, and the cap holding when separate stores (and separate processes)
 * race for the same account.
 */

const NOW = Date.parse('2026-06-18T08:00:00Z');
const TZ = 'Europe/Berlin';
const DAY = 86_400_000;
const ARCHIVE: GateIntent = { tool: 'archive_threads', action: 'archive', actor: 'agent' };
const RESTORE: GateIntent = { tool: 'move_to_inbox', action: 'restore', actor: 'agent' };

const pgc = usePostgres();

function msg(id: string, over: Partial<GateItem> = {}): GateItem {
  return {
    id,
    kind: 'message',
    messageCount: 1,
    sender: `news-${id}@shop.example`,
    senderHeader: `Shop <news-${id}@shop.example>`,
    subject: `offer ${id}`,
    labelIds: ['INBOX', 'UNREAD'],
    ...over,
  };
}

const moved = (allowed: GateItem[]): Promise<PerItemOutcome[]> =>
  Promise.resolve(allowed.map((i) => ({ id: i.id, outcome: 'moved' as const })));

/** One backend's fresh state: stores on it (each a separate pool or log object) and its records. */
interface Backend {
  /** A store of its own on the same state (another process would have one like it). */
  store(): Promise<PolicyStore>;
  records(): Promise<Array<Record<string, unknown>>>;
  /** What a child process needs to open the same state. */
  childArgs: string[];
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'files',
    async () => {
      const dir = tempDir('mailwarden-backends-');
      const path = join(dir, 'action-log.jsonl');
      return {
        store: async () =>
          filePolicyStore({ MAILWARDEN_CONFIG_DIR: dir }, new ActionLog(path), { timeoutMs: 20_000 }),
        records: async () =>
          readFileSync(path, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>),
        childArgs: ['files', dir],
      };
    },
  ],
  [
    'postgres',
    async () => {
      const url = await pgc.database('backend');
      const open = () => pgc.stateDb(url);
      const reader = await open();
      return {
        store: async () => pgPolicyStore(await open()),
        records: async () =>
          (
            await reader.pool.query<{ record: Record<string, unknown> }>(
              'SELECT record FROM mailwarden_action_log ORDER BY id',
            )
          ).rows.map((r) => r.record),
        childArgs: ['postgres', url],
      };
    },
  ],
];

describe.each(backends)('the write policy on %s', (_name, make) => {
  let backend: Backend;
  let clock: ManualClock;

  beforeEach(async () => {
    backend = await make();
    clock = new ManualClock(NOW);
  });

  async function gateWith(policy: unknown = {}, store?: PolicyStore) {
    const effective = effectivePolicy({ ...parsePolicy(policy), path: '/nonexistent/policy.json' }, 'work');
    return createGate({
      policy: effective,
      store: store ?? (await backend.store()),
      clock,
      timeZone: TZ,
    });
  }
  const relaxed = { default: { protectCorrespondents: false } };

  it('the 51st agent archive of a day is refused while a restore still works; a fresh store sees the same count; tomorrow is fresh', async () => {
    const gate = await gateWith(relaxed);
    const first = await gate.run(
      Array.from({ length: 50 }, (_, i) => msg(`m${i}`)),
      ARCHIVE,
      moved,
    );
    expect(first.results.filter((r) => r.outcome === 'moved')).toHaveLength(50);
    expect(first.remainingToday).toBe(0);
    let wrote = 0;
    const over = await gate.run([msg('m50')], ARCHIVE, async (a) => {
      wrote += a.length;
      return moved(a);
    });
    expect(over.results[0]).toMatchObject({ id: 'm50', outcome: 'refused', rule: 'daily-cap' });
    expect(wrote).toBe(0);
    const back = await gate.run(
      [msg('m0', { labelIds: ['TRASH'] })],
      { ...RESTORE, fromLabelIds: ['TRASH'] },
      moved,
    );
    expect(back.results[0]?.outcome).toBe('moved');
    const fresh = await gateWith(relaxed);
    expect(await fresh.remaining()).toBe(0);
    expect((await fresh.run([msg('m51')], ARCHIVE, moved)).results[0]?.rule).toBe('daily-cap');
    clock.set(NOW + DAY);
    expect(await fresh.remaining()).toBe(50);
  });

  it('unknown outcomes count, failed ones do not', async () => {
    const gate = await gateWith({ default: { dailyMoveCap: 5, protectCorrespondents: false } });
    await gate.run([msg('a'), msg('b')], ARCHIVE, async () => [
      { id: 'a', outcome: 'failed', error: 'boom' },
      { id: 'b', outcome: 'unknown' },
    ]);
    expect(await gate.remaining()).toBe(4);
    await gate.run([msg('c')], ARCHIVE, () => Promise.reject(new Error('socket closed')));
    expect(await gate.remaining()).toBe(3);
  });

  it('records: refused ones once; allowed ones an intent line then an outcome line of the same call', async () => {
    const gate = await gateWith({ default: { dailyMoveCap: 1, protectCorrespondents: false } });
    await gate.run([msg('a', { messageId: '<a@x>' }), msg('b')], ARCHIVE, moved);
    const lines = await backend.records();
    expect(lines.map((l) => [l['ids'], l['outcome']])).toEqual([
      [['a'], 'pending'],
      [['b'], 'refused'],
      [['a'], 'moved'],
    ]);
    expect(new Set(lines.map((l) => l['call'])).size).toBe(1);
    expect(lines[1]).toMatchObject({ refusedBy: 'daily-cap' });
    expect(lines[0]).toMatchObject({
      account: 'work',
      tool: 'archive_threads',
      op: 'move',
      kind: 'move',
      action: 'archive',
      actor: 'agent',
      unit: 'message',
      count: 1,
      messageId: '<a@x>',
      sender: 'news-a@shop.example',
      subject: 'offer a',
      time: new Date(NOW).toISOString(),
    });
  });

  it('count_moves: moved, refused, failed and unknown by day, threads counting their messages', async () => {
    const gate = await gateWith({ default: { dailyMoveCap: 10, protectCorrespondents: false } });
    await gate.run([msg('t1', { kind: 'thread', messageCount: 2 }), msg('a')], ARCHIVE, moved);
    await gate.run([msg('b'), msg('c')], ARCHIVE, async () => [
      { id: 'b', outcome: 'failed', error: 'x' },
      { id: 'c', outcome: 'unknown' },
    ]);
    await gate.run([msg('d')], ARCHIVE, moved);
    clock.set(NOW + DAY);
    await gate.run([msg('e')], ARCHIVE, moved);
    const day = new Date(NOW).toISOString().slice(0, 10);
    const counts = await gate.countMoves({ from: day, to: day }, 10);
    expect(counts.agent.moved.archive).toEqual({ messages: 2, threads: 1 });
    expect(counts.agent.messagesOutOfInbox).toBe(4);
    expect(counts.agent.failed).toBe(1);
    expect(counts.agent.unknown.items).toBe(1);
    expect(counts.agent.refused).toEqual({ items: 0, byRule: {} });
    expect(counts.complete).toBe(true);
    const both = await gate.countMoves({ from: day, to: new Date(NOW + DAY).toISOString().slice(0, 10) }, 10);
    expect(both.agent.messagesOutOfInbox).toBe(5);
    expect(both.senders).toBe(4);
    // A refusal is counted under its rule.
    await (
      await gateWith({ default: { dailyMoveCap: 1, protectCorrespondents: false } })
    ).run([msg('f')], ARCHIVE, moved);
    const later = new Date(NOW + DAY).toISOString().slice(0, 10);
    expect((await gate.countMoves({ from: later, to: later }, 10)).agent.refused).toEqual({
      items: 1,
      byRule: { 'daily-cap': 1 },
    });
  });

  it('two separate stores racing 30 single-message moves each with a cap of 50 move exactly 50', async () => {
    const policy = { default: { dailyMoveCap: 50, protectCorrespondents: false } };
    const [a, b] = [await gateWith(policy), await gateWith(policy)];
    const slow = async (allowed: GateItem[]) => {
      await new Promise((r) => setTimeout(r, 2));
      return moved(allowed);
    };
    const runs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => [
        a.run([msg(`a${i}`)], ARCHIVE, slow),
        b.run([msg(`b${i}`)], ARCHIVE, slow),
      ]).flat(),
    );
    const results = runs.flatMap((r) => r.results);
    expect(results.filter((r) => r.outcome === 'moved')).toHaveLength(50);
    expect(results.filter((r) => r.rule === 'daily-cap')).toHaveLength(10);
    const lines = await backend.records();
    expect(lines.filter((l) => l['outcome'] === 'moved')).toHaveLength(50);
  }, 60_000);

  it('two child processes racing 30 single-message moves each with a cap of 50 move exactly 50', async () => {
    const child = resolve(import.meta.dirname, 'race-child.mjs');
    const one = (prefix: string) =>
      new Promise<number>((done, fail) => {
        const p = fork(child, [...backend.childArgs, prefix, String(NOW)], {
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        });
        let err = '';
        p.stderr?.on('data', (d: Buffer) => (err += d.toString()));
        p.on('message', (m) => done(Number(m)));
        p.on('exit', (code) => (code === 0 ? undefined : fail(new Error(`child exited ${code}: ${err}`))));
      });
    const [x, y] = await Promise.all([one('x'), one('y')]);
    expect(x + y).toBe(50);
    const lines = await backend.records();
    expect(lines.filter((l) => l['outcome'] === 'moved')).toHaveLength(50);
    expect(lines.filter((l) => l['refusedBy'] === 'daily-cap')).toHaveLength(10);
  }, 90_000);
});
