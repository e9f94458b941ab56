import { randomBytes } from 'node:crypto';
import { invalidInput } from '../../mail/errors.js';

/**
 * Preview tokens pin the exact message set a dry run showed, so the write that follows touches
 * only what the user saw. They live in this server process's memory (a random id → record), never
 * on disk: a restart forgets them, and that only means running the dry run again.
 */

export const PREVIEW_TTL_MS = 30 * 60_000;
/** Each record may hold up to 100,000 ids; a handful of live previews is all a session needs. */
const MAX_LIVE = 32;

export interface PreviewScope {
  account: string;
  query: string;
  /** changeKey() of the add/remove lists as the caller wrote them. */
  change: string;
}

interface PreviewRecord extends PreviewScope {
  ids: ReadonlySet<string>;
  expiresAt: number;
  /** Kept after use until expiry, so a second use is told "already used", not "unknown". */
  used: boolean;
}

const records = new Map<string, PreviewRecord>();

function prune(now: number): void {
  for (const [token, r] of records) if (r.expiresAt <= now) records.delete(token);
}

export function issuePreview(
  scope: PreviewScope,
  ids: readonly string[],
  now: number,
): { token: string; expiresAt: number } {
  prune(now);
  // Map iteration is insertion order: the oldest previews give way first.
  for (const token of records.keys()) {
    if (records.size < MAX_LIVE) break;
    records.delete(token);
  }
  // 144 random bits: a token cannot be guessed, only handed back.
  const token = `pv_${randomBytes(18).toString('base64url')}`;
  const expiresAt = now + PREVIEW_TTL_MS;
  records.set(token, { ...scope, ids: new Set(ids), expiresAt, used: false });
  return { token, expiresAt };
}

/**
 * The pinned ids, if the token is live, unused and was issued for this very account, query and
 * change; otherwise invalid_input saying which. Checking does not use the token up (consume does,
 * right before the write), so a call refused for another reason can be retried with it.
 */
export function checkPreview(token: string, scope: PreviewScope, now: number): ReadonlySet<string> {
  const r = records.get(token);
  if (r === undefined) {
    throw invalidInput(
      'previewToken',
      'unknown token (tokens live in server memory for 30 minutes and a restart forgets them); run a dryRun again',
    );
  }
  if (r.expiresAt <= now) {
    records.delete(token);
    throw invalidInput(
      'previewToken',
      `expired at ${new Date(r.expiresAt).toISOString()}; run a dryRun again`,
    );
  }
  if (r.used)
    throw invalidInput('previewToken', 'already used (a preview token is single use); run a dryRun again');
  if (r.account !== scope.account) throw invalidInput('previewToken', `issued for account "${r.account}"`);
  if (r.query !== scope.query) {
    throw invalidInput('previewToken', `issued for the query "${r.query}", not "${scope.query}"`);
  }
  if (r.change !== scope.change) {
    throw invalidInput('previewToken', 'issued for a different add/remove change; run a dryRun for this one');
  }
  return r.ids;
}

export function consumePreview(token: string): void {
  const r = records.get(token);
  if (r !== undefined) r.used = true;
}
