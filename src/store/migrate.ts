import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { MailError } from '../mail/errors.js';
import { LOG_LOST_MARK, TORN_LINE_MARK } from '../policy/action-log.js';
import { isCappedMove, localDay, usedToday } from '../policy/move-cap.js';
import { MARKER_DIR, readMarker } from '../policy/move-marker.js';
import { scanActionLog } from '../policy/move-log.js';
import type { LogRecord } from '../policy/move-log.js';
import { stateDir } from './config.js';
import type { Env } from './config.js';
import { inboxMarkStore } from './inbox-mark.js';
import { MIGRATIONS, accountLockKey, migrateIn, openPool, stateDbError } from './pg/index.js';
import type { StateDb } from './pg/index.js';

/*
 * `mailwarden state migrate --from files --to postgres://…`: a one-machine install's state, read
 * from its files, written into the state database in ONE transaction, so the database holds all
 * of it or none of it. Each kind of state is a mover; the command runs the list in order inside
 * that transaction, the schema's creation included. A dry run is the same transaction rolled back,
 * so it reports exactly what a real run would write (and refuses exactly what it would refuse)
 * and leaves the database as it was. The files are only read, never changed.
 */

/** The files side: the state dir a files install keeps its state in (MAILWARDEN_STATE_DIR). */
export interface FileSide {
  env: Env;
  /** stateDir(env). */
  dir: string;
}

/** The database side: the open database and the connection whose transaction every mover writes in. */
export interface PgSide {
  db: StateDb;
  client: Pick<PoolClient, 'query'>;
  /** The instant "today" is judged at (the move markers' check). */
  now: number;
}

/** What a mover moved: how many of its kind, per account, and anything a person should know. */
export interface MovedKind {
  kind: string;
  perAccount: Record<string, number>;
  notes: string[];
}

export interface Mover {
  kind: string;
  /**
   * Reads its kind from the files and writes it through `to.client`; throws MigrationRefused
   * (nothing is written: the transaction is rolled back) when the database already holds what
   * would be overwritten.
   */
  move(from: FileSide, to: PgSide): Promise<Omit<MovedKind, 'kind'>>;
}

/** The migration will not run, and why; nothing was written. The command exits 2 with the message. */
export class MigrationRefused extends Error {
  override readonly name = 'MigrationRefused';
}

export interface MigrationReport {
  /** The files' state dir. */
  from: string;
  /** The database URL with any password hidden. */
  to: string;
  dryRun: boolean;
  kinds: MovedKind[];
}

/** How long the migration waits for a serving replica's write lock on an account. */
const LOCK_WAIT = '30s';

/**
 * Takes the write lock of every account about to be moved, as a transaction-scoped advisory lock on
 * the key the PostgreSQL policy store's session lock uses (src/store/pg/policy-store.ts), so a
 * replica already serving on this database cannot append between the check and the copy.
 */
async function lockAccounts(to: PgSide, accounts: Iterable<string>): Promise<void> {
  for (const account of [...new Set(accounts)].sort()) {
    try {
      await to.client.query('SELECT pg_advisory_xact_lock($1)', [accountLockKey(account)]);
    } catch (e) {
      if ((e as { code?: unknown }).code === '55P03')
        throw new MigrationRefused(
          `a server using ${to.db.name} held the write lock of account ${account} for ${LOCK_WAIT}; nothing was written. Stop the servers and run it again.`,
        );
      throw e;
    }
  }
}

function tally(accounts: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of accounts) out[a] = (out[a] ?? 0) + 1;
  return out;
}

/** Records the log writes about the file itself (a torn line ended, a lost log restarted). */
function isFileNote(record: Record<string, unknown>): boolean {
  return record['account'] === '*' && (record['op'] === TORN_LINE_MARK || record['op'] === LOG_LOST_MARK);
}

/** Rows per INSERT: a batch is one statement of a few hundred kilobytes at most. */
const BATCH = 500;

/** The action log's path in a state dir (as src/cli/runtime.ts names it). */
export function actionLogPath(dir: string): string {
  return join(dir, 'action-log.jsonl');
}

