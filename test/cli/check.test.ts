import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckItem } from '../../src/cli/check.js';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { writeToken } from '../../src/store/tokens.js';
import type { Protection } from '../../src/store/tokens.js';
import { cliEnv, makeConfigDir, runCli, startSandbox } from '../store/oauth-helpers.js';

/** `mailwarden check` against the sandbox: every failure comes with its own fix and a non-zero exit. */

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const READONLY = 'https://www.googleapis.com/auth/gmail.readonly';
const DAY = 86_400_000;
const PLAIN: Protection = { kind: 'none', reason: 'test' };

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await sb.close();
});

interface Setup {
  scopes?: string[];
  ageDays?: number;
  protection?: Protection;
  revoke?: boolean;
  credentials?: unknown;
  /** The token was copied from the reference server (mailwarden import-reference). */
  imported?: boolean;
  /** The account's name (its token file). */
  account?: string;
}

async function setup(s: Setup = {}): Promise<string> {
  const dir = makeConfigDir(sb, s.credentials);
  const scopes = s.scopes ?? [MODIFY];
  const refreshToken = sb.issueRefreshToken(DEMO_ADDRESS, scopes);
  if (s.revoke === true) sb.revokeRefreshToken(refreshToken);
  const issuedAt = new Date(Date.now() - (s.ageDays ?? 0) * DAY).toISOString();
  await writeToken(
    join(dir, 'tokens', `${s.account ?? 'default'}.json`),
    {
      refreshToken,
      address: DEMO_ADDRESS,
      scopes,
      issuedAt,
      ...(s.imported ? { importedAt: issuedAt } : {}),
    },
    s.protection ?? PLAIN,
  );
  return dir;
}

async function check(dir: string, extra: Record<string, string> = {}, args: string[] = []) {
  const r = await runCli(['check', '--json', ...args], cliEnv(dir, sb, extra));
  const report = JSON.parse(r.out) as { account: string; ok: boolean; checks: CheckItem[] };
  const by = (id: CheckItem['id']): CheckItem => {
    const item = report.checks.find((c) => c.id === id);
    if (item === undefined) throw new Error(`no ${id} check in ${r.out}`);
    return item;
  };
  return { code: r.code, report, by };
}

