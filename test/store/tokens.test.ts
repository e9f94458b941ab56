import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMailError } from '../../src/mail/errors.js';
import { readToken, tokenPath } from '../../src/store/config.js';
import { KeystoreUnavailable, MemoryKeyring, loadOrCreateKey, osKeyring } from '../../src/store/keystore.js';
import type { KeyringBackend } from '../../src/store/keystore.js';
import { chooseProtection, describeProtection, readTokenMeta, writeToken } from '../../src/store/tokens.js';
import type { NewToken } from '../../src/store/tokens.js';
import { skipBecause } from '../helpers/skip.js';
import { tempDir } from '../helpers/temp.js';

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const token: NewToken = {
  refreshToken: '1//secret-refresh-token',
  address: 'you@example.com',
  scopes: [MODIFY],
  issuedAt: '2026-11-30T10:00:00.000Z',
};

function configDir(): string {
  return tempDir('mailwarden-tokens-');
}

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isMailError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a MailError');
}

/**
 * Probes the real OS keyring under a test-only name; true when it cannot be used here. A read
 * alone proves nothing: without a platform store reads answer null and only writes fail.
 */
async function realKeyringUnavailable(): Promise<boolean> {
  try {
    await loadOrCreateKey(osKeyring(), 'mailwarden-test', 'probe');
    return false;
  } catch (e) {
    if (e instanceof KeystoreUnavailable) return true;
    throw e;
  }
}

describe('passphrase protection', () => {
  it('seals the refresh token with a scrypt key and opens it with the same passphrase', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOKEN_PASSPHRASE: 'correct horse' };
    const protection = await chooseProtection(env, { keyring: new MemoryKeyring() });
    expect(protection.kind).toBe('passphrase');
    await writeToken(tokenPath(env, 'default'), token, protection);
    const text = readFileSync(tokenPath(env, 'default'), 'utf8');
    expect(text).not.toContain(token.refreshToken);
    const file = JSON.parse(text) as Record<string, unknown>;
    expect(file).toMatchObject({
      version: 1,
      protection: 'passphrase',
      address: token.address,
      scopes: [MODIFY],
    });
    expect(file['kdf']).toMatchObject({ name: 'scrypt', N: 32768, r: 8, p: 1 });
    expect(await readToken(env, 'default')).toEqual(token);
  });

  it('uses a fresh salt and nonce for every write', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOKEN_PASSPHRASE: 'pw' };
    const path = tokenPath(env, 'default');
    await writeToken(path, token, { kind: 'passphrase', passphrase: 'pw' });
    const first = JSON.parse(readFileSync(path, 'utf8')) as {
      kdf: { salt: string };
      refreshToken: { iv: string };
    };
    await writeToken(path, token, { kind: 'passphrase', passphrase: 'pw' });
    const second = JSON.parse(readFileSync(path, 'utf8')) as typeof first;
    expect(second.kdf.salt).not.toBe(first.kdf.salt);
    expect(second.refreshToken.iv).not.toBe(first.refreshToken.iv);
  });

  it('a wrong passphrase is a clear not_authorized error naming MAILWARDEN_TOKEN_PASSPHRASE', async () => {
    const dir = configDir();
    const path = tokenPath({ MAILWARDEN_CONFIG_DIR: dir }, 'default');
    await writeToken(path, token, { kind: 'passphrase', passphrase: 'right' });
    const wrong = await failure(
      readToken({ MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOKEN_PASSPHRASE: 'wrong' }, 'default'),
    );
    expect(wrong.code).toBe('not_authorized');
    expect(wrong.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE is not the passphrase');
    const missing = await failure(readToken({ MAILWARDEN_CONFIG_DIR: dir }, 'default'));
    expect(missing.code).toBe('not_authorized');
    expect(missing.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE is not set');
  });

  it('binds the clear metadata: an edited scope list makes the token fail to open', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOKEN_PASSPHRASE: 'pw' };
    const path = tokenPath(env, 'default');
    await writeToken(path, token, { kind: 'passphrase', passphrase: 'pw' });
    const file = JSON.parse(readFileSync(path, 'utf8')) as { scopes: string[] };
    file.scopes.push('https://mail.google.com/');
    writeFileSync(path, JSON.stringify(file));
    expect((await failure(readToken(env, 'default'))).message).toContain('cannot be decrypted');
  });

  it('the passphrase wins over a working keyring', async () => {
    const keyring = new MemoryKeyring();
    const p = await chooseProtection({ MAILWARDEN_TOKEN_PASSPHRASE: 'pw' }, { keyring });
    expect(p.kind).toBe('passphrase');
    expect(keyring.entries.size).toBe(0);
  });
});

