import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMailError } from '../../src/mail/errors.js';
import {
  imapPasswordProtection,
  imapSecretPath,
  readImapPassword,
  removeImapPassword,
  writeImapPassword,
} from '../../src/store/imap-secret.js';
import { MemoryKeyring } from '../../src/store/keystore.js';
import type { KeyringBackend } from '../../src/store/keystore.js';
import { tempDir } from '../helpers/temp.js';

const PASSWORD = 'bridge-pw-Zq8#x';

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-imap-secret-'), ...extra };
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

/** A keyring that is there but cannot store anything: a headless Linux session. */
const unavailable: KeyringBackend = {
  name: 'broken keyring',
  get: () => Promise.reject(new Error('no D-Bus session')),
  set: () => Promise.reject(new Error('no D-Bus session')),
};

describe('the IMAP password at rest', () => {
  it('passphrase: sealed, 0600 in 0700 directories, opened with the same passphrase only', async () => {
    const e = env({ MAILWARDEN_TOKEN_PASSPHRASE: 'correct horse' });
    const stored = await writeImapPassword(e, 'bridge', PASSWORD, { keyring: new MemoryKeyring() });
    expect(stored).toEqual({ path: imapSecretPath(e, 'bridge'), protection: 'passphrase' });
    const text = readFileSync(stored.path, 'utf8');
    expect(text).not.toContain(PASSWORD);
    expect(JSON.parse(text)).toMatchObject({
      kind: 'imap-password',
      protection: 'passphrase',
      kdf: { N: 32768 },
    });
    expect(statSync(stored.path).mode & 0o777).toBe(0o600);
    const dir = e['MAILWARDEN_CONFIG_DIR'] as string;
    expect(statSync(join(dir, 'tokens')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'tokens', 'imap')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, 'tokens', 'imap'))).toEqual(['bridge.json']);
    expect(await readImapPassword(e, 'bridge')).toBe(PASSWORD);
    expect(await imapPasswordProtection(e, 'bridge')).toBe('passphrase');

    const wrong = await failure(readImapPassword({ ...e, MAILWARDEN_TOKEN_PASSPHRASE: 'wrong' }, 'bridge'));
    expect(wrong.code).toBe('not_authorized');
    expect(wrong.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE is not the passphrase');
    expect(wrong.message).toContain('mailwarden accounts add bridge --imap');
    const unset = await failure(readImapPassword({ MAILWARDEN_CONFIG_DIR: dir }, 'bridge'));
    expect(unset.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE is not set');
    expect(unset.message).not.toContain(PASSWORD);
  });

  it('keyring: sealed with the keyring key; a lost key or MAILWARDEN_KEYSTORE=off names the fix', async () => {
    const e = env();
    const keyring = new MemoryKeyring();
    const stored = await writeImapPassword(e, 'fastmail', PASSWORD, { keyring });
    expect(stored.protection).toBe('keyring');
    expect(stored.warning).toBeUndefined();
    expect(readFileSync(stored.path, 'utf8')).not.toContain(PASSWORD);
    expect(await readImapPassword(e, 'fastmail', { keyring })).toBe(PASSWORD);
    const lost = await failure(readImapPassword(e, 'fastmail', { keyring: new MemoryKeyring() }));
    expect(lost.code).toBe('needs_reauth');
    expect(lost.message).toContain('mailwarden accounts add fastmail --imap');
    const off = await failure(
      readImapPassword({ ...e, MAILWARDEN_KEYSTORE: 'off' }, 'fastmail', { keyring }),
    );
    expect(off.message).toContain('MAILWARDEN_KEYSTORE=off');
  });

  it('keyring unavailable and no passphrase: plaintext, with the warning the CLI prints', async () => {
    const e = env();
    const stored = await writeImapPassword(e, 'home', PASSWORD, { keyring: unavailable });
    expect(stored.protection).toBe('none');
    expect(stored.warning).toContain('NOT encrypted');
    expect(stored.warning).toContain('no D-Bus session');
    expect(stored.warning).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
    expect(statSync(stored.path).mode & 0o777).toBe(0o600);
    expect(await readImapPassword(e, 'home', { keyring: unavailable })).toBe(PASSWORD);
    expect(await imapPasswordProtection(e, 'home')).toBe('none');
  });

  it('a file copied to another account name does not open (the name is bound to the ciphertext)', async () => {
    const e = env({ MAILWARDEN_TOKEN_PASSPHRASE: 'pw' });
    const stored = await writeImapPassword(e, 'one', PASSWORD);
    writeFileSync(imapSecretPath(e, 'two'), readFileSync(stored.path));
    expect((await failure(readImapPassword(e, 'two'))).message).toContain('cannot be decrypted');
  });

  it('missing, damaged and removed files', async () => {
    const e = env();
    const missing = await failure(readImapPassword(e, 'nobody'));
    expect(missing.code).toBe('not_authorized');
    expect(missing.message).toContain('mailwarden accounts add nobody --imap');
    expect(await imapPasswordProtection(e, 'nobody')).toBeUndefined();
    await writeImapPassword(e, 'x', PASSWORD, { keyring: unavailable });
    writeFileSync(imapSecretPath(e, 'x'), '{oops');
    expect((await failure(readImapPassword(e, 'x'))).code).toBe('needs_reauth');
    expect(await removeImapPassword(e, 'x')).toBe(true);
    expect(await removeImapPassword(e, 'x')).toBe(false);
  });
});