/**
 * Every record of action-log.jsonl, in file order, as the same JSON (times kept), into
 * mailwarden_action_log. Refused when the database holds a record of any account in the file, or
 * when a line of the file is damaged (it could be one of today's moves, as the cap reads it).
 */
export const actionLogMover: Mover = {
  kind: 'action-log records',
  async move(from, to) {
    const path = actionLogPath(from.dir);
    const records: LogRecord[] = [];
    let notes = 0;
    try {
      await scanActionLog(
        path,
        (r) => {
          if (isFileNote(r.record)) notes++;
          else records.push(r);
        },
        (p) => {
          throw new MigrationRefused(
            `line ${p.line} of ${path} is ${p.problem}; nothing was written. Repair or delete that line (mailwarden reads the same line as damaged and stops moves), then run it again.`,
          );
        },
      );
    } catch (e) {
      if (e instanceof MigrationRefused) throw e;
      throw new MigrationRefused(
        `the action log ${path} cannot be read (${(e as Error).message}); nothing was written.`,
      );
    }
    const accounts = [...new Set(records.map((r) => String(r.record['account'])))].sort();
    await lockAccounts(to, accounts);
    if (accounts.length > 0) {
      const held = await to.client.query<{ account: string; n: number }>(
        `SELECT account, count(*)::int AS n FROM mailwarden_action_log
          WHERE account = ANY($1::text[]) GROUP BY account ORDER BY account`,
        [accounts],
      );
      if (held.rows.length > 0)
        throw new MigrationRefused(
          `${to.db.name} already holds action-log records of ${held.rows
            .map((r) => `account ${r.account} (${r.n})`)
            .join(
              ', ',
            )}; nothing was written. Moving this log as well would count those moves twice (or mix two histories). Migrate into an empty database, or delete that account's rows first if they are a copy of this log.`,
        );
    }
    for (let i = 0; i < records.length; i += BATCH) {
      const batch = records.slice(i, i + BATCH).map((r) => r.record);
      // The same INSERT as the policy store's append: the record whole as jsonb, the columns taken
      // from it, rows in the batch's order (so ids follow the file's order).
      await to.client.query(
        `INSERT INTO mailwarden_action_log (account, time, tool, op, kind, call, outcome, record)
         SELECT r->>'account', (r->>'time')::timestamptz, coalesce(r->>'tool', ''),
                coalesce(r->>'op', ''), r->>'kind', r->>'call', coalesce(r->>'outcome', ''), r
           FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(r, n) ORDER BY n`,
        [JSON.stringify(batch)],
      );
    }
    return {
      perAccount: tally(records.map((r) => String(r.record['account']))),
      notes:
        notes === 0
          ? []
          : [
              `${notes} record(s) of account "*" that describe the log file itself (a torn line ended, a lost log restarted) stay in the file`,
            ],
    };
  },
};

/** Account names as mark and timer files are named after them (src/store/inbox-mark.ts). */
const ACCOUNT_FILE = /^([a-z0-9][a-z0-9._-]{0,63})\.json$/;

async function accountFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .map((n) => ACCOUNT_FILE.exec(n)?.[1])
    .filter((a): a is string => a !== undefined)
    .sort();
}

/**
 * Every marks/ACCOUNT.json, each checked as the server reads it, into mailwarden_inbox_marks.
 * Refused when the database already holds a mark of one of those accounts (a replica has been
 * checking new mail there: which mark is right is not the migration's to decide).
 */
export const inboxMarksMover: Mover = {
  kind: 'new-mail marks',
  async move(from, to) {
    const store = inboxMarkStore(join(from.dir, 'marks'));
    const accounts = await accountFiles(store.dir);
    const marks = [];
    for (const account of accounts) {
      let mark;
      try {
        mark = await store.read(account);
      } catch (e) {
        throw new MigrationRefused(`${(e as Error).message}; nothing was written.`);
      }
      if (mark !== undefined) marks.push(mark);
    }
    if (marks.length === 0) return { perAccount: {}, notes: [] };
    await lockAccounts(
      to,
      marks.map((m) => m.account),
    );
    const held = await to.client.query<{ account: string }>(
      'SELECT account FROM mailwarden_inbox_marks WHERE account = ANY($1::text[]) ORDER BY account',
      [marks.map((m) => m.account)],
    );
    if (held.rows.length > 0)
      throw new MigrationRefused(
        `${to.db.name} already holds the new-mail mark of ${held.rows.map((r) => `account ${r.account}`).join(', ')}; nothing was written. Migrate into an empty database, or delete that row first.`,
      );
    for (const mark of marks)
      await to.client.query(
        'INSERT INTO mailwarden_inbox_marks (account, mark, updated_at) VALUES ($1, $2::jsonb, now())',
        [mark.account, JSON.stringify(mark)],
      );
    return { perAccount: tally(marks.map((m) => m.account)), notes: [] };
  },
};

