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
    try {
      await insertRecords(this.db.pool, records);
    } catch (e) {
      throw stateDbError(this.db.name, e, 'appending to the action log');
    }
  }

  override source(): LogSource {
    return pgLogSource(this.db);
  }
}
