import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * `--demo` never writes to the real config dir: its action log, marks and locks live in a temp
 * dir of its own (named on stderr, removed when the process ends), so the sandbox mailbox, which
 * starts fresh every run, and the daily cap agree. The person's policy.json is still the one the
 * demo runs under.
 */

const MAIN = resolve('dist/bundle/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mailwarden-demo-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function call(tool: string, args: Record<string, unknown>) {
  const r = spawnSync(process.execPath, [MAIN, 'call', tool, JSON.stringify(args), '--demo'], {
    encoding: 'utf8',
    input: '',
    timeout: 60_000,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir, TZ: 'UTC' },
  });
  return { code: r.status, out: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr };
}

describe('--demo keeps its state apart', () => {
  it('two archive runs: the cap does not fall across runs, and the config dir holds only what the person put there', () => {
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ default: { dailyMoveCap: 7 } }));
    const found = call('search', { query: 'in:inbox', maxResults: 1 });
    const threadId = (found.out['threads'] as Array<{ threadId: string }>)[0]?.threadId;
    expect(threadId).toBeDefined();
    const first = call('archive', { threadId });
    const second = call('archive', { threadId });
    for (const r of [first, second]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.out['changed']).toHaveLength(1);
      // The person's policy.json: a cap of 7, one move used in this run only.
      expect(r.out['remainingToday']).toBe(6);
      const said = /"stateDir":"([^"]+)"/.exec(r.stderr)?.[1];
      expect(said).toBeDefined();
      expect(said?.startsWith(dir)).toBe(false);
      expect(existsSync(said as string)).toBe(false);
    }
    expect(readdirSync(dir)).toEqual(['policy.json']);
  }, 120_000);
});
