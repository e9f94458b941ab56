import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest globalSetup: after the run, names the `mailwarden-*` dirs in the temp dir that appeared
 * while it ran and are still there. It reports and does not fail: other processes on the machine
 * (a second test run, a demo) may create such dirs at the same time, and nothing here can tell
 * whose they are. Each test file removes its own (test/helpers/temp.ts).
 */
function mailwardenDirs(): Set<string> {
  try {
    return new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('mailwarden-')));
  } catch {
    return new Set();
  }
}

export default function setup(): () => void {
  const before = mailwardenDirs();
  const started = Date.now();
  return () => {
    const left = [...mailwardenDirs()].filter((n) => {
      if (before.has(n)) return false;
      try {
        return statSync(join(tmpdir(), n)).ctimeMs >= started - 1000;
      } catch {
        return false; // removed meanwhile
      }
    });
    if (left.length === 0) return;
    const byPrefix = new Map<string, number>();
    for (const n of left) {
      const prefix = n.replace(/[A-Za-z0-9]{6}$/, '');
      byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + 1);
    }
    const list = [...byPrefix].map(([p, k]) => `${p}* ×${k}`).join(', ');
    console.warn(
      `temp dirs: ${left.length} mailwarden-* dirs made during this run are still in ${tmpdir()} (${list})`,
    );
  };
}
