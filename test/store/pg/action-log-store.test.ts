import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ActionLog } from '../../../src/policy/action-log.js';
import type { ActionRecord } from '../../../src/policy/action-log.js';
import { moveRecord } from '../../../src/policy/move-cap.js';
import type { MoveRecord } from '../../../src/policy/move-cap.js';
import type { LogRecord } from '../../../src/policy/move-log.js';
import { readLogView } from '../../../src/review/log-view.js';
import { PgActionLog, pgPolicyStore } from '../../../src/store/pg/index.js';
import type { StateDb } from '../../../src/store/pg/index.js';
import { usePostgres } from '../../helpers/postgres.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * The action log as a store with two backends (src/policy/move-log.ts LogSource): what one
 * writer appends, the readers get back the same from the file and from PostgreSQL — the same
 * records in the same order, the same person's view (readLogView) — and a call that holds an
 * account's write lock appends through its own connection, so calls queued for the lock cannot
 * starve it of one.
 */

const TZ = 'UTC';
const T0 = Date.parse('2026-06-18T08:00:00Z');

const pgc = usePostgres();

async function freshDb(name: string): Promise<StateDb> {
  return pgc.stateDb(await pgc.cluster.createDatabase(name));
}

/** A day of mixed records on two accounts: moves with intent and outcome, and a mailbox write. */
function history(): Array<MoveRecord | ActionRecord> {
  const at = (min: number): string => new Date(T0 + min * 60_000).toISOString();
  const move = (
    account: string,
    id: string,
    outcome: 'pending' | 'moved' | 'refused',
    min: number,
    call: string,
  ) =>
    moveRecord({
      account,
      tool: 'archive',
      action: 'archive',
      actor: 'agent',
      ids: [id],
      outcome,
      call,
      time: at(min),
      sender: `s-${id}@shop.example`,
      subject: `offer ${id}`,
      ...(outcome === 'refused' ? { refusedBy: 'daily-cap', reason: 'no moves left' } : {}),
    });
  return [
    move('work', 'm1', 'pending', 0, 'c1'),
    move('work', 'm2', 'pending', 0, 'c1'),
    {
      account: 'work',
      tool: 'archive',
      op: 'modifyMessages',
      call: 'w1',
      messageIds: ['m1', 'm2'],
      outcome: 'pending',
      time: at(0),
    },
    {
      account: 'work',
      tool: 'archive',
      op: 'modifyMessages',
      call: 'w1',
      messageIds: ['m1', 'm2'],
      outcome: 'ok',
      time: at(1),
    },
    move('work', 'm1', 'moved', 1, 'c1'),
    move('work', 'm2', 'moved', 1, 'c1'),
    move('home', 'h1', 'pending', 2, 'c2'),
    move('home', 'h1', 'moved', 3, 'c2'),
    move('work', 'm3', 'refused', 4, 'c3'),
    // Two days later: outside a one-day window.
    move('work', 'm4', 'pending', 2 * 1440, 'c4'),
  ];
}

async function readAll(log: ActionLog, q: Parameters<ReturnType<ActionLog['source']>['read']>[0]) {
  const out: LogRecord[] = [];
  const damaged: unknown[] = [];
  await log.source().read(
    q,
    (r) => out.push(r),
    (p) => damaged.push(p),
  );
  expect(damaged).toEqual([]);
  // The position in the log differs by backend (a line number, a row id); its order does not.
  return out.map((r) => ({ at: r.at, record: r.record }));
}

