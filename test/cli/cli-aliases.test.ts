import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { readTokenFile, writeToken } from '../../src/store/tokens.js';
import { MAIN } from '../helpers/stack.js';
import { credentialsFor, makeConfigDir, startSandbox } from '../store/oauth-helpers.js';
import { tempDir } from '../helpers/temp.js';

/* Issue 9 item 5: the CLI does what it says. Every case spawns the built bin. */

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await sb.close();
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/**
 * Async (the sandbox answering it lives in this process); sent `stop` after `killAfterMs` (SIGTERM
 * for a server that is meant to be still running then: it removes its demo state on the way out).
 */
function cli(
  args: string[],
  env: Record<string, string>,
  killAfterMs = 60_000,
  stop: NodeJS.Signals = 'SIGKILL',
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '', MAILWARDEN_KEYSTORE: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill(stop), killAfterMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

function emptyDir(): string {
  return tempDir('mailwarden-cli-');
}

const envFor = (dir: string, extra: Record<string, string> = {}): Record<string, string> => ({
  HOME: dir,
  MAILWARDEN_CONFIG_DIR: dir,
  MAILWARDEN_SANDBOX_URL: sb.url,
  ...extra,
});

async function withToken(dir: string, account: string): Promise<void> {
  await writeToken(
    join(dir, 'tokens', `${account}.json`),
    {
      refreshToken: sb.issueRefreshToken(DEMO_ADDRESS, [MODIFY]),
      address: DEMO_ADDRESS,
      scopes: [MODIFY],
      issuedAt: new Date().toISOString(),
    },
    { kind: 'none', reason: 'test' },
  );
}

describe("the reference server's spellings are aliases", () => {
  it('--sweep runs the sweep (JSON summary, exit 0), not a server', async () => {
    const r = await cli(['--sweep', '--dry-run', '--demo'], envFor(emptyDir()));
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.out) as { ok: boolean; accounts: Array<{ account: string }> };
    expect(summary.ok).toBe(true);
    expect(summary.accounts.map((a) => a.account)).toEqual(['demo']);
  });

  it('--check runs the check', async () => {
    const dir = makeConfigDir(sb);
    await withToken(dir, 'default');
    const r = await cli(['--check', '--json'], envFor(dir));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ account: 'default', ok: true });
  });

  it('--auth runs the sign-in (which needs an OAuth client first)', async () => {
    const r = await cli(['--auth', '--no-browser'], envFor(emptyDir()));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/No OAuth client credentials at .*credentials\.json/);
  });

  it('--http serves Streamable HTTP', async () => {
    const r = await cli(
      ['--http', '--demo', '--port', '0'],
      envFor(emptyDir(), { MAILWARDEN_ALLOW_NO_TOKEN: '1' }),
      8_000,
      'SIGTERM',
    );
    expect(r.err).toMatch(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
  });
});

describe('a command line it does not understand starts nothing', () => {
  it.each([
    [['--sweeep'], /Unknown option '--sweeep'; it takes --demo, --account/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['serve', '--bogus'], /serve: Unknown option '--bogus'/],
    [['sweep', 'now'], /sweep: unexpected argument "now"/],
    [['--sweep', 'auth'], /two commands/],
    [['check', '--account'], /check: Option '--account <value>' argument missing/],
    [['-x'], /Unknown option '-x'/],
  ])('%j → usage on stderr, exit 2', async (args, why) => {
    const r = await cli(args, envFor(emptyDir()), 20_000);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(why);
    expect(r.err).toContain('Usage:');
    expect(r.out).toBe('');
  });
});

