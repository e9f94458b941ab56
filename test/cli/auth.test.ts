import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { KeystoreUnavailable, loadOrCreateKey, osKeyring } from '../../src/store/keystore.js';
import { writeToken } from '../../src/store/tokens.js';
import type { ConsentChoice } from '../store/oauth-helpers.js';
import {
  OTHER_ADDRESS,
  cliEnv,
  consentWithFetch,
  makeConfigDir,
  runCli,
  startCli,
  startSandbox,
} from '../store/oauth-helpers.js';
import { skipBecause } from '../helpers/skip.js';

/** `mailwarden auth` as a child process; the consent page is walked with fetch (the browser test uses Chromium). */

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const SETTINGS = 'https://www.googleapis.com/auth/gmail.settings.basic';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await sb.close();
});

async function auth(env: Record<string, string>, choice: ConsentChoice, args: string[] = []) {
  const run = startCli(['auth', '--no-browser', ...args], env);
  const page = await consentWithFetch(await run.url, choice);
  return { page, ...(await run.done) };
}

const tokenFile = (dir: string, account = 'default'): string => join(dir, 'tokens', `${account}.json`);
const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

describe('mailwarden auth', () => {
  it('stores an encrypted token with scopes, address and issue time, which the server then uses', async () => {
    const dir = makeConfigDir(sb);
    const env = cliEnv(dir, sb, { MAILWARDEN_TOKEN_PASSPHRASE: 'hunter2 hunter2' });
    const before = Date.now();
    const r = await auth(env, { decision: 'approve' });
    expect(r.code).toBe(0);
    expect(r.page.text).toContain(`Signed in as ${DEMO_ADDRESS}`);
    expect(r.out).toContain('encrypted (AES-256-GCM) with a key derived from MAILWARDEN_TOKEN_PASSPHRASE');
    const file = readJson(tokenFile(dir));
    expect(file).toMatchObject({
      version: 1,
      address: DEMO_ADDRESS,
      scopes: [MODIFY],
      protection: 'passphrase',
    });
    expect(Date.parse(String(file['issuedAt']))).toBeGreaterThanOrEqual(before - 1000);
    expect(file['refresh_token']).toBeUndefined();
    expect(statSync(tokenFile(dir)).mode & 0o777).toBe(0o600);

    const call = await runCli(['call', 'get_profile', '{}'], env);
    expect(call.code).toBe(0);
    expect((JSON.parse(call.out) as { emailAddress: string }).emailAddress).toBe(DEMO_ADDRESS);
  });

  it('asks for the scopes of the enabled tiers, and says which tiers an unticked scope switched off', async () => {
    const dir = makeConfigDir(sb);
    const env = cliEnv(dir, sb, {
      MAILWARDEN_TOOLS: 'read,manage,filters',
      MAILWARDEN_TOKEN_PASSPHRASE: 'pw',
    });
    const run = startCli(['auth', '--no-browser'], env);
    const url = new URL(await run.url);
    expect(url.searchParams.get('scope')).toBe(`${MODIFY} ${SETTINGS}`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    await consentWithFetch(url.href, { decision: 'approve', scopes: [MODIFY] });
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.out).toContain('the filters tier(s) need');
    expect(readJson(tokenFile(dir))['scopes']).toEqual([MODIFY]);
  });

  it('without a passphrase or keyring, stores plaintext and says so', async () => {
    const dir = makeConfigDir(sb);
    const r = await auth(cliEnv(dir, sb), { decision: 'approve' });
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'NOT encrypted: MAILWARDEN_KEYSTORE=off and MAILWARDEN_TOKEN_PASSPHRASE is not set',
    );
    expect(readJson(tokenFile(dir))).toMatchObject({ protection: 'none', address: DEMO_ADDRESS });
  });

  it('tries the real OS keyring, and where there is none falls back with the reason', async (ctx) => {
    const unavailable = await loadOrCreateKey(osKeyring(), 'mailwarden-test', 'probe').then(
      () => false,
      (e: unknown) => e instanceof KeystoreUnavailable,
    );
    if (!unavailable)
      skipBecause(ctx, 'this machine has an OS keyring, so the no-keyring fallback cannot be seen');
    const dir = makeConfigDir(sb);
    const r = await auth(cliEnv(dir, sb, { MAILWARDEN_KEYSTORE: 'auto' }), { decision: 'approve' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('NOT encrypted: the OS keyring is not available (');
    expect(r.out).toContain('Set MAILWARDEN_TOKEN_PASSPHRASE');
    expect(readJson(tokenFile(dir))['protection']).toBe('none');
  });

  it('keeps a plaintext token working and encrypts it only at the next auth, saying so', async () => {
    const dir = makeConfigDir(sb);
    const env = cliEnv(dir, sb, { MAILWARDEN_TOKEN_PASSPHRASE: 'pw' });
    const legacy = JSON.stringify({ refresh_token: sb.refreshTokenFor(DEMO_ADDRESS) });
    writeFileSync(tokenFile(dir), legacy, { mode: 0o600 });
    expect((await runCli(['call', 'get_profile', '{}'], env)).code).toBe(0);
    const checked = await runCli(['check'], env);
    expect(checked.out).toContain('stored in PLAINTEXT');
    expect(readFileSync(tokenFile(dir), 'utf8')).toBe(legacy);

    const r = await auth(env, { decision: 'approve' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('The previous plaintext token was replaced by an encrypted one.');
    expect(readJson(tokenFile(dir))['protection']).toBe('passphrase');
  });

  it("refuses to overwrite another mailbox's token without --force", async () => {
    const dir = makeConfigDir(sb);
    const env = cliEnv(dir, sb);
    await writeToken(
      tokenFile(dir),
      {
        refreshToken: 'other-token',
        address: OTHER_ADDRESS,
        scopes: [MODIFY],
        issuedAt: new Date().toISOString(),
      },
      { kind: 'none', reason: 'test' },
    );
    const before = readFileSync(tokenFile(dir), 'utf8');
    const refused = await auth(env, { decision: 'approve', account: DEMO_ADDRESS });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `holds the token for ${OTHER_ADDRESS}, but this sign-in is for ${DEMO_ADDRESS}`,
    );
    expect(refused.err).toContain('--force');
    expect(refused.page.text).toContain('Sign-in failed');
    expect(readFileSync(tokenFile(dir), 'utf8')).toBe(before);

    const forced = await auth(env, { decision: 'approve', account: DEMO_ADDRESS }, ['--force']);
    expect(forced.code).toBe(0);
    expect(readJson(tokenFile(dir))['address']).toBe(DEMO_ADDRESS);
  });

  it('a second account gets its own file', async () => {
    const dir = makeConfigDir(sb);
    const r = await auth(cliEnv(dir, sb), { decision: 'approve', account: OTHER_ADDRESS }, [
      '--account',
      'Side',
    ]);
    expect(r.code).toBe(0);
    expect(readJson(tokenFile(dir, 'side'))['address']).toBe(OTHER_ADDRESS);
    expect(existsSync(tokenFile(dir))).toBe(false);
  });

  it('without credentials it says where to put them', async () => {
    const dir = makeConfigDir(sb, null);
    const r = await runCli(['auth', '--no-browser'], cliEnv(dir, sb));
    expect(r.code).toBe(1);
    expect(r.err).toContain('Desktop-app OAuth client');
    expect(r.out).not.toContain('http');
  });
});