describe('the action log on files and on PostgreSQL', () => {
  it('gives the readers the same records, in the order written, for every query', async () => {
    const file = new ActionLog(join(tempDir('mailwarden-logstore-'), 'action-log.jsonl'));
    const db = await freshDb('same_records');
    const rows = new PgActionLog(db);
    for (const log of [file, rows]) {
      // One record at a time and a batch: both keep the order.
      const all = history();
      for (const r of all.slice(0, 3)) await log.appendMany([r]);
      await log.appendMany(all.slice(3));
    }
    const queries = [
      { lower: T0 - 3_600_000, upper: T0 + 3 * 86_400_000 },
      { lower: T0 - 3_600_000, upper: T0 + 86_400_000, kind: 'move' as const },
      { lower: T0 - 3_600_000, upper: T0 + 86_400_000, accounts: new Set(['home']) },
      {
        lower: T0 + 60_000,
        upper: T0 + 3 * 60_000,
        accounts: new Set(['work', 'home']),
        kind: 'move' as const,
      },
    ];
    for (const q of queries) {
      const fromFile = await readAll(file, q);
      expect(fromFile.length).toBeGreaterThan(0);
      expect(await readAll(rows, q)).toEqual(fromFile);
    }
    const all = await readAll(file, queries[0] as (typeof queries)[0]);
    expect(all.map((r) => r.record['outcome'])).toEqual(history().map((r) => r.outcome));

    // The person's view is the same too: calls, items, outcomes.
    const range = { from: '2026-06-18', to: '2026-06-18', timeZone: TZ };
    const viewFile = await readLogView(file.source(), range);
    const viewRows = await readLogView(rows.source(), range);
    expect(viewRows.calls).toEqual(viewFile.calls);
    expect(viewFile.calls.map((c) => [c.call, c.account, c.items.map((i) => [i.ids[0], i.outcome])])).toEqual(
      [
        ['c3', 'work', [['m3', 'refused']]],
        ['c2', 'home', [['h1', 'moved']]],
        [
          'c1',
          'work',
          [
            ['m1', 'moved'],
            ['m2', 'moved'],
          ],
        ],
      ],
    );
    expect(viewRows.found).toBe(true);
  });

  it('reads a database that stopped as upstream_unavailable naming it, not as an empty log', async () => {
    const db = await freshDb('gone');
    const log = new PgActionLog(db);
    await log.appendMany(history().slice(0, 1));
    const range = { from: '2026-06-18', to: '2026-06-18', timeZone: TZ };
    await pgc.cluster.stop('fast');
    let e: { code?: string; message?: string; retryable?: boolean } | undefined;
    try {
      e = await readLogView(log.source(), range).then(
        () => undefined,
        (x: unknown) => x as typeof e,
      );
    } finally {
      await pgc.cluster.start();
    }
    expect(e?.code).toBe('upstream_unavailable');
    expect(e?.retryable).toBe(true);
    expect(e?.message).toContain(`the state database ${db.name}`);
    // Back up: the same reader reads the record again, with no new pool.
    expect((await readLogView(log.source(), range)).calls).toHaveLength(1);
  });

  it('appends of a call that holds the write lock go through its connection, while 15 more calls wait for that lock', async () => {
    const db = await freshDb('lock_appends');
    const store = pgPolicyStore(db);
    const log = new PgActionLog(db);
    const order: number[] = [];
    // More calls than the pool has connections (10): each waiting call holds one.
    const calls = Array.from({ length: 16 }, (_, i) =>
      store.withLock('work', async () => {
        await log.append({
          account: 'work',
          tool: 't',
          op: 'modifyMessages',
          call: `k${i}`,
          outcome: 'pending',
        });
        await log.append({ account: 'work', tool: 't', op: 'modifyMessages', call: `k${i}`, outcome: 'ok' });
        order.push(i);
      }),
    );
    const started = Date.now();
    await Promise.all(calls);
    expect(order).toHaveLength(16);
    // Not held up by the pool's 5 s wait for a free connection.
    expect(Date.now() - started).toBeLessThan(5_000);
    const got: LogRecord[] = [];
    await log.source().read(
      { lower: 0, upper: Date.now() + 60_000 },
      (r) => got.push(r),
      () => undefined,
    );
    // Each call's two records are next to each other: the lock serialized them.
    const calls2 = got.map((r) => r.record['call']);
    for (let i = 0; i < calls2.length; i += 2) expect(calls2[i + 1]).toBe(calls2[i]);
    expect(got).toHaveLength(32);
  });
});
