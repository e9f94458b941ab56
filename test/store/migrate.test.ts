import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionLog, TORN_LINE_MARK } from '../../src/policy/action-log.js';
import type { ActionRecord } from '../../src/policy/action-log.js';
import { localDay, moveRecord, serverTimeZone } from '../../src/policy/move-cap.js';
import { writeMarker } from '../../src/policy/move-marker.js';
import { fileTimerSlots } from '../../src/policy/timer-slots.js';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { inboxMarkStore } from '../../src/store/inbox-mark.js';
import { MigrationRefused, actionLogMover, migrateState } from '../../src/store/migrate.js';
import type { Mover } from '../../src/store/migrate.js';
import { runCli } from '../helpers/cli-run.js';
import { sealTokenFiles } from '../helpers/pg-accounts.js';
import { startPostgres } from '../helpers/postgres.js';
import type { PgCluster } from '../helpers/postgres.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * `mailwarden state migrate --from files --to postgres://…` (src/store/migrate.ts) against real
 * files in a temp dir and a real throwaway PostgreSQL: what it prints, what lands in the tables
 * (the same records as the file's lines, in order), refusals that leave the database as it was,
 * a dry run that writes nothing, and a server on the migrated database that counts the same cap
 * and the same count_moves as the server on the files did.
 */

let cluster: PgCluster;
const stacks: Stack[] = [];
let dbs = 0;

beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const s of stacks.splice(0).reverse()) await s.close();
  await cluster?.close();
});

/** A fresh empty database of the cluster, its URL. */
const freshDb = (): Promise<string> => cluster.createDatabase(`migrate${++dbs}`);

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

/** Everything the migration may write, as one comparable value (the tables absent: null). */
async function snapshot(url: string): Promise<unknown> {
  const [t] = await query<{ t: string | null }>(
    url,
    "SELECT to_regclass('mailwarden_action_log')::text AS t",
  );
  if (t?.t === null) return null;
  return {
    log: await query(url, 'SELECT id::int, account, record FROM mailwarden_action_log ORDER BY id'),
    marks: await query(url, 'SELECT account, mark FROM mailwarden_inbox_marks ORDER BY account'),
    timers: await query(url, 'SELECT account, timer, claimed_at FROM mailwarden_timer_slots ORDER BY 1, 2'),
    schema: await query(url, 'SELECT version FROM mailwarden_schema ORDER BY version'),
  };
}

const at = (minutesAgo: number): string => new Date(Date.now() - minutesAgo * 60_000).toISOString();

/**
 * A one-machine install's state dir written by the real file code: the action log with moves of
 * two accounts (intent and outcome lines), a write that is not a move, a torn-line note of the log
 * itself; a new-mail mark of each account; timer slots of one.
 */
async function filesState(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tempDir('mailwarden-migrate-');
  const env = { MAILWARDEN_CONFIG_DIR: dir, HOME: dir };
  const log = new ActionLog(join(dir, 'action-log.jsonl'));
  const move = (account: string, call: string, ids: string[], outcome: 'pending' | 'moved', time: string) =>
    moveRecord({
      account,
      tool: 'archive',
      action: 'archive',
      actor: 'agent',
      ids,
      outcome,
      call,
      time,
      subject: 'Hi ünïcode',
    });
  await log.appendMany([
    move('work', 'c1', ['w1', 'w2'], 'pending', at(30)),
    move('work', 'c1', ['w1', 'w2'], 'moved', at(30)),
  ]);
  const others: ActionRecord[] = [
    { time: at(20), account: '*', tool: 'action-log', op: TORN_LINE_MARK, outcome: 'ok' },
    {
      time: at(20),
      account: 'home',
      tool: 'modify_labels',
      op: 'modifyMessages',
      messageIds: ['h9'],
      outcome: 'ok',
    },
  ];
  await log.appendMany(others);
  await log.appendMany([
    move('home', 'c2', ['h1'], 'pending', at(10)),
    move('home', 'c2', ['h1'], 'moved', at(10)),
  ]);
  const marks = inboxMarkStore(join(dir, 'marks'));
  await marks.write({
    version: 1,
    provider: 'gmail',
    account: 'work',
    internalDate: 1_700_000_000_000,
    ids: ['w7'],
    updatedAt: at(5),
  });
  await marks.write({
    version: 1,
    provider: 'imap',
    account: 'home',
    uidValidity: '42',
    uid: 17,
    decided: ['abc'],
    updatedAt: at(5),
  });
  const slots = fileTimerSlots(env);
  await slots.claim('snooze-sweep', 'work', 60_000);
  await slots.claim('sender-rules', 'work', 60_000);
  return { dir, env };
}

