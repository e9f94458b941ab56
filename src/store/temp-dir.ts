import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temp dirs the process made for a run that throws them away (the demo's config dir, a throwaway
 * IMAP account's): removed by `remove()`, and otherwise when the process exits, including on
 * Ctrl-C or SIGTERM, which skip `finally` blocks. A `finally` alone leaves one behind every time
 * someone interrupts `mailwarden demo`.
 */
const live = new Set<string>();
let installed = false;

function removeAll(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  removeAll();
  process.removeListener('SIGINT', onSignal);
  process.removeListener('SIGTERM', onSignal);
  installed = false;
  // Nobody else handles it: let the signal do what it would have done without us.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

export interface TempDir {
  path: string;
  remove(): void;
}

export function tempDirUntilExit(prefix: string): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  live.add(path);
  if (!installed) {
    installed = true;
    process.once('exit', removeAll);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return {
    path,
    remove() {
      live.delete(path);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
