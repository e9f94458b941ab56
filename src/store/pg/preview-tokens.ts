import {
  MAX_LIVE_PREVIEWS,
  PREVIEW_TTL_MS,
  judgePreview,
  lostConsume,
  newPreviewToken,
  previewTokenHash,
} from '../preview-tokens.js';
import type { PreviewScope, PreviewStore, StoredPreview } from '../preview-tokens.js';
import { stateDbError } from './db.js';
import type { StateDb } from './db.js';

/**
 * Bulk preview tokens in PostgreSQL (src/store/preview-tokens.ts): one row per token in
 * mailwarden_preview_tokens, keyed by the token's SHA-256 (the token itself is never stored).
 * Consuming is one `UPDATE … SET used = true WHERE … AND NOT used RETURNING`: of replicas racing
 * with one token, exactly one gets the row back. Times are the server's clock (the caller's
 * `now`), as with the files.
 */
export function pgPreviewStore(db: StateDb): PreviewStore {
  const fail = (e: unknown, doing: string) => stateDbError(db.name, e, doing);
  const at = (ms: number): string => new Date(ms).toISOString();

  async function read(hash: string): Promise<(StoredPreview & { ids: string[] }) | undefined> {
    const r = await db.pool.query<{
      account: string;
      query: string;
      change: string;
      ids: string[];
      expires_at: Date;
      used: boolean;
    }>(
      'SELECT account, query, change, ids, expires_at, used FROM mailwarden_preview_tokens WHERE token_hash = $1',
      [hash],
    );
    const row = r.rows[0];
    if (row === undefined) return undefined;
    return {
      account: row.account,
      query: row.query,
      change: row.change,
      ids: row.ids,
      expiresAt: row.expires_at.getTime(),
      used: row.used,
    };
  }

  return {
    async issue(scope, ids, now) {
      const token = newPreviewToken();
      const expiresAt = now + PREVIEW_TTL_MS;
      try {
        await db.pool.query('DELETE FROM mailwarden_preview_tokens WHERE expires_at <= $1', [at(now)]);
        // The oldest unused previews of the account give way, so at most MAX_LIVE_PREVIEWS stay.
        await db.pool.query(
          `DELETE FROM mailwarden_preview_tokens WHERE token_hash IN (
             SELECT token_hash FROM mailwarden_preview_tokens
              WHERE account = $1 AND NOT used ORDER BY issued_at DESC OFFSET $2)`,
          [scope.account, MAX_LIVE_PREVIEWS - 1],
        );
        await db.pool.query(
          `INSERT INTO mailwarden_preview_tokens (token_hash, account, query, change, ids, issued_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            previewTokenHash(token),
            scope.account,
            scope.query,
            scope.change,
            [...ids],
            at(now),
            at(expiresAt),
          ],
        );
      } catch (e) {
        throw fail(e, `keeping a preview token of account ${scope.account}`);
      }
      return { token, expiresAt };
    },
    async check(token, scope, now) {
      let found: Awaited<ReturnType<typeof read>>;
      try {
        found = await read(previewTokenHash(token));
      } catch (e) {
        throw fail(e, `reading a preview token of account ${scope.account}`);
      }
      judgePreview(found, scope, now);
      return new Set((found as { ids: string[] }).ids);
    },
    async consume(token, scope: PreviewScope, now) {
      const hash = previewTokenHash(token);
      try {
        const r = await db.pool.query(
          `UPDATE mailwarden_preview_tokens SET used = true
            WHERE token_hash = $1 AND account = $2 AND query = $3 AND change = $4
              AND expires_at > $5 AND NOT used
           RETURNING 1`,
          [hash, scope.account, scope.query, scope.change, at(now)],
        );
        if ((r.rowCount ?? 0) > 0) return;
      } catch (e) {
        throw fail(e, `using a preview token of account ${scope.account}`);
      }
      let found: Awaited<ReturnType<typeof read>>;
      try {
        found = await read(hash);
      } catch (e) {
        throw fail(e, `reading a preview token of account ${scope.account}`);
      }
      throw lostConsume(found, scope, now);
    },
  };
}
