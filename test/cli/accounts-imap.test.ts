import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendMessage, startDovecot } from '../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../src/sandbox/imap/index.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';
import { writeImapPassword } from '../../src/store/imap-secret.js';

/** `mailwarden accounts add --imap`, `accounts list/remove` and `check` as the built bin, against a real Dovecot. */

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot({ profile: 'bridge' });
  await appendMessage(server, 'INBOX', 'From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n');
});
afterAll(async () => {
  await server.stop();
});

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function run(dir: string, args: string[], input?: string, extra: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: dir,
      MAILWARDEN_CONFIG_DIR: dir,
      MAILWARDEN_KEYSTORE: 'off',
      ...extra,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const configDir = (): string => tempDir('mailwarden-imap-cli-');
const PASSPHRASE = { MAILWARDEN_TOKEN_PASSPHRASE: 'cli test passphrase' };

function bridgeArgs(name: string, ...more: string[]): string[] {
  const where = ['--host', server.host, '--port', String(server.plainPort), '--starttls'];
  return ['accounts', 'add', name, '--imap', ...where, '--user', server.user, '--password-stdin', ...more];
}

describe('mailwarden accounts add --imap', () => {
  it('pins from the server, proves the login, stores the password apart, and check passes', async () => {
    const dir = configDir();
    const added = await run(
      dir,
      bridgeArgs('bridge', '--pin-from-server', '--alias', 'pm'),
      `${server.password}\n`,
      PASSPHRASE,
    );
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out).toContain(`SHA-256 ${server.certSha256}`);
    expect(added.out).toContain('trust on first use');
    expect(added.out).toContain(`imap ${server.host}:${server.plainPort}`);

    const accountsText = readFileSync(join(dir, 'accounts.json'), 'utf8');
    expect(accountsText).not.toContain(server.password);
    const entry = (JSON.parse(accountsText) as { accounts: Array<Record<string, unknown>> }).accounts[0];
    expect(entry).toMatchObject({
      name: 'bridge',
      alias: 'pm',
      provider: 'imap',
      default: true,
      imap: {
        host: server.host,
        port: server.plainPort,
        security: 'starttls',
        user: server.user,
        pinSha256: server.certSha256,
      },
    });
    const secret = join(dir, 'tokens', 'imap', 'bridge.json');
    expect(statSync(secret).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tokens')).mode & 0o777).toBe(0o700);
    expect(readFileSync(secret, 'utf8')).not.toContain(server.password);

    expect((await run(dir, ['accounts', 'list'])).out).toMatch(
      new RegExp(`^\\* bridge {2}\\(alias pm\\).*imap ${server.host}:${server.plainPort}`, 'm'),
    );

    const check = await run(dir, ['check', '--account', 'bridge'], undefined, PASSPHRASE);
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/^ok {4}password {4}stored, encrypted \(passphrase\)/m);
    expect(check.out).toMatch(
      new RegExp(`^ok {4}tls .*pinned to the certificate with SHA-256 ${server.certSha256}`, 'm'),
    );
    expect(check.out).toMatch(/^ok {4}capability .*IMAP4REV1.*MOVE/m);
    expect(check.out).toMatch(/^ok {4}read {8}EXAMINE INBOX: 1 messages/m);
    expect(check.out).toMatch(/^warn {2}authserv/m);
    expect(check.out).toContain('--authserv-id ID');
    // The command it prints keeps the pin, so following it does not drop the trusted certificate.
    expect(check.out).toContain(`--pin-sha256 ${server.certSha256} --authserv-id ID`);
    expect(check.out).toContain('topmost Authentication-Results');

    // A changed certificate (Bridge reinstalled, or an impostor): check fails naming both fingerprints.
    const wrong = 'ab'.repeat(32);
    writeFileSync(join(dir, 'accounts.json'), accountsText.replace(server.certSha256, wrong));
    const json = await run(dir, ['check', '--account', 'pm', '--json'], undefined, PASSPHRASE);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as {
      ok: boolean;
      checks: Array<{ id: string; status: string; fix?: string }>;
    };
    expect(report.ok).toBe(false);
    const tls = report.checks.find((c) => c.id === 'tls');
    expect(tls?.status).toBe('fail');
    expect(tls?.fix).toContain(wrong);
    expect(tls?.fix).toContain(server.certSha256);
    expect(tls?.fix).toContain('--pin-from-server');

    // Re-adding updates the pin in place and keeps the alias.
    const again = await run(
      dir,
      bridgeArgs('bridge', '--pin-sha256', server.certSha256, '--authserv-id', 'mx.example.com'),
      server.password,
      PASSPHRASE,
    );
    expect(again.code).toBe(0);
    const updated = JSON.parse(readFileSync(join(dir, 'accounts.json'), 'utf8')) as {
      accounts: Array<{ alias?: string; imap: { pinSha256: string; authservId?: string } }>;
    };
    expect(updated.accounts).toHaveLength(1);
    expect(updated.accounts[0]).toMatchObject({
      alias: 'pm',
      imap: { pinSha256: server.certSha256, authservId: 'mx.example.com' },
    });

    const removed = await run(dir, ['accounts', 'remove', 'bridge']);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain('Removed account "bridge"; stored password deleted.');
    expect(existsSync(secret)).toBe(false);
  });

  it('re-adding keeps the stored pin, and the command check suggests after a password change works when pasted', async () => {
    const dir = configDir();
    const first = await run(
      dir,
      bridgeArgs('bridge', '--pin-from-server'),
      `${server.password}\n`,
      PASSPHRASE,
    );
    expect(first.code, first.err).toBe(0);
    const pinOf = () =>
      (
        JSON.parse(readFileSync(join(dir, 'accounts.json'), 'utf8')) as {
          accounts: Array<{ imap: { pinSha256?: string } }>;
        }
      ).accounts[0]?.imap.pinSha256;
    expect(pinOf()).toBe(server.certSha256);
    // A plain re-add (a new password, no pin flag) keeps the pin instead of falling back to CA checks.
    const plain = await run(dir, bridgeArgs('bridge'), `${server.password}\n`, PASSPHRASE);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toContain(`Keeping the certificate pinned for "bridge" (SHA-256 ${server.certSha256})`);
    expect(pinOf()).toBe(server.certSha256);
    // The password changed on the server side: what is stored no longer logs in.
    await writeImapPassword(
      { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_KEYSTORE: 'off', ...PASSPHRASE },
      'bridge',
      'an old password',
    );
    const check = await run(dir, ['check', '--account', 'bridge', '--json'], undefined, PASSPHRASE);
    expect(check.code).toBe(1);
    const fixes = (JSON.parse(check.out) as { checks: Array<{ summary: string; fix?: string }> }).checks
      .map((c) => `${c.summary}\n${c.fix ?? ''}`)
      .join('\n');
    const suggested = /mailwarden (accounts add [^\n]*--password-stdin)/.exec(fixes)?.[1];
    expect(suggested, fixes).toBeDefined();
    // Pasted into a shell: sh splits it, the new password goes to stdin.
    const pasted = spawnSync('sh', ['-c', `"$0" "$1" ${suggested ?? ''}`, process.execPath, MAIN], {
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: dir,
        MAILWARDEN_CONFIG_DIR: dir,
        MAILWARDEN_KEYSTORE: 'off',
        ...PASSPHRASE,
      },
      input: `${server.password}\n`,
      encoding: 'utf8',
    });
    expect(pasted.status, pasted.stderr).toBe(0);
    expect(pinOf()).toBe(server.certSha256);
    const again = await run(dir, ['check', '--account', 'bridge'], undefined, PASSPHRASE);
    expect(again.out).toMatch(/^ok {4}read/m);
  }, 120_000);

  it('without a passphrase or keyring: stored in plaintext with a loud warning', async () => {
    const dir = configDir();
    const added = await run(dir, bridgeArgs('plain', '--pin-from-server'), server.password);
    expect(added.code).toBe(0);
    expect(added.err).toContain('WARNING: the IMAP password is NOT encrypted');
    const check = await run(dir, ['check', '--account', 'plain']);
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/^warn {2}password {4}stored in PLAINTEXT/m);
  });

  it('plain IMAP to loopback works when asked for explicitly', async () => {
    const dir = configDir();
    const args = [
      'accounts',
      'add',
      'local',
      '--imap',
      '--host',
      '127.0.0.1',
      '--port',
      String(server.plainPort),
    ];
    const added = await run(
      dir,
      [...args, '--insecure-loopback', '--user', server.user, '--password-stdin'],
      server.password,
      PASSPHRASE,
    );
    expect(added.code).toBe(0);
    const check = await run(dir, ['check', '--account', 'local'], undefined, PASSPHRASE);
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/^ok {4}tls {9}plain IMAP to 127\.0\.0\.1 \(loopback only, no TLS\)/m);
    // The Bridge imitation advertises Bridge's short capability list.
    expect(check.out).toMatch(/not offered: .*THREAD=REFERENCES/);
  });
  // Last: Dovecot slows logins from an address after a failed one (auth_penalty).
  it('refuses before saving anything: wrong password, wrong pin, plain IMAP off loopback, no terminal', async () => {
    const dir = configDir();
    const badPassword = await run(dir, bridgeArgs('x', '--pin-from-server'), 'not-the-password');
    expect(badPassword.code).toBe(1);
    expect(badPassword.err).toContain('needs_reauth');
    expect(badPassword.err + badPassword.out).not.toContain('not-the-password');

    const badPin = await run(dir, bridgeArgs('x', '--pin-sha256', 'cd'.repeat(32)), server.password);
    expect(badPin.code).toBe(1);
    expect(badPin.err).toContain(
      `presents a certificate with SHA-256 ${server.certSha256}, not ${'cd'.repeat(32)}`,
    );

    const notLoopback = await run(
      dir,
      [
        'accounts',
        'add',
        'x',
        '--imap',
        '--host',
        '192.0.2.7',
        '--insecure-loopback',
        '--user',
        'u',
        '--password-stdin',
      ],
      'pw',
    );
    expect(notLoopback.code).toBe(1);
    expect(notLoopback.err).toContain('--insecure-loopback: 192.0.2.7 is not a loopback address');
    expect(notLoopback.err).toContain('in clear');

    const noTty = await run(dir, ['accounts', 'add', 'x', '--imap', '--host', server.host, '--user', 'u']);
    expect(noTty.code).toBe(1);
    expect(noTty.err).toContain('stdin is not a terminal');

    const untrusted = await run(
      dir,
      [
        'accounts',
        'add',
        'x',
        '--imap',
        '--host',
        server.host,
        '--port',
        String(server.tlsPort),
        '--user',
        server.user,
        '--password-stdin',
      ],
      server.password,
    );
    expect(untrusted.code).toBe(1);
    expect(untrusted.err).toContain('is not trusted');

    expect(existsSync(join(dir, 'accounts.json'))).toBe(false);
    expect(existsSync(join(dir, 'tokens', 'imap', 'x.json'))).toBe(false);
  });
});
