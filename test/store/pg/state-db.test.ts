import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/mail/clock.js';
import { MailError } from '../../../src/mail/errors.js';
import type { GmailMark } from '../../../src/mail/inbox-mark.js';
import { createGate } from '../../../src/policy/gate.js';
import type { GateItem, PerItemOutcome } from '../../../src/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../../../src/policy/write-policy.js';
import { MIGRATIONS, SCHEMA_VERSION, openPgState, openStateDb } from '../../../src/store/pg/index.js';
import type { StateDb } from '../../../src/store/pg/index.js';
import { stateSetting } from '../../../src/store/state.js';
import { usePostgres } from '../../helpers/postgres.js';
import { rejected } from '../../helpers/rejected.js';

const pgc = usePostgres();
let n = 0;

const fresh = () => pgc.cluster.createDatabase(`state_${++n}`);
const opened = (url: string, migrations?: readonly string[]): Promise<StateDb> =>
  pgc.stateDb(url, migrations);
async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

describe('MAILWARDEN_STATE', () => {
  it('files when unset, empty or "files"; a PostgreSQL URL; anything else is refused naming the setting', () => {
    expect(stateSetting({})).toEqual({ kind: 'files' });
    expect(stateSetting({ MAILWARDEN_STATE: 'files' })).toEqual({ kind: 'files' });
    expect(stateSetting({ MAILWARDEN_STATE: 'postgresql://h/db' })).toEqual({
      kind: 'postgres',
      url: 'postgresql://h/db',
    });
    let e: unknown;
    try {
      stateSetting({ MAILWARDEN_STATE: 'mysql://me:secret@h/db' });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(MailError);
    expect((e as MailError).code).toBe('invalid_input');
    expect((e as MailError).field).toBe('MAILWARDEN_STATE');
    expect((e as MailError).message).toContain('"files"');
    expect((e as MailError).message).toContain('postgres://');
    expect((e as MailError).message).not.toContain('secret');
  });
});

describe('migrations', () => {
  it('a fresh database gets the schema; a second start changes nothing and keeps the data', async () => {
    const url = await fresh();
    const db = await opened(url);
    const tables = await query<{ t: string }>(
      url,
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    expect(tables.map((r) => r.t)).toEqual([
      'mailwarden_account_keys',
      'mailwarden_account_secrets',
      'mailwarden_accounts',
      'mailwarden_action_log',
      'mailwarden_inbox_marks',
      'mailwarden_preview_tokens',
      'mailwarden_schema',
      'mailwarden_timer_slots',
      'mailwarden_unsubscribe_claims',
      'mailwarden_unsubscribe_ledger',
    ]);
    expect(await query(url, 'SELECT version FROM mailwarden_schema ORDER BY version')).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
    );
    await db.pool.query("INSERT INTO mailwarden_inbox_marks (account, mark) VALUES ('work', '{\"x\":1}')");
    await opened(url);
    expect(await query(url, 'SELECT count(*)::int AS c FROM mailwarden_schema')).toEqual([
      { c: SCHEMA_VERSION },
    ]);
    expect(await query(url, 'SELECT account FROM mailwarden_inbox_marks')).toEqual([{ account: 'work' }]);
  });

  it('replicas starting together on a fresh database apply each migration once', async () => {
    const url = await fresh();
    await Promise.all(Array.from({ length: 4 }, () => opened(url)));
    expect(await query(url, 'SELECT version FROM mailwarden_schema ORDER BY version')).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
    );
  });

  it('a newer code applies only the migrations the database is missing', async () => {
    const url = await fresh();
    await opened(url);
    await opened(url, [...MIGRATIONS, 'CREATE TABLE mailwarden_next (x int)']);
    expect(await query(url, 'SELECT max(version)::int AS v FROM mailwarden_schema')).toEqual([
      { v: SCHEMA_VERSION + 1 },
    ]);
    expect(await query(url, 'SELECT count(*)::int AS c FROM mailwarden_next')).toEqual([{ c: 0 }]);
  });

  it('a database migrated by a newer mailwarden is refused with a clear error, and left as it was', async () => {
    const url = await fresh();
    await opened(url);
    await query(url, 'INSERT INTO mailwarden_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
    const e = await rejected(openStateDb(url));
    expect(e.code).toBe('internal_error');
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(
      `has schema version ${SCHEMA_VERSION + 1}, newer than this mailwarden knows (${SCHEMA_VERSION})`,
    );
    expect(e.message).toContain(`/state_${n}`);
    expect(await query(url, 'SELECT max(version)::int AS v FROM mailwarden_schema')).toEqual([
      { v: SCHEMA_VERSION + 1 },
    ]);
  });

  it('a database that cannot be reached is a retryable error naming it, password hidden', async () => {
    const url = `postgres://postgres:hunter2@127.0.0.1:${pgc.cluster.port}/no_such_db`;
    const e = await rejected(openStateDb(url));
    // A missing database is the server's answer, not a lost connection.
    expect(e.message).toContain('postgres://postgres:***@127.0.0.1');
    expect(e.message).not.toContain('hunter2');
    const closed = await rejected(openStateDb('postgres://postgres:hunter2@127.0.0.1:1/x'));
    expect(closed.code).toBe('upstream_unavailable');
    expect(closed.retryable).toBe(true);
    expect(closed.message).toMatch(
      /^the state database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/x cannot be reached/,
    );
    expect(closed.message).not.toMatch(/\n\s+at /);
  });
});

describe('new-mail marks', () => {
  it('a mark written through one pool is read through another; a second write replaces it', async () => {
    const url = await fresh();
    const a = await openPgState(url);
    const b = await openPgState(url);
    pgc.keep(a.db, b.db);
    expect(await b.inboxMarks.read('work')).toBeUndefined();
    const mark: GmailMark = {
      version: 1,
      provider: 'gmail',
      account: 'work',
      internalDate: 1_781_769_600_000,
      ids: ['m1', 'm2'],
      updatedAt: '2026-06-18T08:00:00.000Z',
    };
    await a.inboxMarks.write(mark);
    expect(await b.inboxMarks.read('work')).toEqual(mark);
    await a.inboxMarks.write({ ...mark, ids: ['m3'] });
    expect(await b.inboxMarks.read('work')).toMatchObject({ ids: ['m3'] });
    expect(await b.inboxMarks.read('home')).toBeUndefined();
  });
});

describe('PostgreSQL stopped mid-way', () => {
  it('the next write fails with a retryable error naming the state database; after a restart writes work and nothing is lost', async () => {
    const url = await fresh();
    const { db, policyStore } = await openPgState(url);
    pgc.keep(db);
    const policy = effectivePolicy(
      {
        ...parsePolicy({ default: { dailyMoveCap: 50, protectCorrespondents: false } }),
        path: '/nonexistent/policy.json',
      },
      'work',
    );
    const gate = createGate({
      policy,
      store: policyStore,
      clock: new ManualClock(Date.now()),
      timeZone: 'UTC',
    });
    const item = (id: string): GateItem => ({
      id,
      kind: 'message',
      messageCount: 1,
      sender: `${id}@shop.example`,
      senderHeader: `${id}@shop.example`,
      labelIds: ['INBOX'],
    });
    let wrote = 0;
    const moved = async (allowed: GateItem[]): Promise<PerItemOutcome[]> => {
      wrote += allowed.length;
      return allowed.map((i) => ({ id: i.id, outcome: 'moved' as const }));
    };
    for (const id of ['a', 'b', 'c'])
      await gate.run([item(id)], { tool: 'archive_threads', action: 'archive', actor: 'agent' }, moved);
    expect(wrote).toBe(3);

    await pgc.cluster.stop('fast');
    const e = await rejected(
      gate.run([item('d')], { tool: 'archive_threads', action: 'archive', actor: 'agent' }, moved),
    );
    expect(e.code).toBe('upstream_unavailable');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain(
      `the state database postgres://postgres@127.0.0.1:${pgc.cluster.port}/state_${n} cannot be reached`,
    );
    expect(e.message).not.toMatch(/\n\s+at /);
    // Nothing reached the mailbox while the log could not be written.
    expect(wrote).toBe(3);

    await pgc.cluster.start();
    const after = await gate.run(
      [item('d')],
      { tool: 'archive_threads', action: 'archive', actor: 'agent' },
      moved,
    );
    expect(after.results[0]?.outcome).toBe('moved');
    expect(after.remainingToday).toBe(46);
    const rows = await query<{ ids: string[]; outcome: string }>(
      url,
      "SELECT record->'ids' AS ids, outcome FROM mailwarden_action_log ORDER BY id",
    );
    expect(rows.map((r) => `${r.ids[0]}:${r.outcome}`)).toEqual([
      'a:pending',
      'a:moved',
      'b:pending',
      'b:moved',
      'c:pending',
      'c:moved',
      'd:pending',
      'd:moved',
    ]);
  }, 60_000);
});

describe('the write lock', () => {
  it("a process killed while it holds an account's lock releases it; other accounts never wait for it", async () => {
    const url = await fresh();
    const { db, policyStore } = await openPgState(url);
    pgc.keep(db);
    const dist = resolve(import.meta.dirname, '../../../dist/store/pg/index.js');
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(dist)}); const s = await m.openPgState(process.argv[1]);` +
          ` await s.policyStore.withLock('work', () => { console.log('held'); return new Promise(() => {}); });`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((done) =>
      child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && done()),
    );
    // Another account is not held up.
    expect(await policyStore.withLock('home', async () => 'home')).toBe('home');
    // The same account waits while the child lives…
    let got = false;
    const waiting = policyStore.withLock('work', async () => {
      got = true;
      return 'work';
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toBe(false);
    // …and gets the lock once the child is killed.
    child.kill('SIGKILL');
    expect(await waiting).toBe('work');
  }, 60_000);
});

describe('timer slots on PostgreSQL', () => {
  it('one of several replicas claims an account timer per interval; other accounts and timers have their own', async () => {
    const url = await fresh();
    const states = await Promise.all([0, 1, 2, 3].map(() => openPgState(url)));
    pgc.keep(...states.map((s) => s.db));
    const HOUR = 3_600_000;
    const first = await Promise.all(states.map((s) => s.timerSlots.claim('sender-rules', 'work', HOUR)));
    expect(first.filter(Boolean)).toHaveLength(1);
    expect(await states[1]?.timerSlots.claim('sender-rules', 'work', HOUR)).toBe(false);
    expect(await states[1]?.timerSlots.claim('sender-rules', 'home', HOUR)).toBe(true);
    expect(await states[1]?.timerSlots.claim('auto-sweep', 'work', HOUR)).toBe(true);
    // Once the interval has passed since the claim, the slot is given again, once.
    await query(url, "UPDATE mailwarden_timer_slots SET claimed_at = now() - interval '2 hours'");
    const again = await Promise.all(states.map((s) => s.timerSlots.claim('sender-rules', 'work', HOUR)));
    expect(again.filter(Boolean)).toHaveLength(1);
    // A claim the database's clock puts in the future does not block the timer.
    await query(
      url,
      "UPDATE mailwarden_timer_slots SET claimed_at = now() + interval '1 day' WHERE account = 'work'",
    );
    expect(await states[2]?.timerSlots.claim('sender-rules', 'work', HOUR)).toBe(true);
  });
});