describe('environment', () => {
  it('a bad MAILWARDEN_CONFIRM in --demo mode exits 1 at once instead of hanging', async () => {
    const r = await cli(['--demo'], envFor(emptyDir(), { MAILWARDEN_CONFIRM: 'maybe' }), 20_000);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/MAILWARDEN_CONFIRM: "maybe" is not one of/);
  });

  it('a bad deadline value stops the start, naming the variable', async () => {
    const r = await cli(['--demo'], envFor(emptyDir(), { MAILWARDEN_REQUEST_TIMEOUT_MS: 'soon' }), 20_000);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/MAILWARDEN_REQUEST_TIMEOUT_MS: must be a whole number of milliseconds/);
  });

  it('MAILWARDEN_DEBUG=1 prints the full error with its stack; without it, one line', async () => {
    const env = envFor(emptyDir(), { MAILWARDEN_CONFIRM: 'maybe' });
    const plain = await cli(['--demo'], env, 20_000);
    expect(plain.err).not.toMatch(/\n\s+at /);
    const debug = await cli(['--demo'], { ...env, MAILWARDEN_DEBUG: '1' }, 20_000);
    expect(debug.code).toBe(1);
    expect(debug.err).toMatch(/MailError: MAILWARDEN_CONFIRM[^\n]*\n\s+at /);
    expect(debug.err).toContain('confirmModeFromEnv');
  });

  it('MAILWARDEN_DEBUG=1 logs a failing tool call with its stack on stderr', async () => {
    const dir = emptyDir();
    const r = await cli(['call', 'get_profile', '{}'], {
      HOME: dir,
      MAILWARDEN_CONFIG_DIR: dir,
      MAILWARDEN_DEBUG: '1',
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ error: { code: 'not_authorized' } });
    expect(r.err).toMatch(/\(MAILWARDEN_DEBUG\)/);
    expect(r.err).toMatch(/MailError: No OAuth client credentials.*\\n\s+at /);
  });

  it('MAILWARDEN_DIR is the config dir when MAILWARDEN_CONFIG_DIR is unset', async () => {
    const dir = makeConfigDir(sb);
    await withToken(dir, 'default');
    const r = await cli(['check', '--json'], {
      HOME: emptyDir(),
      MAILWARDEN_DIR: dir,
      MAILWARDEN_SANDBOX_URL: sb.url,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ account: 'default', ok: true });
  });

  it('check without --account checks the registry default, not a literal "default"', async () => {
    const dir = makeConfigDir(sb);
    await withToken(dir, 'work');
    writeFileSync(
      join(dir, 'accounts.json'),
      JSON.stringify({
        accounts: [
          {
            name: 'work',
            provider: 'gmail',
            tiers: ['read', 'manage'],
            default: true,
            address: DEMO_ADDRESS,
          },
        ],
      }),
    );
    const r = await cli(['check', '--json'], envFor(dir));
    expect(JSON.parse(r.out)).toMatchObject({ account: 'work', ok: true });
    expect(r.code).toBe(0);
  });
});

describe('mailwarden import-reference', () => {
  it('copies the OAuth client and plaintext tokens (encrypted), and names the encrypted ones it cannot read', async () => {
    const home = emptyDir();
    const ref = join(home, '.mailwarden');
    mkdirSync(ref);
    const credentials = JSON.stringify(credentialsFor(sb), null, 2);
    writeFileSync(join(ref, 'credentials.json'), credentials);
    const refresh = sb.issueRefreshToken(DEMO_ADDRESS, [MODIFY]);
    writeFileSync(
      join(ref, 'token.json'),
      JSON.stringify({
        access_token: 'ya29.x',
        refresh_token: refresh,
        scope: MODIFY,
        token_type: 'Bearer',
        expiry_date: 1,
      }),
    );
    writeFileSync(join(ref, 'token.work.json'), JSON.stringify({ iv: 'aa', authTag: 'bb', data: 'cc' }));
    const ours = join(home, 'config');
    const env = {
      HOME: home,
      MAILWARDEN_CONFIG_DIR: ours,
      MAILWARDEN_SANDBOX_URL: sb.url,
      MAILWARDEN_TOKEN_PASSPHRASE: 'correct horse',
    };

    const r = await cli(['import-reference'], env);
    expect(r.code).toBe(1); // one token could not be read
    expect(r.out).toContain(
      `OAuth client: copied ${join(ref, 'credentials.json')} to ${join(ours, 'credentials.json')}`,
    );
    expect(r.out).toMatch(
      /token token\.json → account "default": imported, encrypted \(AES-256-GCM\) with a key derived from MAILWARDEN_TOKEN_PASSPHRASE/,
    );
    expect(r.out).toContain(
      'token token.work.json → account "work": cannot be read (it is encrypted). `mailwarden auth --account work` signs in again and creates it.',
    );
    expect(readFileSync(join(ours, 'credentials.json'), 'utf8')).toBe(credentials);
    const onDisk = readFileSync(join(ours, 'tokens', 'default.json'), 'utf8');
    expect(onDisk).not.toContain(refresh);
    expect(JSON.parse(onDisk)).toMatchObject({ protection: 'passphrase', scopes: [MODIFY] });
    expect((await readTokenFile(join(ours, 'tokens', 'default.json'), env)).refreshToken).toBe(refresh);

    // The imported sign-in works end to end.
    const call = await cli(['call', 'get_profile', '{}'], env);
    expect(call.code).toBe(0);
    expect(JSON.parse(call.out)).toMatchObject({ emailAddress: DEMO_ADDRESS });

    // Again: nothing is overwritten.
    const again = await cli(['import-reference', ref], env);
    expect(again.out).toContain('already holds the same client');
    expect(again.out).toContain(
      'NOT imported — this config already has a token for it (--force replaces it)',
    );
    expect(readFileSync(join(ours, 'tokens', 'default.json'), 'utf8')).toBe(onDisk);
  });

  it('a directory with nothing to import exits 1 and says so', async () => {
    const home = emptyDir();
    const r = await cli(['import-reference'], { HOME: home, MAILWARDEN_CONFIG_DIR: join(home, 'c') });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/cannot read .*\.mailwarden/);
  });
});
