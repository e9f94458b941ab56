import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { MailError } from '../../mail/errors.js';
import { parseMark } from '../../mail/inbox-mark.js';
import type { PolicyStore } from '../../policy/gate.js';
import { SAME_DAY_WINDOW, isCappedMove, usedToday } from '../../policy/move-cap.js';
import { countGroups, rangeWindow } from '../../policy/move-counts.js';
import { MoveGroups } from '../../policy/move-log.js';
import type { LogRecord } from '../../policy/move-log.js';
import type { InboxMarkStore } from '../inbox-mark.js';
import { connectionFor, insertRecords, lockContext } from './action-log.js';
import { stateDbError } from './db.js';
import type { StateDb } from './db.js';

/*
 * The write policy's storage on PostgreSQL (docs/architecture.md, "Where state lives"). The
 * per-account write lock is a session advisory lock on one connection, keyed by a stable 64-bit
 * hash of "mailwarden:<account>", and everything the locked call reads or appends for that
 * account goes through that same connection, so the cap count and the intent records are
 * serialized with every other replica's. Each append commits on its own, before the mailbox
 * write runs: a process that dies mid-write leaves its intent records (pending, which count),
 * and its connection closing releases the lock.
 */

/** The advisory lock key of an account: the first 8 bytes of SHA-256, as a signed 64-bit integer. */
export function accountLockKey(account: string): string {
  return createHash('sha256').update(`mailwarden:${account}`).digest().readBigInt64BE(0).toString();
}

/** How long a call waits for another call's lock on the same account before it gives up. */
const LOCK_WAIT = '30s';

type Query = Pick<PoolClient, 'query'>;

export function pgPolicyStore(db: StateDb): PolicyStore {
  const lockOf = lockContext(db);
  /** The locked connection when the caller holds `account`'s lock, else the pool. */
  const via = (account: string): Query => connectionFor(db, account);
  const fail = (e: unknown, doing: string) => stateDbError(db.name, e, doing);

  async function rows(account: string, lower: number, upper: number): Promise<LogRecord[]> {
    const r = await via(account).query<{ id: string; record: Record<string, unknown> }>(
      `SELECT id, record FROM mailwarden_action_log
        WHERE account = $1 AND kind = 'move' AND time >= $2 AND time <= $3 ORDER BY id`,
      [account, new Date(lower).toISOString(), new Date(upper).toISOString()],
    );
    return r.rows.map((row) => ({
      line: Number(row.id),
      at: Date.parse(String(row.record['time'])),
      record: row.record,
    }));
  }

  return {
    id: `postgres:${db.name}`,
    async append(records) {
      if (records.length === 0) return;
      const accounts = new Set(records.map((r) => r.account));
      const q = accounts.size === 1 ? via(records[0]?.account as string) : db.pool;
      try {
        await insertRecords(q, records);
      } catch (e) {
        throw fail(e, 'appending to the action log');
      }
    },
    async movesToday(account, now, tz) {
      try {
        const found = await rows(account, now - SAME_DAY_WINDOW, now + SAME_DAY_WINDOW);
        return usedToday(
          found.filter((r) => isCappedMove(r.record, account)),
          now,
          tz,
        ).used;
      } catch (e) {
        throw fail(e, "counting today's moves");
      }
    },
    async withLock(account, fn) {
      let client: PoolClient;
      try {
        client = await db.pool.connect();
      } catch (e) {
        throw fail(e, `taking the write lock of account ${account}`);
      }
      const lost = new AbortController();
      const onError = (): void => lost.abort(new Error('the state database connection was lost'));
      client.on('error', onError);
      let broken = false;
      try {
        try {
          await client.query(`SET lock_timeout = '${LOCK_WAIT}'`);
          await client.query('SELECT pg_advisory_lock($1)', [accountLockKey(account)]);
        } catch (e) {
          broken = true;
          if ((e as { code?: unknown }).code === '55P03')
            throw new MailError(
              'upstream_unavailable',
              `another call held the write lock of account ${account} in the state database ${db.name} for ${LOCK_WAIT}; nothing was changed. Try again.`,
              { cause: e, retryable: true },
            );
          throw fail(e, `taking the write lock of account ${account}`);
        }
        try {
          return await lockOf.run({ account, client }, () => fn(lost.signal));
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [accountLockKey(account)]).catch(() => {
            // Closing the connection (release(true) below) releases the lock.
            broken = true;
          });
        }
      } finally {
        client.off('error', onError);
        client.release(broken || lost.signal.aborted);
      }
    },
    async countMoves(account, range, tz, top) {
      const { lower, upper } = rangeWindow(range);
      let found: LogRecord[];
      try {
        found = await rows(account, lower, upper);
      } catch (e) {
        throw fail(e, 'counting moves');
      }
      const groups = new MoveGroups();
      for (const r of found) groups.add(r);
      return {
        from: range.from,
        to: range.to,
        timeZone: tz,
        ...countGroups(groups.values(), range, tz, top),
        damagedLines: [],
        damagedLineCount: 0,
        complete: true,
        lines: found.length,
      };
    },
  };
}

/** The new-mail marks as rows of mailwarden_inbox_marks, one per account. */
export function pgInboxMarkStore(db: StateDb): InboxMarkStore {
  const pathFor = (account: string): string =>
    `row ${JSON.stringify(account)} of mailwarden_inbox_marks in ${db.name}`;
  return {
    dir: db.name,
    pathFor,
    async read(account) {
      let r;
      try {
        r = await db.pool.query<{ mark: unknown }>(
          'SELECT mark FROM mailwarden_inbox_marks WHERE account = $1',
          [account],
        );
      } catch (e) {
        throw stateDbError(db.name, e, 'reading the new-mail mark');
      }
      const row = r.rows[0];
      return row === undefined ? undefined : parseMark(JSON.stringify(row.mark), pathFor(account), account);
    },
    async write(mark) {
      try {
        await db.pool.query(
          `INSERT INTO mailwarden_inbox_marks (account, mark, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (account) DO UPDATE SET mark = EXCLUDED.mark, updated_at = now()`,
          [mark.account, JSON.stringify(mark)],
        );
      } catch (e) {
        throw stateDbError(db.name, e, 'writing the new-mail mark');
      }
    },
  };
}
