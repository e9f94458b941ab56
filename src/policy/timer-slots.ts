import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/config.js';
import type { Env } from '../store/config.js';
import { withWriteLock } from './write-lock.js';

/**
 * The server's own timers (the snooze sweep, the sender-rule sweeps) run once per account per
 * interval across every process that shares the state, not once per process: replicas behind a
 * load balancer would otherwise each sweep every account (docs/deployment.md). Before a timer
 * works an account it claims the slot: it may run when no process has run it for that account
 * within the interval, and its claim tells the others so. A process that dies mid-run leaves its
 * claim; the next run comes one interval later, which a sweep (safe to repeat) can wait for.
 */
export interface TimerSlots {
  /** True when this process may run `timer` for `account` now; the slot is then taken. */
  claim(timer: string, account: string, everyMs: number): Promise<boolean>;
}

const TIMER = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * Files: <config>/timers/<account>.json, timer name → ISO time of the last claim, read and
 * written under the account's write lock (the same lock writes take, held for a file read and
 * write only). A file that cannot be read as such a record counts as no claim and is rewritten:
 * the worst a broken file does is one extra sweep.
 */
export function fileTimerSlots(env: Env, now: () => number = Date.now): TimerSlots {
  return {
    async claim(timer, account, everyMs) {
      if (!TIMER.test(timer)) throw new Error(`timer name "${timer}" is not allowed`);
      return withWriteLock(env, account, async () => {
        const path = join(stateDir(env), 'timers', `${account}.json`);
        const book = await readBook(path);
        const t = now();
        const last = Date.parse(book[timer] ?? '');
        // A claim more than a minute in the future (a clock set back) does not block the timer.
        if (Number.isFinite(last) && last <= t + 60_000 && t - last < everyMs) return false;
        book[timer] = new Date(t).toISOString();
        await writeFileAtomic(path, `${JSON.stringify(book)}\n`);
        return true;
      });
    },
  };
}

async function readBook(path: string): Promise<Record<string, string>> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    return Object.fromEntries(
      Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch {
    return {};
  }
}