describe('mailwarden check', () => {
  it('passes end to end with an encrypted token, in human-readable lines', async () => {
    const dir = await setup({ protection: { kind: 'passphrase', passphrase: 'pw' } });
    const r = await runCli(['check'], cliEnv(dir, sb, { MAILWARDEN_TOKEN_PASSPHRASE: 'pw' }));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok {4}credentials /m);
    expect(r.out).toMatch(/^ok {4}token .*encrypted with MAILWARDEN_TOKEN_PASSPHRASE/m);
    expect(r.out).toMatch(/^ok {4}live {8}users\.getProfile answered for you@mailwarden\.example/m);
    expect(r.out).toContain('All checks passed.');
  });

  it('no credentials: says how to create a Desktop-app client', async () => {
    const r = await check(await setup({ credentials: null }));
    expect(r.code).toBe(1);
    expect(r.by('credentials')).toMatchObject({ status: 'fail' });
    expect(r.by('credentials').fix).toContain('OAuth client ID of type "Desktop app"');
    expect(r.by('live').status).toBe('skip');
  });

  it('wrong credentials shape: web client, service account, broken JSON', async () => {
    const web = await check(await setup({ credentials: { web: { client_id: 'a', client_secret: 'b' } } }));
    expect(web.code).toBe(1);
    expect(web.by('credentials').summary).toContain('"Web application" client');
    const sa = await check(await setup({ credentials: { type: 'service_account', private_key: 'x' } }));
    expect(sa.by('credentials').summary).toContain('service-account key');
    const dir = await setup();
    writeFileSync(join(dir, 'credentials.json'), '{"installed":');
    expect((await check(dir)).by('credentials').summary).toContain('not valid JSON');
  });

  it('wrong client secret: the live call fails with a fix about the client', async () => {
    const r = await check(
      await setup({
        credentials: { installed: { client_id: sb.oauthClient.clientId, client_secret: 'nope' } },
      }),
    );
    expect(r.code).toBe(1);
    expect(r.by('live')).toMatchObject({ status: 'fail' });
    expect(r.by('live').fix).toContain('client id/secret');
  });

  it('no token: run auth', async () => {
    const dir = makeConfigDir(sb);
    const r = await check(dir, { MAILWARDEN_ACCOUNT: 'work' });
    expect(r.code).toBe(1);
    expect(r.by('token')).toMatchObject({
      status: 'fail',
      fix: 'Run `mailwarden auth --account work` to sign in.',
    });
  });

  it('undecryptable token: names MAILWARDEN_TOKEN_PASSPHRASE, missing or wrong', async () => {
    const dir = await setup({ protection: { kind: 'passphrase', passphrase: 'right' } });
    const missing = await check(dir);
    expect(missing.code).toBe(1);
    expect(missing.by('decrypt').fix).toContain('Set MAILWARDEN_TOKEN_PASSPHRASE to the passphrase used at');
    const wrong = await check(dir, { MAILWARDEN_TOKEN_PASSPHRASE: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.by('decrypt').fix).toContain('MAILWARDEN_TOKEN_PASSPHRASE is not the passphrase');
    expect(wrong.by('live').status).toBe('skip');
  });

  it('missing scope for an enabled tier', async () => {
    const r = await check(await setup({ scopes: [READONLY] }), { MAILWARDEN_TOOLS: 'read,manage' });
    expect(r.code).toBe(1);
    expect(r.by('scopes').status).toBe('fail');
    expect(r.by('scopes').summary).toContain('manage');
    expect(r.by('scopes').fix).toContain('mailwarden auth');
    expect(r.by('live').status).toBe('ok');
  });

  it("invalid_grant after 7 days: explains Google's Testing-status expiry and the fix", async () => {
    const r = await check(await setup({ ageDays: 7, revoke: true }));
    expect(r.code).toBe(1);
    expect(r.by('age').status).toBe('warn');
    const live = r.by('live');
    expect(live.status).toBe('fail');
    expect(live.summary).toContain('needs_reauth');
    expect(live.fix).toContain('issued 7 days ago');
    expect(live.fix).toContain(
      'expires refresh tokens after 7 days for OAuth apps left in "Testing" publishing status',
    );
    expect(live.fix).toContain('Publish app');
    expect(live.fix).toContain('run `mailwarden auth` again every week');
  });

  it('invalid_grant on a young token: revoked, not expired', async () => {
    const r = await check(await setup({ ageDays: 1, revoke: true }));
    expect(r.code).toBe(1);
    expect(r.by('live').fix).toContain('revoked');
    expect(r.by('live').fix).not.toContain('Testing');
  });

  it('warns from day 6 while the token still works, and warns about plaintext, without failing', async () => {
    const r = await check(await setup({ ageDays: 6 }));
    expect(r.code).toBe(0);
    expect(r.report.ok).toBe(true);
    expect(r.by('age')).toMatchObject({ status: 'warn' });
    expect(r.by('age').fix).toContain('7 days');
    expect(r.by('token')).toMatchObject({ status: 'warn' });
    expect(r.by('token').fix).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
    expect(r.by('live').status).toBe('ok');
  });

  it('an imported token: its age is not known, and the fix names the account', async () => {
    const dir = await setup({ imported: true, account: 'work', revoke: true });
    const r = await check(dir, {}, ['--account', 'work']);
    expect(r.code).toBe(1);
    const age = r.by('age');
    expect(age.status).toBe('warn');
    expect(age.summary).toContain('when Google issued it is not known');
    expect(age.summary).not.toContain('0 day');
    expect(age.fix).toContain('run `mailwarden auth --account work` now');
    expect(r.by('live').fix).toContain('`mailwarden auth --account work`');
  });
});
