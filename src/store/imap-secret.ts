import { MailError } from '../mail/errors.js';
import { accountsStore, secretPath } from './accounts-store.js';
import type { AccountsStore } from './accounts-store.js';
import type { Env } from './config.js';
import { DecryptError, deriveKey, newScryptParams, seal, unseal } from './crypto.js';
import type { ScryptParams, Sealed } from './crypto.js';
import { keystoreMode, loadKey, osKeyring } from './keystore.js';
import { chooseProtection } from './tokens.js';
import type { ProtectionKind, TokenDeps } from './tokens.js';

/**
 * An IMAP account's password at rest, protected exactly like a Gmail refresh token (tokens.ts):
 * sealed with the OS-keyring key or a MAILWARDEN_TOKEN_PASSPHRASE-derived key, plaintext with a
 * loud warning when neither exists. It lives in `tokens/imap/<account>.json` (0600, directories
 * 0700): a subdirectory, because account names may contain dots and a suffix such as
 * `<name>.imap.json` could be another account's Gmail token file. Never in accounts.json. With
 * MAILWARDEN_STATE=postgres://… the same text is kept in the state database instead
 * (src/store/accounts-store.ts), where a plaintext one is refused.
 */

interface SecretFile {
  version: 1;
  kind: 'imap-password';
  account: string;
  protection: ProtectionKind;
  /** passphrase only */
  kdf?: ScryptParams;
  /** sealed (keyring, passphrase) or, for protection "none", the password itself */
  password: Sealed | string;
}

export interface StoredImapPassword {
  path: string;
  protection: ProtectionKind;
  /** Set when the password is stored unencrypted: what the CLI must print. */
  warning?: string;
}

const PASSPHRASE_VAR = 'MAILWARDEN_TOKEN_PASSPHRASE';

export function imapSecretPath(env: Env, account: string): string {
  return secretPath(env, account, 'imap-password');
}

const storeAgain = (account: string): string =>
  `store it again: mailwarden accounts add ${account} --imap … --password-stdin`;

// The account name is bound to the ciphertext, so a file copied to another name does not open.
const aadOf = (protection: ProtectionKind, account: string): string =>
  JSON.stringify(['mailwarden-imap-password/1', protection, account]);

export async function writeImapPassword(
  env: Env,
  account: string,
  password: string,
  deps: TokenDeps = {},
): Promise<StoredImapPassword> {
  const store = await accountsStore(env);
  const protection = await chooseProtection(env, deps);
  const path = store.secretWhere(account, 'imap-password');
  let file: SecretFile;
  const head = { version: 1, kind: 'imap-password', account, protection: protection.kind } as const;
  if (protection.kind === 'none') file = { ...head, password };
  else if (protection.kind === 'keyring')
    file = { ...head, password: seal(protection.key, password, aadOf('keyring', account)) };
  else {
    const kdf = newScryptParams();
    const key = await deriveKey(protection.passphrase, kdf);
    file = { ...head, kdf, password: seal(key, password, aadOf('passphrase', account)) };
  }
  await store.writeSecret(account, 'imap-password', `${JSON.stringify(file, null, 2)}\n`);
  const out: StoredImapPassword = { path, protection: protection.kind };
  if (protection.kind === 'none')
    out.warning =
      `NOT encrypted: ${protection.reason}. Anyone who can read ${path} can use the mailbox. ` +
      `Set ${PASSPHRASE_VAR} (or use a session with an OS keyring) and add the account again to encrypt it.`;
  return out;
}

