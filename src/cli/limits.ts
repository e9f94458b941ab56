import { invalidInput } from '../mail/errors.js';
import type { Env } from '../store/config.js';

/** How long mailwarden waits on the mailbox: per request, per rate limit, per tool call. */
export interface Limits {
  /** Per Gmail request (reads and the token refresh). */
  readMs: number;
  /** Per Gmail write. */
  writeMs: number;
  /** The one wait a rate limit gets (Retry-After, at most this). */
  rateLimitMaxWaitMs: number;
  /** A whole tool call, confirmation questions excepted. */
  callBudgetMs: number;
  /**
   * IMAP without LIST-STATUS: how old a folder check a read-only call may reuse to locate
   * copies (labels) instead of a STATUS per label folder; 0: always live.
   */
  imapRecheckMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  readMs: 20_000,
  writeMs: 30_000,
  rateLimitMaxWaitMs: 20_000,
  callBudgetMs: 120_000,
  imapRecheckMs: 300_000,
};

const VARS: ReadonlyArray<[keyof Limits, string, number, number]> = [
  ['readMs', 'MAILWARDEN_REQUEST_TIMEOUT_MS', 1, 600_000],
  ['writeMs', 'MAILWARDEN_WRITE_TIMEOUT_MS', 1, 600_000],
  ['rateLimitMaxWaitMs', 'MAILWARDEN_RATE_LIMIT_MAX_WAIT_MS', 0, 300_000],
  ['callBudgetMs', 'MAILWARDEN_CALL_BUDGET_MS', 1, 3_600_000],
  ['imapRecheckMs', 'MAILWARDEN_IMAP_RECHECK_MS', 0, 600_000],
];

/**
 * Read at start, so a bad value stops the server with the variable's name instead of a later
 * call behaving oddly. MAILWARDEN_REQUEST_TIMEOUT_MS sets every request's deadline;
 * MAILWARDEN_WRITE_TIMEOUT_MS, when set, overrides it for writes.
 */
export function limitsFromEnv(env: Env): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  for (const [key, name, min, max] of VARS) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw.trim());
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
      throw invalidInput(name, `must be a whole number of milliseconds from ${min} to ${max} (got "${raw}")`);
    out[key] = n;
  }
  const write = env['MAILWARDEN_WRITE_TIMEOUT_MS'];
  const read = env['MAILWARDEN_REQUEST_TIMEOUT_MS'];
  if ((write === undefined || write.trim() === '') && read !== undefined && read.trim() !== '')
    out.writeMs = out.readMs;
  return out;
}