/**
 * Every timers/ACCOUNT.json (timer → time of the last claim) into mailwarden_timer_slots. A slot
 * only says when a timer last ran, so one the database holds already is kept when it is later.
 * A file the timers themselves would read as no claim (src/policy/timer-slots.ts) moves nothing.
 */
export const timerSlotsMover: Mover = {
  kind: 'timer slots',
  async move(from, to) {
    const dir = join(from.dir, 'timers');
    const moved: string[] = [];
    for (const account of await accountFiles(dir)) {
      let book: unknown;
      try {
        book = JSON.parse(await readFile(join(dir, `${account}.json`), 'utf8'));
      } catch {
        continue;
      }
      if (typeof book !== 'object' || book === null || Array.isArray(book)) continue;
      for (const [timer, at] of Object.entries(book)) {
        if (typeof at !== 'string' || !Number.isFinite(Date.parse(at))) continue;
        await to.client.query(
          `INSERT INTO mailwarden_timer_slots AS s (account, timer, claimed_at) VALUES ($1, $2, $3)
           ON CONFLICT (account, timer) DO UPDATE SET claimed_at = greatest(s.claimed_at, EXCLUDED.claimed_at)`,
          [account, timer, new Date(Date.parse(at)).toISOString()],
        );
        moved.push(account);
      }
    }
    return { perAccount: tally(moved), notes: [] };
  },
};

/**
 * The files backend also keeps each account's day count in move-count/ACCOUNT.json, so that losing
 * the log never hands out a fresh cap; the PostgreSQL store counts the day from the action-log
 * records alone (there is no marker there), which the action-log mover has moved. Nothing to copy,
 * then, unless a marker of today says more than the log: the log was lost or moved aside today,
 * and the database would count fewer of today's moves than the files do. That is refused (the cap
 * must not grow by migrating); the marker's day passes at midnight.
 */
export const moveMarkersCheck: Mover = {
  kind: 'move-count markers',
  async move(from, to) {
    const logPath = actionLogPath(from.dir);
    const accounts = await accountFiles(join(from.dir, MARKER_DIR));
    const why = 'PostgreSQL counts the day from the action-log records';
    if (accounts.length === 0) return { perAccount: {}, notes: [`none in the files (${why})`] };
    const byAccount = new Map<string, LogRecord[]>();
    await scanActionLog(
      logPath,
      (r) => {
        for (const account of accounts)
          if (isCappedMove(r.record, account)) byAccount.set(account, [...(byAccount.get(account) ?? []), r]);
      },
      () => undefined,
    ).catch(() => undefined);
    for (const account of accounts) {
      const marker = await readMarker(logPath, account);
      if (marker === undefined || marker.day !== localDay(to.now, marker.timeZone)) continue;
      const { used } = usedToday(byAccount.get(account) ?? [], to.now, marker.timeZone);
      if (marker.moves > used)
        throw new MigrationRefused(
          `account ${account}: ${join(from.dir, MARKER_DIR, `${account}.json`)} counts ${marker.moves} agent moves out of the inbox today (${marker.day}, ${marker.timeZone}) but the action log holds ${used}: the log was lost or moved aside today. The database counts the day from the log alone, so migrating now would give the agent ${marker.moves - used} more moves today; nothing was written. Run it again after midnight (${marker.timeZone}).`,
        );
    }
    return {
      perAccount: {},
      notes: [`not copied (${why}; the ${accounts.length} in the files say no more than the log does)`],
    };
  },
};

/** The movers in the order they run. Other kinds (the accounts registry and its secrets) plug in here. */
/**
 * The accounts registry and every encrypted secret file (src/store/accounts-move.ts), moved as
 * they are: never decrypted, so every server on the database needs the key they were sealed with.
 * An account the database already holds with another entry or secret refuses the migration.
 */
