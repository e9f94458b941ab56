import { mkdirSync, realpathSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import { mkdir, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { MailError, invalidInput } from '../mail/errors.js';
import { stateDir } from '../store/config.js';
import type { Env } from '../store/config.js';

/**
 * One writer per account, across every process that shares the config dir (an HTTP server, a
 * stdio server and a cron sweep at once), so two writers can never both pass the daily-cap check
 * with the same count. proper-lockfile holds the lock as a directory made with mkdir(2), atomic
 * on every filesystem including NFS, and refreshes its mtime while held; a lock whose mtime
 * stops moving belonged to a process that died without cleaning up (SIGKILL, power loss).
 */

/**
 * A held lock's mtime is refreshed every STALE/4 (5 s); one older than 20 s is taken over. 20 s
 * is four missed refreshes, far beyond any event-loop stall a mail server has (the longest
 * synchronous work is parsing a page of results, milliseconds), so a live holder is never
 * taken for dead; and it is under the 30 s a waiting writer waits, so a writer queued behind a
 * SIGKILLed process gets the lock instead of an error.
 */
export const LOCK_STALE_MS = 20_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
/** A takeover guard lives for microseconds; one this old was left by a crash mid-takeover. */
const GUARD_STALE_MS = 10_000;

export interface WriteLockOptions {
  /** How long to wait for the lock before giving up (default 30 s). */
  timeoutMs?: number;
  /** Age at which a lock nobody refreshes is taken over (default 20 s; tests use less). */
  staleMs?: number;
}

/** Runs `fn` holding the account's write lock; `signal` aborts if the lock is lost meanwhile. */
export type WriteLock = <T>(fn: (signal: AbortSignal) => Promise<T>) => Promise<T>;

const ACCOUNT = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The lock directory of an account: <config>/locks/write-<account>.lock. */
export function writeLockPath(env: Env, account: string): string {
  if (!ACCOUNT.test(account)) throw invalidInput('account', `"${account}" is not an account name`);
  return join(stateDir(env), 'locks', `write-${account}.lock`);
}

export function accountWriteLock(env: Env, account: string, options: WriteLockOptions = {}): WriteLock {
  return (fn) => withWriteLock(env, account, fn, options);
}

// Writers of this process queue here first, in order, instead of polling the directory.
const queues = new Map<string, Promise<void>>();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

function busy(account: string, path: string): MailError {
  return new MailError(
    'upstream_unavailable',
    `another mailwarden process is writing to account ${account} (lock ${path}); nothing was changed, try again. If no mailwarden process is running, the lock frees itself within ${LOCK_STALE_MS / 1000} s.`,
    { retryable: true, retryAfterSeconds: 5 },
  );
}

async function inProcessTurn(key: string, deadline: number, onTimeout: () => MailError): Promise<() => void> {
  const prev = queues.get(key);
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = prev === undefined ? mine : prev.then(() => mine);
  queues.set(key, tail);
  const leave = (): void => {
    done();
    if (queues.get(key) === tail) queues.delete(key);
  };
  // Nobody of this process ahead: the turn is this writer's now, with no timer to set.
  if (prev === undefined) return leave;
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    prev.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), deadline - Date.now()))),
  ]);
  clearTimeout(timer);
  if (!inTime) {
    leave();
    throw onTimeout();
  }
  return leave;
}

/**
 * Removes a lock nobody has refreshed for `staleMs`, under a second mkdir lock (the guard), and
 * re-checks the age inside it. proper-lockfile's own stale takeover is stat → rmdir → mkdir
 * without such a guard, so two waiters finding the same dead lock can both "win"
 * (moxystudio/node-proper-lockfile#121); here only the guard's holder removes, and it removes
 * only a lock that is still stale. True when the caller should try mkdir again at once.
 */
async function takeOverIfStale(lockDir: string, staleMs: number): Promise<boolean> {
  const age = async (p: string): Promise<number | undefined> =>
    stat(p).then(
      (s) => Date.now() - s.mtimeMs,
      () => undefined,
    );
  const seen = await age(lockDir);
  if (seen === undefined) return true; // released meanwhile
  if (seen <= staleMs) return false;
  const guard = `${lockDir}.takeover`;
  try {
    await mkdir(guard);
  } catch {
    const g = await age(guard);
    if (g !== undefined && g > GUARD_STALE_MS) await rmdir(guard).catch(() => undefined);
    return false;
  }
  try {
    const again = await age(lockDir);
    if (again !== undefined && again > staleMs) await rmdir(lockDir).catch(() => undefined);
    return true;
  } finally {
    await rmdir(guard).catch(() => undefined);
  }
}

export async function withWriteLock<T>(
  env: Env,
  account: string,
  fn: (signal: AbortSignal) => Promise<T>,
  options: WriteLockOptions = {},
): Promise<T> {
  const lockDir = writeLockPath(env, account);
  const staleMs = Math.max(options.staleMs ?? LOCK_STALE_MS, 2_000);
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS);
  const leave = await inProcessTurn(lockDir, deadline, () => busy(account, lockDir));
  try {
    const held = await acquire(account, lockDir, staleMs, deadline).catch((e: unknown) => {
      if (e instanceof MailError) throw e;
      throw new MailError(
        'internal_error',
        `cannot take the write lock ${lockDir}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    });
    try {
      return await fn(held.signal);
    } finally {
      await held.release().catch(() => undefined);
    }
  } finally {
    leave();
  }
}

/**
 * The file calls proper-lockfile makes, and only those: its synchronous API copies every property
 * of the fs object it is given on each lock, which for all of node:fs was a fifth of the memory a
 * one-thread Gmail write allocated (docs/benchmarks.md, "Gmail write path").
 */
const LOCK_FS = { mkdirSync, realpathSync, rmdirSync, statSync, utimesSync };

/** Folders this process has made (or found) for its locks; made once, not on every write. */
const madeParents = new Set<string>();
function made(dir: string): void {
  if (madeParents.has(dir)) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  madeParents.add(dir);
}

async function acquire(
  account: string,
  lockDir: string,
  staleMs: number,
  deadline: number,
): Promise<{ release: () => Promise<void>; signal: AbortSignal }> {
  const lost = new AbortController();
  let remade = false;
  for (;;) {
    try {
      // The synchronous calls: a free lock is one mkdir(2) to take and one rmdir(2) to give back,
      // each a few microseconds, where the promise API sent each through libuv's thread pool
      // (the CPU a one-thread write costs, docs/benchmarks.md "Gmail write path").
      made(dirname(lockDir));
      const releaseSync = lockfile.lockSync(lockDir.replace(/\.lock$/, ''), {
        lockfilePath: lockDir,
        fs: LOCK_FS,
        realpath: false,
        // Staleness is judged by takeOverIfStale, never by proper-lockfile (see there).
        stale: Number.MAX_SAFE_INTEGER,
        update: Math.max(1_000, Math.floor(staleMs / 4)),
        retries: 0,
        onCompromised: (e) =>
          lost.abort(
            new MailError(
              'internal_error',
              `lost the write lock ${lockDir} while writing (${e.message}); the write was stopped`,
            ),
          ),
      });
      return { release: async () => releaseSync(), signal: lost.signal };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !remade) {
        // The locks folder went away since this process made it: make it again, once.
        madeParents.delete(dirname(lockDir));
        remade = true;
        continue;
      }
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
    }
    if (await takeOverIfStale(lockDir, staleMs)) continue;
    if (Date.now() >= deadline) throw busy(account, lockDir);
    // Jittered, so waiting processes do not retry in step.
    await sleep(Math.min(50 + Math.random() * 100, deadline - Date.now()));
  }
}
