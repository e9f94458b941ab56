import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolClient } from 'pg';
import { ActionLog } from '../../policy/action-log.js';
import type { LogRecord, LogSource } from '../../policy/move-log.js';
import { stateDbError } from './db.js';
import type { StateDb } from './db.js';

/*
 * The action log in the state database (MAILWARDEN_STATE=postgres://…): every record, the write
 * policy's move records and the mailbox's own (ActionRecord), is one row of
 * mailwarden_action_log, the whole record as jsonb; readers select by time (and account, and
 * kind) and read in id order, which is the order the rows were written.
 */

type Query = Pick<PoolClient, 'query'>;

/** Which connection holds which account's write lock in this async context, per database. */
const locks = new WeakMap<StateDb, AsyncLocalStorage<{ account: string; client: PoolClient }>>();

/** Where a locked call of `db` says which connection holds its account's lock (policy-store.ts). */
export function lockContext(db: StateDb): AsyncLocalStorage<{ account: string; client: PoolClient }> {
  let held = locks.get(db);
  if (held === undefined) {
    held = new AsyncLocalStorage<{ account: string; client: PoolClient }>();
    locks.set(db, held);
  }
  return held;
}

/**
 * The connection that holds `account`'s write lock when the caller runs inside that locked call,
 * else the pool. Every append of a locked call (the policy's records and the mailbox's own) goes
 * through it: a call waiting for the lock holds a pooled connection, so a lock holder that asked
 * the pool for another could wait behind the very calls that wait for it.
 */
export function connectionFor(db: StateDb, account: string): Query {
  const h = locks.get(db)?.getStore();
  return h !== undefined && h.account === account ? h.client : db.pool;
}

/**
 * Inserts records in one statement, in the order given (so ids follow it), each with its own time
 * or `now`; the columns readers select on are taken from the record.
 */
export async function insertRecords(
  q: Query,
  records: ReadonlyArray<{ account: string; time?: string }>,
): Promise<void> {
  if (records.length === 0) return;
  const at = new Date().toISOString();
  // `time` first, as in the file.
  const full = records.map((r) => Object.assign({ time: at }, r, { time: r.time ?? at }));
  await q.query(
    `INSERT INTO mailwarden_action_log (account, time, tool, op, kind, call, outcome, record)
     SELECT r->>'account', (r->>'time')::timestamptz, r->>'tool', r->>'op', r->>'kind',
            r->>'call', r->>'outcome', r
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(r, n) ORDER BY n`,
    [JSON.stringify(full)],
  );
}

/** The log's rows as readers take them: the row id as the line, the record's own time. */
export function pgLogSource(db: StateDb): LogSource {
  return {
    name: db.name,
    async read(query, onRecord) {
      const where = ['time >= $1', 'time <= $2'];
      const params: unknown[] = [new Date(query.lower).toISOString(), new Date(query.upper).toISOString()];
      if (query.accounts !== undefined) {
        params.push([...query.accounts]);
        where.push(`account = ANY($${params.length}::text[])`);
      }
      if (query.kind !== undefined) {
        params.push(query.kind);
        where.push(`kind = $${params.length}`);
      }
      let rows: Array<{ id: string; record: Record<string, unknown> }>;
      try {
        rows = (
          await db.pool.query<{ id: string; record: Record<string, unknown> }>(
            `SELECT id, record FROM mailwarden_action_log WHERE ${where.join(' AND ')} ORDER BY id`,
            params,
          )
        ).rows;
      } catch (e) {
        throw stateDbError(db.name, e, 'reading the action log');
      }
      for (const row of rows) {
        const r: LogRecord = {
          line: Number(row.id),
          at: Date.parse(String(row.record['time'])),
          record: row.record,
        };
        onRecord(r);
      }
      return { lines: rows.length, found: true };
    },
  };
}

/**
 * The action log every writer appends through when the state is in PostgreSQL: the same
 * interface as the file log (tools, the logged mailbox, confirmations, the unsubscribe client and
 * the review page all append through it), one row per record. `path` is the database's name, for
 * messages; no file is written.
 */
export class PgActionLog extends ActionLog {
  constructor(private readonly db: StateDb) {
    super(db.name);
  }

  /** Proves the database answers, so a write that must be logged is not made when it does not. */
  override async ensureWritable(): Promise<void> {
    try {
      await this.db.pool.query('SELECT 1');
    } catch (e) {
      throw stateDbError(this.db.name, e, 'checking the action log can be written');
    }
  }

  override async appendMany(records: ReadonlyArray<{ account: string; time?: string }>): Promise<void> {
    // Inside a call that holds the account's write lock, through that call's connection.
    const accounts = new Set(records.map((r) => r.account));
    const [only] = accounts;
    const q = accounts.size === 1 && only !== undefined ? connectionFor(this.db, only) : this.db.pool;
    try {
      await insertRecords(q, records);
    } catch (e) {
      throw stateDbError(this.db.name, e, 'appending to the action log');
    }
  }

  override source(): LogSource {
    return pgLogSource(this.db);
  }
}