async function readRaw(store: AccountsStore, account: string): Promise<Record<string, unknown> | undefined> {
  const path = store.secretWhere(account, 'imap-password');
  let text: string | undefined;
  try {
    text = await store.readSecret(account, 'imap-password');
  } catch (e) {
    if (e instanceof MailError) throw e;
    throw new MailError('not_authorized', `The IMAP password file ${path} cannot be read (${String(e)}).`);
  }
  if (text === undefined) return undefined;
  try {
    const json = JSON.parse(text) as unknown;
    if (json !== null && typeof json === 'object' && !Array.isArray(json))
      return json as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new MailError('needs_reauth', `The IMAP password file ${path} is damaged; ${storeAgain(account)}.`);
}

/** How the stored password is protected, without opening it; undefined when there is none. */
export async function imapPasswordProtection(env: Env, account: string): Promise<ProtectionKind | undefined> {
  const json = await readRaw(await accountsStore(env), account);
  if (json === undefined) return undefined;
  const p = json['protection'];
  return p === 'keyring' || p === 'passphrase' ? p : 'none';
}

async function keyFor(
  json: Record<string, unknown>,
  env: Env,
  account: string,
  deps: TokenDeps,
  path: string,
): Promise<Buffer> {
  if (json['protection'] === 'passphrase') {
    const passphrase = env[PASSPHRASE_VAR];
    if (passphrase === undefined || passphrase === '')
      throw new MailError(
        'not_authorized',
        `The IMAP password at ${path} is encrypted with a passphrase, and ${PASSPHRASE_VAR} is not set. ` +
          `Set it to the passphrase used when the account was added, or ${storeAgain(account)}.`,
      );
    try {
      return await deriveKey(passphrase, json['kdf'] as ScryptParams);
    } catch {
      throw new MailError(
        'needs_reauth',
        `The IMAP password at ${path} has unusable key parameters; ${storeAgain(account)}.`,
      );
    }
  }
  const orAgain = `or ${storeAgain(account)} (with ${PASSPHRASE_VAR} set if this machine has no keyring)`;
  if (keystoreMode(env) === 'off')
    throw new MailError(
      'not_authorized',
      `The IMAP password at ${path} is encrypted with a key kept in the OS keyring, but MAILWARDEN_KEYSTORE=off. Unset it, ${orAgain}.`,
    );
  let key: Buffer | undefined;
  try {
    key = await loadKey(deps.keyring ?? osKeyring());
  } catch (e) {
    throw new MailError(
      'not_authorized',
      `The IMAP password at ${path} is encrypted with a key kept in the OS keyring, which cannot be reached (${(e as Error).message}). Unlock the keyring, ${orAgain}.`,
    );
  }
  if (key === undefined)
    throw new MailError(
      'needs_reauth',
      `The OS keyring holds no mailwarden key for ${path} (removed?); ${storeAgain(account)}.`,
    );
  return key;
}

/** The account's IMAP password. Every failure is a MailError naming the fix; none contains the password. */
export async function readImapPassword(env: Env, account: string, deps: TokenDeps = {}): Promise<string> {
  const store = await accountsStore(env);
  const path = store.secretWhere(account, 'imap-password');
  const json = await readRaw(store, account);
  if (json === undefined)
    throw new MailError(
      'not_authorized',
      `No IMAP password for account "${account}" at ${path}; ${storeAgain(account)}.`,
    );
  const protection = json['protection'];
  const stored = json['password'];
  if (protection !== 'keyring' && protection !== 'passphrase') {
    if (typeof stored === 'string' && stored !== '') return stored;
    throw new MailError('needs_reauth', `${path} holds no password; ${storeAgain(account)}.`);
  }
  const key = await keyFor(json, env, account, deps, path);
  try {
    return unseal(key, stored as Sealed, aadOf(protection, account));
  } catch (e) {
    if (!(e instanceof DecryptError) && !(e instanceof TypeError)) throw e;
    const why =
      protection === 'passphrase'
        ? `${PASSPHRASE_VAR} is not the passphrase it was encrypted with, or the file was altered. Set the right passphrase,`
        : 'the key in the OS keyring does not open it, or the file was altered;';
    throw new MailError(
      'not_authorized',
      `The IMAP password at ${path} cannot be decrypted: ${why} or ${storeAgain(account)}.`,
    );
  }
}

/** True when there was a file to delete. */
export async function removeImapPassword(env: Env, account: string): Promise<boolean> {
  return (await accountsStore(env)).removeSecret(account, 'imap-password');
}
