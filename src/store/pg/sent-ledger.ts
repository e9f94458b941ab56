import { randomBytes } from 'node:crypto';
import { ledgerKeys } from '../../net/ledger.js';
import type { SentLedger, SentRecord } from '../../net/ledger.js';
import { stateDbError } from './db.js';
import type { StateDb } from './db.js';

/**
 * How long a claim holds when its holder never releases it (a process that died mid-request):
 * well over the one-click client's whole budget (10 s), so a live request is never claimed twice.
 */
export const CLAIM_LEASE_MS = 120_000;

/**
 * The one-click unsubscribe ledger in PostgreSQL (src/net/ledger.ts): the requests made, one row
 * each in mailwarden_unsubscribe_ledger (account, sender, url, at, thread_id, status), and the
 * requests under way, one row per key (its URL, its sender) in mailwarden_unsubscribe_claims. A
 * claim takes all its keys in one statement or none: a key another holder took less than
 * CLAIM_LEASE_MS ago (on the database's clock) is not taken over. Releasing deletes the holder's
 * own rows only, so a claim taken over after its lease is never released by the old holder.
 */
export function pgSentLedger(db: StateDb): SentLedger {
  const fail = (e: unknown, doing: string) => stateDbError(db.name, e, doing);
  return {
    async find(account, sender, url) {
      try {
        const r = await db.pool.query<{
          sender: string;
          url: string;
          at: Date;
          thread_id: string;
          status: number | null;
        }>(
          `SELECT sender, url, at, thread_id, status FROM mailwarden_unsubscribe_ledger
            WHERE account = $1 AND ((sender <> '' AND sender = $2) OR url = $3)
            ORDER BY (sender <> '' AND sender = $2) DESC, id DESC LIMIT 1`,
          [account, sender, url],
        );
        const row = r.rows[0];
        if (row === undefined) return undefined;
        const found: SentRecord = {
          at: row.at.toISOString(),
          threadId: row.thread_id,
          sender: row.sender,
          url: row.url,
        };
        return row.status === null ? found : { ...found, status: row.status };
      } catch (e) {
        throw fail(e, `reading the unsubscribe ledger of account ${account}`);
      }
    },
    async claim(account, sender, url) {
      const keys = ledgerKeys(sender, url);
      const holder = randomBytes(12).toString('hex');
      try {
        const r = await db.pool.query(
          `INSERT INTO mailwarden_unsubscribe_claims AS c (account, key, holder, claimed_at)
           SELECT $1, k, $2, now() FROM unnest($3::text[]) AS k
           ON CONFLICT (account, key) DO UPDATE SET holder = EXCLUDED.holder, claimed_at = now()
            WHERE c.claimed_at <= now() - make_interval(secs => $4::double precision / 1000)
           RETURNING key`,
          [account, holder, keys, CLAIM_LEASE_MS],
        );
        const release = async (): Promise<void> => {
          // A release that cannot reach the database leaves the claim to its lease.
          await db.pool
            .query('DELETE FROM mailwarden_unsubscribe_claims WHERE account = $1 AND holder = $2', [
              account,
              holder,
            ])
            .catch(() => undefined);
        };
        if ((r.rowCount ?? 0) === keys.length) return release;
        await release();
        return undefined;
      } catch (e) {
        throw fail(e, `claiming an unsubscribe request of account ${account}`);
      }
    },
    async record(account, r) {
      try {
        await db.pool.query(
          `INSERT INTO mailwarden_unsubscribe_ledger (account, sender, url, at, thread_id, status)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [account, r.sender, r.url, r.at, r.threadId, r.status ?? null],
        );
      } catch (e) {
        throw fail(e, `recording an unsubscribe request of account ${account}`);
      }
    },
  };
}