describe('keyring protection (injected in-memory backend)', () => {
  it('creates one random 32-byte key, reuses it, and opens the token with it', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    const keyring = new MemoryKeyring();
    const protection = await chooseProtection(env, { keyring });
    expect(protection.kind).toBe('keyring');
    expect(keyring.entries.size).toBe(1);
    const stored = [...keyring.entries.values()][0] as string;
    expect(Buffer.from(stored, 'base64')).toHaveLength(32);
    expect((await chooseProtection(env, { keyring })).kind).toBe('keyring');
    expect([...keyring.entries.values()]).toEqual([stored]);
    await writeToken(tokenPath(env, 'default'), token, protection);
    expect(readFileSync(tokenPath(env, 'default'), 'utf8')).not.toContain(token.refreshToken);
    expect(await readToken(env, 'default', { keyring })).toEqual(token);
    expect((await readTokenMeta(tokenPath(env, 'default')))?.protection).toBe('keyring');
  });

  it('a keyring that lost the key, or is switched off, gives an error with the fix', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    const keyring = new MemoryKeyring();
    await writeToken(tokenPath(env, 'default'), token, await chooseProtection(env, { keyring }));
    const off = await failure(readToken({ ...env, MAILWARDEN_KEYSTORE: 'off' }, 'default', { keyring }));
    expect(off.message).toContain('MAILWARDEN_KEYSTORE=off');
    const lost = await failure(readToken(env, 'default', { keyring: new MemoryKeyring() }));
    expect(lost.code).toBe('needs_reauth');
    expect(lost.message).toContain('mailwarden auth');
  });

  it('MAILWARDEN_KEYSTORE=off never touches the keyring', async () => {
    let touched = false;
    const spy: KeyringBackend = {
      name: 'spy',
      get: () => ((touched = true), Promise.resolve(null)),
      set: () => ((touched = true), Promise.resolve()),
    };
    const p = await chooseProtection({ MAILWARDEN_KEYSTORE: 'off' }, { keyring: spy });
    expect(p.kind).toBe('none');
    expect(touched).toBe(false);
    expect(describeProtection(p)).toContain('NOT encrypted');
  });

  it('a backend that accepts the key but cannot return it falls back with the reason', async () => {
    const forgetful: KeyringBackend = {
      name: 'forgetful',
      get: () => Promise.resolve(null),
      set: () => Promise.resolve(),
    };
    const p = await chooseProtection({}, { keyring: forgetful });
    expect(p).toMatchObject({ kind: 'none' });
    expect(describeProtection(p)).toContain('did not return it');
  });
});

describe('the real @napi-rs/keyring backend', () => {
  it('without a platform store, falls back to plaintext (or the passphrase) with a clear message', async (ctx) => {
    if (!(await realKeyringUnavailable()))
      skipBecause(ctx, 'this machine has an OS keyring, so the no-keyring fallback cannot be seen');
    const p = await chooseProtection({});
    expect(p.kind).toBe('none');
    const text = describeProtection(p);
    // The platform's own words ride along: "Couldn't access platform storage" or the D-Bus error.
    expect(text).toMatch(/the OS keyring is not available \(.+\)/);
    expect(text).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
    expect((await chooseProtection({ MAILWARDEN_TOKEN_PASSPHRASE: 'pw' })).kind).toBe('passphrase');
  });

  it('reading a keyring-sealed token where the keyring cannot be reached is not_authorized, not a crash', async (ctx) => {
    if (!(await realKeyringUnavailable()))
      skipBecause(ctx, 'this machine has an OS keyring, so the no-keyring fallback cannot be seen');
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    const keyring = new MemoryKeyring();
    await writeToken(tokenPath(env, 'default'), token, await chooseProtection(env, { keyring }));
    // Depending on what earlier writes left behind, the platform answers "no entry" or refuses
    // access; either way the error names the way out.
    const e = await failure(readToken(env, 'default'));
    expect(['not_authorized', 'needs_reauth']).toContain(e.code);
    expect(e.message).toContain('OS keyring');
    expect(e.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
  });
});

describe('files', () => {
  it('are written 0600 in a 0700 directory, atomically (no temp file left behind)', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    const path = tokenPath(env, 'work');
    await writeToken(path, token, { kind: 'none', reason: 'test' });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tokens')).mode & 0o777).toBe(0o700);
    await writeToken(path, { ...token, address: 'second@example.com' }, { kind: 'none', reason: 'test' });
    expect(readdirSync(join(dir, 'tokens'))).toEqual(['work.json']);
    expect((await readToken(env, 'work')).address).toBe('second@example.com');
  });

  it('plaintext files and legacy {"refresh_token"} files keep working', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    await writeToken(tokenPath(env, 'plain'), token, { kind: 'none', reason: 'test' });
    expect(await readToken(env, 'plain')).toEqual(token);
    writeFileSync(tokenPath(env, 'legacy'), JSON.stringify({ refresh_token: 'legacy-token' }));
    expect(await readToken(env, 'legacy')).toEqual({ refreshToken: 'legacy-token' });
    expect(await readTokenMeta(tokenPath(env, 'legacy'))).toEqual({ protection: 'none', legacy: true });
  });

  it('a missing or broken file is an error that says to run auth', async () => {
    const dir = configDir();
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    expect(await failure(readToken(env, 'nobody'))).toMatchObject({ code: 'not_authorized' });
    expect((await failure(readToken(env, 'nobody'))).message).toContain('mailwarden auth');
    mkdirSync(join(dir, 'tokens'));
    writeFileSync(tokenPath(env, 'broken'), '{not json');
    expect((await failure(readToken(env, 'broken'))).code).toBe('needs_reauth');
  });
});
