import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';

function run(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('mailwarden demo', () => {
  it('tours the real tools and reports the stale-index drop with the true counts', () => {
    const r = run(['demo']);
    expect(r.code).toBe(0);
    const stale = DEMO_FACTS.staleUnreadKeys.length;
    const truth = DEMO_FACTS.trueUnreadUpdatesKeys.length;
    expect(r.out).toContain(
      `the index returned ${stale + truth} threads over 2 page(s); ${stale} had no unread message and were dropped; ${truth} kept`,
    );
    expect(r.out).toContain('[quoted history removed]');
    expect(r.out).toMatch(/\+ [0-9a-f]{16} \[INBOX, UNREAD/);
    expect(r.out).toContain('--demo');
    // The tour's own policy.json (a temp config dir): a protected correspondent stays, the cap
    // refuses the threads beyond what is left, and a restore still works.
    expect(r.out).toContain('refused (forbidden_operation) by the rule protected-correspondent:');
    expect(r.out).toMatch(/asked to archive 5 newsletter threads with 3 left:\n {3}moved 3: /);
    expect(r.out).toMatch(/refused 2 by the rule daily-cap: /);
    expect(r.out).toContain('restored 3 of 3 with 0 moves left');
    expect(r.out).toContain('review --demo');
  });
});

describe('mailwarden call', () => {
  it('prints one tool result as JSON', () => {
    const r = run(['call', 'get_profile', '{}', '--demo']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { emailAddress: string; threadsTotal: number };
    expect(out.emailAddress).toBe(DEMO_ADDRESS);
    expect(out.threadsTotal).toBe(DEMO_FACTS.threadCount);
  });

  it('exits 1 with the error envelope on bad input', () => {
    const r = run(['call', 'search', '{"maxResults":0}', '--demo']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ error: { code: 'invalid_input', field: 'maxResults' } });
  });

  it('exits 2 when the arguments are not JSON', () => {
    expect(run(['call', 'search', '{nope', '--demo']).code).toBe(2);
  });
});

describe('mailwarden sandbox', () => {
  it('serves the Gmail simulator on loopback for other programs', async () => {
    const child = spawn(process.execPath, [MAIN, 'sandbox', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('\n')) resolve(buf.split('\n')[0] as string);
        });
        child.on('exit', () => reject(new Error('sandbox exited')));
      });
      const info = JSON.parse(line) as {
        url: string;
        clientId: string;
        clientSecret: string;
        refreshToken: string;
      };
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const token = await fetch(`${info.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: info.refreshToken,
          client_id: info.clientId,
          client_secret: info.clientSecret,
        }),
      });
      const { access_token } = (await token.json()) as { access_token: string };
      const profile = await fetch(`${info.url}/gmail/v1/users/me/profile`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(((await profile.json()) as { emailAddress: string }).emailAddress).toBe(DEMO_ADDRESS);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
