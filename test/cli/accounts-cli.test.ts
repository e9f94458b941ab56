import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

const exec = promisify(execFile);
let sandboxUrl = '';

/** Async, because the sandbox answering the revoke runs in this process. */
async function run(dir: string, args: string[]) {
  try {
    const r = await exec(process.execPath, [MAIN, 'accounts', ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: dir,
        MAILWARDEN_CONFIG_DIR: dir,
        MAILWARDEN_SANDBOX_URL: sandboxUrl,
      },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? -1, out: x.stdout ?? '', err: x.stderr ?? '' };
  }
}

describe('mailwarden accounts', () => {
  it('adds signed-in accounts, lists, switches the default and removes (revoking at Google)', async () => {
    const sandbox = await Sandbox.start({ users: [demoCorpus()] });
    sandboxUrl = sandbox.url;
    const homeToken = sandbox.issueRefreshToken(DEMO_ADDRESS, ['gmail.readonly']);
    const dir = tempDir('mailwarden-accounts-cli-');
    expect((await run(dir, ['list'])).out).toContain('No accounts registered');
    mkdirSync(join(dir, 'tokens'));
    for (const name of ['work', 'home'])
      writeFileSync(
        join(dir, 'tokens', `${name}.json`),
        JSON.stringify({
          refresh_token: name === 'home' ? homeToken : `rt-${name}`,
          address: `pat@${name}.example`,
        }),
      );

    expect((await run(dir, ['add', 'work', '--alias', 'w'])).code).toBe(0);
    const home = await run(dir, ['add', 'home', '--tiers', 'read']);
    expect(home.code).toBe(0);
    expect(home.out).toContain('home  pat@home.example  gmail  tiers read');

    const noToken = await run(dir, ['add', 'spare']);
    expect(noToken.code).toBe(1);
    expect(noToken.err).toContain('mailwarden auth --account spare');

    const listed = await run(dir, ['list']);
    expect(listed.out).toMatch(/^\* work {2}\(alias w\) {2}pat@work\.example {2}gmail {2}tiers read,manage/m);
    expect(listed.out).toMatch(/^ {2}home {2}pat@home\.example/m);
    const json = JSON.parse((await run(dir, ['list', '--json'])).out) as {
      accounts: Array<{ name: string }>;
    };
    expect(json.accounts.map((a) => a.name)).toEqual(['work', 'home']);
    expect(readFileSync(join(dir, 'accounts.json'), 'utf8')).not.toContain('rt-');

    expect((await run(dir, ['default', 'home'])).out).toContain('Default account: home');
    expect((await run(dir, ['list'])).out).toMatch(/^\* home/m);

    const removed = await run(dir, ['remove', 'home']);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain('Removed account "home"; token file deleted.');
    expect(removed.out).toContain('Default account is now "work".');
    expect(removed.out).toContain('The grant was revoked at Google.');
    // The sandbox no longer honours the removed account's refresh token.
    const refresh = await fetch(`${sandbox.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: homeToken,
        client_id: sandbox.oauthClient.clientId,
        client_secret: sandbox.oauthClient.clientSecret,
      }),
    });
    expect(refresh.status).toBe(400);
    expect(existsSync(join(dir, 'tokens', 'home.json'))).toBe(false);
    expect((await run(dir, ['remove', 'home'])).code).toBe(1);
    expect((await run(dir, ['default'])).code).toBe(2);
    await sandbox.close();
  });
});