const fileLines = (dir: string): Record<string, unknown>[] =>
  readFileSync(join(dir, 'action-log.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('state migrate', () => {
  it('moves every record in file order with its time, the marks and the timer slots, and says what it moved per kind and account', async () => {
    const { dir, env } = await filesState();
    const url = await freshDb();
    const r = await runCli(['state', 'migrate', '--from', 'files', '--to', url], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Moved the state in ${dir} to ${url}:`);
    expect(r.out).toContain('action-log records: 5 (home: 3, work: 2)');
    expect(r.out).toContain('1 record(s) of account "*" that describe the log file itself');
    expect(r.out).toContain('new-mail marks: 2 (home: 1, work: 1)');
    expect(r.out).toContain('timer slots: 2 (work: 2)');
    expect(r.out).toContain('move-count markers: none in the files');

    const want = fileLines(dir).filter((l) => l['account'] !== '*');
    const rows = await query<{
      account: string;
      time: Date;
      op: string;
      kind: string | null;
      record: unknown;
    }>(url, 'SELECT account, time, op, kind, record FROM mailwarden_action_log ORDER BY id');
    expect(rows.map((row) => row.record)).toEqual(want);
    expect(rows.map((row) => row.time.toISOString())).toEqual(want.map((l) => l['time']));
    expect(rows.map((row) => row.kind)).toEqual(['move', 'move', null, 'move', 'move']);

    const marks = await query<{ account: string; mark: unknown }>(
      url,
      'SELECT account, mark FROM mailwarden_inbox_marks ORDER BY account',
    );
    expect(marks).toEqual(
      ['home', 'work'].map((a) => ({
        account: a,
        mark: JSON.parse(readFileSync(join(dir, 'marks', `${a}.json`), 'utf8')),
      })),
    );
    const book = JSON.parse(readFileSync(join(dir, 'timers', 'work.json'), 'utf8')) as Record<string, string>;
    const timers = await query<{ timer: string; claimed_at: Date }>(
      url,
      "SELECT timer, claimed_at FROM mailwarden_timer_slots WHERE account = 'work' ORDER BY timer",
    );
    expect(Object.fromEntries(timers.map((t) => [t.timer, t.claimed_at.toISOString()]))).toEqual(book);
  }, 60_000);

  it('refuses a database that already holds action-log records of an account it moves, naming it, and writes nothing', async () => {
    const first = await filesState();
    const url = await freshDb();
    expect((await runCli(['state', 'migrate', '--from', 'files', '--to', url], first.env)).code).toBe(0);
    // A second install with one of the same accounts (work) and a new one (solo).
    const second = await filesState();
    await new ActionLog(join(second.dir, 'action-log.jsonl')).append({
      account: 'solo',
      tool: 'trash',
      op: 'trash',
      outcome: 'ok',
    });
    await inboxMarkStore(join(second.dir, 'marks')).write({
      version: 1,
      provider: 'gmail',
      account: 'solo',
      internalDate: 5,
      ids: [],
      updatedAt: at(1),
    });
    const before = await snapshot(url);
    const r = await runCli(['state', 'migrate', '--from', 'files', '--to', url, '--json'], second.env);
    expect(r.code).toBe(2);
    expect(r.err).toContain('already holds action-log records of account home (3), account work (2)');
    expect(r.err).toContain('nothing was written');
    expect(r.out).toBe('');
    expect(await snapshot(url)).toEqual(before);
  }, 60_000);

  it('--dry-run prints what would move and leaves an empty database empty, schema included', async () => {
    const { dir, env } = await filesState();
    const url = await freshDb();
    const r = await runCli(['state', 'migrate', '--from', 'files', '--to', url, '--dry-run', '--json'], env);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as {
      dryRun: boolean;
      from: string;
      kinds: { kind: string; perAccount: Record<string, number> }[];
    };
    expect(report.dryRun).toBe(true);
    expect(report.from).toBe(dir);
    expect(Object.fromEntries(report.kinds.map((k) => [k.kind, k.perAccount]))).toEqual({
      'action-log records': { work: 2, home: 3 },
      'move-count markers': {},
      'new-mail marks': { home: 1, work: 1 },
      'timer slots': { work: 2 },
      // This install has no accounts file and no token files.
      'accounts and secrets': {},
    });
    expect(await snapshot(url)).toBeNull();
    expect(await query(url, "SELECT to_regclass('mailwarden_schema')::text AS t")).toEqual([{ t: null }]);
  }, 60_000);

  it('a mover that fails after others wrote leaves the database as it was: one transaction', async () => {
    const { env } = await filesState();
    const url = await freshDb();
    const failing: Mover = {
      kind: 'broken',
      move: () => Promise.reject(new MigrationRefused('the broken kind says no')),
    };
    await expect(migrateState({ env, url, movers: [actionLogMover, failing] })).rejects.toThrow(
      'the broken kind says no',
    );
    expect(await snapshot(url)).toBeNull();
  }, 60_000);

  it('refuses a damaged log line, naming it, and writes nothing', async () => {
    const { dir, env } = await filesState();
    writeFileSync(
      join(dir, 'action-log.jsonl'),
      `${readFileSync(join(dir, 'action-log.jsonl'), 'utf8')}{"time":\n{"time":"${at(1)}","account":"work","tool":"t","op":"o","outcome":"ok"}\n`,
    );
    const url = await freshDb();
    const r = await runCli(['state', 'migrate', '--from', 'files', '--to', url], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `line 7 of ${join(dir, 'action-log.jsonl')} is not valid JSON; nothing was written`,
    );
    expect(await snapshot(url)).toBeNull();
  }, 60_000);

  it("refuses while today's move-count marker says more than the log (a lost log), so migrating cannot raise the cap", async () => {
    const { dir, env } = await filesState();
    const tz = serverTimeZone();
    await writeMarker(join(dir, 'action-log.jsonl'), {
      version: 1,
      account: 'work',
      day: localDay(Date.now(), tz),
      timeZone: tz,
      moves: 9,
      updatedAt: at(1),
    });
    const url = await freshDb();
    const r = await runCli(['state', 'migrate', '--from', 'files', '--to', url], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain('account work:');
    expect(r.err).toContain('counts 9 agent moves out of the inbox today');
    expect(r.err).toContain('the action log holds 2');
    expect(await snapshot(url)).toBeNull();
  }, 60_000);

  it('never prints the password of the URL', async () => {
    const { env } = await filesState();
    const url = (await freshDb()).replace('postgres@', 'postgres:hunter2secret@');
    const ok = await runCli(['state', 'migrate', '--from', 'files', '--to', url], env);
    expect(ok.code, ok.err).toBe(0);
    const again = await runCli(['state', 'migrate', '--from', 'files', '--to', url], env);
    expect(again.code).toBe(2);
    const bad = await runCli(
      ['state', 'migrate', '--from', 'files', '--to', 'mysql://root:hunter2secret@db/x'],
      env,
    );
    expect(bad.code).toBe(2);
    for (const r of [ok, again, bad]) expect(r.out + r.err).not.toContain('hunter2secret');
    expect(ok.out).toContain('postgres:***@127.0.0.1');
    expect(bad.err).toContain(
      '--to must be a PostgreSQL URL, postgres://user@host:port/database (got "mysql://root:***@db/x")',
    );
  }, 60_000);

  it.each([
    [['state', 'migrate', '--from', 'files'], '--to is required'],
    [
      ['state', 'migrate', '--from', 'postgres', '--to', 'postgres://h/d'],
      '--from must be one of files (got "postgres")',
    ],
    [['state', 'migrate', '--to', 'postgres://h/d'], '--from is required'],
    [['state', 'migrate', '--from', 'files', '--to', 'files'], '--to must be a PostgreSQL URL'],
    [['state', 'migrate', '--form', 'files', '--to', 'postgres://h/d'], "Unknown option '--form'"],
    [['state'], 'unknown command "state": "state migrate"'],
  ])(
    '%j exits 2 with the usage, touching nothing',
    async (args, said) => {
      const dir = tempDir('mailwarden-migrate-usage-');
      const r = await runCli(args, { MAILWARDEN_CONFIG_DIR: dir, HOME: dir });
      expect(r.code).toBe(2);
      expect(r.err).toContain(said);
      expect(r.err).toContain('Usage:');
    },
    30_000,
  );
});

describe('a server on the migrated database', () => {
  it('counts the same remainingToday and the same count_moves as the server on the files did', async () => {
    const policy = { default: { dailyMoveCap: 5, protectCorrespondents: false } };
    // One mailbox for both servers, outliving the first.
    const sandbox = await Sandbox.start({ users: [demoCorpus()] });
    const files = await startStack({ policy, existingSandbox: sandbox });
    stacks.push(files);
    const view = () => sandbox.mailbox(DEMO_ADDRESS);
    const single = view()
      .threads.filter((t) => t.messageIds.length === 1)
      .filter((t) => {
        const l = view().messages.find((m) => m.id === t.messageIds[0])?.labelIds ?? [];
        return l.includes('INBOX') && !l.includes('SENT') && !l.includes('DRAFT');
      })
      .map((t) => t.id)
      .sort();
    expect(single.length).toBeGreaterThanOrEqual(3);
    const archived = await files.call('archive', { threadIds: single.slice(0, 2) });
    expect(archived.isError, archived.text).toBe(false);
    expect(archived.structured['remainingToday']).toBe(3);
    const today = localDay(Date.now(), serverTimeZone());
    // What each server says without moving anything: the cap's remainder (a bulk dry run) and count_moves.
    const observe = async (s: Stack) => {
      const dry = await s.call('bulk_modify', { query: 'in:inbox', remove: ['INBOX'], dryRun: true });
      expect(dry.isError, dry.text).toBe(false);
      const counts = await s.call('count_moves', { from: today, to: today });
      expect(counts.isError, counts.text).toBe(false);
      // `lines` is what each backend read (file lines, database rows); the fences' nonces are per server.
      const { lines: _lines, ...sameCounts } = counts.structured;
      const unfenced = JSON.parse(JSON.stringify(sameCounts).replace(/⟦\/?mail [0-9a-f]+⟧/g, '')) as unknown;
      return { remainingToday: dry.structured['remainingToday'], counts: unfenced };
    };
    const onFiles = await observe(files);
    expect(onFiles.remainingToday).toBe(3);
    await files.close();
    stacks.splice(stacks.indexOf(files), 1);

    // The account's token sealed in place with a passphrase, as an install with one keeps it (the
    // test stack writes it in plaintext, which the database refuses): migrate moves it as it is.
    const passphrase = 'migrate test passphrase';
    await sealTokenFiles(files.configDir, passphrase);
    const sealed = readFileSync(join(files.configDir, 'tokens', 'default.json'), 'utf8');
    const url = await freshDb();
    const migrated = await runCli(['state', 'migrate', '--from', 'files', '--to', url, '--json'], {
      MAILWARDEN_CONFIG_DIR: files.configDir,
      HOME: files.configDir,
    });
    expect(migrated.code, migrated.err).toBe(0);
    const moved = JSON.parse(migrated.out) as {
      kinds: { kind: string; perAccount: Record<string, number> }[];
    };
    expect(moved.kinds.find((k) => k.kind === 'accounts and secrets')?.perAccount).toEqual({ default: 1 });
    // The very envelope of the file, never decrypted (the passphrase was not given to migrate).
    expect(
      await query(url, "SELECT envelope FROM mailwarden_account_secrets WHERE account = 'default'"),
    ).toEqual([{ envelope: sealed }]);
    // A server with a config dir of its own (its file log empty): what it counts comes from the database.
    // Its account and token are put in the database too, sealed with this passphrase (startStack).
    const env = { MAILWARDEN_STATE: url, MAILWARDEN_TOKEN_PASSPHRASE: passphrase };
    const onPg = await startStack({ policy, env, existingSandbox: sandbox });
    stacks.push({ ...onPg, close: () => onPg.close().finally(() => sandbox.close()) });
    expect(await observe(onPg)).toEqual(onFiles);
    // And the cap holds on: 3 more moves, not 5.
    const more = await onPg.call('archive', { threadIds: single.slice(2, 6) });
    expect(more.structured['remainingToday']).toBe(0);
  }, 180_000);
});
