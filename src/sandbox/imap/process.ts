/**
 * Keeping throwaway servers from outliving the process that started them. A test run can end in
 * three ways: normally (stop() ran), by process.exit or an uncaught error (the 'exit' hook runs),
 * or by a signal — a test runner's timeout, Ctrl-C, SIGKILL — where no JavaScript runs at all.
 * For the last case each server gets a watchdog: a shell blocked reading a pipe whose only
 * writer is this process. When this process dies, however it dies, the kernel closes the pipe;
 * the read returns and the watchdog stops the server's process group and removes its dir.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

/**
 * Whether any process of the group still runs. Zombies do not count: once the master is gone its
 * children are reparented, and a slow init may take a while to reap them.
 */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return true; // no procfs: the signal probe is all there is
  }
  return entries.some((e) => {
    try {
      // Fields after the parenthesised command: state, ppid, pgrp, …
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false;
    }
  });
}

// $1: process group, $2: dir. `read` returns at EOF, i.e. when our end of the pipe is gone.
// SIGTERM, up to 2 s of grace (zombies keep the probe true: init may be slow to reap), SIGKILL.
const WATCHDOG = [
  'read -r _',
  'kill -TERM "-$1" 2>/dev/null',
  'i=0',
  'while kill -0 "-$1" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done',
  'kill -KILL "-$1" 2>/dev/null',
  'rm -rf -- "$2"',
].join('; ');

export interface Guard {
  /** The server stopped normally: the watchdog and the exit hook stand down. */
  release(): void;
  /** Closes our end of the pipe as this process's death would, leaving the watchdog to act. */
  abandon(): void;
}

const guarded = new Map<number, { dir: string; watchdog: ChildProcess }>();
let exitHookInstalled = false;

/** Ties the process group `pgid` and `dir` to this process's lifetime. */
export function guard(pgid: number, dir: string): Guard {
  // Its own process group, so a runner that signals ours does not take the watchdog down too.
  const watchdog = spawn('sh', ['-c', WATCHDOG, 'mailwarden-watchdog', String(pgid), dir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => undefined);
  watchdog.stdin?.on('error', () => undefined);
  // Neither the watchdog nor its pipe may keep this process's event loop alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  guarded.set(pgid, { dir, watchdog });
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [group, entry] of guarded) {
        killGroup(group, 'SIGKILL');
        rmSync(entry.dir, { recursive: true, force: true });
        entry.watchdog.kill('SIGKILL');
      }
    });
  }
  return {
    release(): void {
      guarded.delete(pgid);
      // Killed, not told to act: the group id could in theory be reused after we stopped it.
      watchdog.kill('SIGKILL');
      watchdog.stdin?.destroy();
    },
    abandon(): void {
      guarded.delete(pgid);
      watchdog.stdin?.destroy();
    },
  };
}