const accountsMover: Mover = {
  kind: 'accounts and secrets',
  async move(from, to) {
    const { moveAccountsInTransaction } = await import('./accounts-move.js');
    let moved;
    try {
      moved = await moveAccountsInTransaction(from.env, to.db, to.client);
    } catch (e) {
      if (e instanceof MailError && e.code === 'invalid_input') throw new MigrationRefused(e.message);
      throw e;
    }
    const notes = [
      `${moved.accounts} account(s) and ${moved.secrets} encrypted secret(s), moved without decrypting: every server on the database needs the same key (MAILWARDEN_TOKEN_PASSPHRASE or the keyring entry)`,
    ];
    if (moved.skippedSame > 0)
      notes.push(`${moved.skippedSame} already in the database, the same: left as they were`);
    return { perAccount: moved.perAccount, notes };
  },
};

export const MOVERS: readonly Mover[] = [
  actionLogMover,
  moveMarkersCheck,
  inboxMarksMover,
  timerSlotsMover,
  accountsMover,
];

/** The schema brought up inside the migration's transaction, so a refused or dry run leaves an empty database empty. */
function schemaInTransaction(db: StateDb, client: Pick<PoolClient, 'query'>): Promise<void> {
  return migrateIn(
    client,
    MIGRATIONS,
    (have) =>
      new MigrationRefused(
        `the state database ${db.name} has schema version ${have}, newer than this mailwarden knows (${MIGRATIONS.length}); nothing was written. Migrate with that newer mailwarden.`,
      ),
  );
}

export interface MigrateOptions {
  env: Env;
  url: string;
  dryRun?: boolean;
  movers?: readonly Mover[];
  now?: number;
}

/**
 * Moves the files' state into the database at `url` in one transaction (rolled back for a dry
 * run). Throws MigrationRefused (nothing written) or the database's MailError.
 */
export async function migrateState(opts: MigrateOptions): Promise<MigrationReport> {
  const dryRun = opts.dryRun === true;
  const from: FileSide = { env: opts.env, dir: stateDir(opts.env) };
  const db = await openPool(opts.url, { max: 2 });
  const kinds: MovedKind[] = [];
  try {
    let client: PoolClient;
    try {
      client = await db.pool.connect();
    } catch (e) {
      throw stateDbError(db.name, e, 'connecting');
    }
    let broken = false;
    try {
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
        await schemaInTransaction(db, client);
        const to: PgSide = { db, client, now: opts.now ?? Date.now() };
        for (const mover of opts.movers ?? MOVERS)
          kinds.push({ kind: mover.kind, ...(await mover.move(from, to)) });
        await client.query(dryRun ? 'ROLLBACK' : 'COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (e instanceof MigrationRefused || e instanceof MailError) throw e;
        throw stateDbError(db.name, e, dryRun ? 'a dry run of the migration' : 'the migration');
      }
    } finally {
      client.release(broken);
    }
  } finally {
    await db.close();
  }
  return { from: from.dir, to: db.name, dryRun, kinds };
}

/** The report as a person reads it. */
export function formatReport(report: MigrationReport): string {
  const lines = [
    `${report.dryRun ? 'Would move' : 'Moved'} the state in ${report.from} to ${report.to}${report.dryRun ? ' (dry run: nothing was written)' : ''}:`,
  ];
  for (const k of report.kinds) {
    const entries = Object.entries(k.perAccount).sort(([a], [b]) => a.localeCompare(b));
    const total = entries.reduce((n, [, c]) => n + c, 0);
    const detail = entries.length === 0 ? '' : ` (${entries.map(([a, c]) => `${a}: ${c}`).join(', ')})`;
    if (total > 0 || k.notes.length === 0) lines.push(`  ${k.kind}: ${total}${detail}`);
    for (const note of k.notes) lines.push(`  ${k.kind}: ${note}`);
  }
  if (!report.dryRun)
    lines.push(
      `The files were left as they were. Start every server with MAILWARDEN_STATE set to this database (${report.to}); a server still on files would start a second history.`,
    );
  return lines.join('\n');
}
