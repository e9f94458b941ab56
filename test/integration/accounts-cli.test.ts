import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAIN } from '../helpers/stack.js';

function run(dir: string, args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, 'accounts', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('mailwarden accounts', () => {
  it('adds signed-in accounts, lists, switches the default and removes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailwarden-accounts-cli-'));
    expect(run(dir, ['list']).out).toContain('No accounts registered');
    mkdirSync(join(dir, 'tokens'));
    for (const name of ['work', 'home'])
      writeFileSync(
        join(dir, 'tokens', `${name}.json`),
        JSON.stringify({ refresh_token: `rt-${name}`, address: `pat@${name}.example` }),
      );

    expect(run(dir, ['add', 'work', '--alias', 'w']).code).toBe(0);
    const home = run(dir, ['add', 'home', '--tiers', 'read']);
    expect(home.code).toBe(0);
    expect(home.out).toContain('home  pat@home.example  gmail  tiers read');

    const noToken = run(dir, ['add', 'spare']);
    expect(noToken.code).toBe(1);
    expect(noToken.err).toContain('mailwarden auth --account spare');

    const listed = run(dir, ['list']);
    expect(listed.out).toMatch(/^\* work {2}\(alias w\) {2}pat@work\.example {2}gmail {2}tiers read,manage/m);
    expect(listed.out).toMatch(/^ {2}home {2}pat@home\.example/m);
    const json = JSON.parse(run(dir, ['list', '--json']).out) as { accounts: Array<{ name: string }> };
    expect(json.accounts.map((a) => a.name)).toEqual(['work', 'home']);
    expect(readFileSync(join(dir, 'accounts.json'), 'utf8')).not.toContain('rt-');

    expect(run(dir, ['default', 'home']).out).toContain('Default account: home');
    expect(run(dir, ['list']).out).toMatch(/^\* home/m);

    const removed = run(dir, ['remove', 'home']);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain('Removed account "home"; token file deleted.');
    expect(removed.out).toContain('Default account is now "work".');
    expect(removed.out).toContain('not revoked at Google');
    expect(existsSync(join(dir, 'tokens', 'home.json'))).toBe(false);
    expect(run(dir, ['remove', 'home']).code).toBe(1);
    expect(run(dir, ['default']).code).toBe(2);
  });
});
