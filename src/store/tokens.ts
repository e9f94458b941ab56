import { readFile } from 'node:fs/promises';
import { MailError } from '../mail/errors.js';
import { narrowTiers } from '../policy/grants.js';
import type { Tier } from '../policy/tiers.js';
import { writeFileAtomic } from './atomic.js';
import type { Env, StoredToken } from './config.js';
import { DecryptError, deriveKey, newScryptParams, seal, unseal } from './crypto.js';
import type { ScryptParams, Sealed } from './crypto.js';
import { KeystoreUnavailable, keystoreMode, loadKey, loadOrCreateKey, osKeyring } from './keystore.js';
import type { KeyringBackend } from './keystore.js';
import type { AccountsStore } from './accounts-store.js';

/**
 * The token file, `tokens/<account>.json` (0600 in a 0700 directory). Address, scopes and issue
 * time stay in clear so start-up can narrow the tool list without a key and `check` can explain
 * an expiry; the refresh token itself is sealed with AES-256-GCM, the clear fields bound to it as
 * associated data. Legacy files (`{"refresh_token": "…"}`) still load.
 */
export interface TokenFile {
  version: 1;
  address: string;
  scopes: string[];
  issuedAt: string;
  /**
   * Copied from another program's token (mailwarden import-reference) at this time: Google issued
   * the refresh token earlier, when is not known, and `issuedAt` is the import's time.
   */
  importedAt?: string;
  protection: ProtectionKind;
  /** passphrase only */
  kdf?: ScryptParams;
  /** keyring and passphrase */
  refreshToken?: Sealed;
  /** protection "none" only */
  refresh_token?: string;
}

export type ProtectionKind = 'keyring' | 'passphrase' | 'none';

export type Protection =
  | { kind: 'keyring'; key: Buffer; backend: string }
  | { kind: 'passphrase'; passphrase: string }
  | { kind: 'none'; reason: string };

export interface TokenDeps {
  /** Defaults to the real OS keyring. */
  keyring?: KeyringBackend;
}

/** What a token file says about itself without opening the secret. */
export interface TokenMeta {
  protection: ProtectionKind;
  /** A pre-encryption file: `{"refresh_token": …}` without address, scopes or issue time. */
  legacy: boolean;
  address?: string;
  scopes?: string[];
  issuedAt?: string;
  importedAt?: string;
}

const PASSPHRASE_VAR = 'MAILWARDEN_TOKEN_PASSPHRASE';
const AUTH_FIX =
  'Run `mailwarden auth` to connect the account, or use `mailwarden --demo` to try the sandbox mailbox.';

function passphraseOf(env: Env): string | undefined {
  const p = env[PASSPHRASE_VAR];
  return p === undefined || p === '' ? undefined : p;
}

/**
 * How a new token will be stored: the passphrase wins when set (the user chose it explicitly),
 * then the OS keyring unless MAILWARDEN_KEYSTORE=off, else plaintext with the reason, which
 * `auth` and `check` print.
 */
export async function chooseProtection(env: Env, deps: TokenDeps = {}): Promise<Protection> {
  const passphrase = passphraseOf(env);
  if (passphrase !== undefined) return { kind: 'passphrase', passphrase };
  if (keystoreMode(env) === 'off') {
    return { kind: 'none', reason: `MAILWARDEN_KEYSTORE=off and ${PASSPHRASE_VAR} is not set` };
  }
  const backend = deps.keyring ?? osKeyring();
  try {
    return { kind: 'keyring', key: await loadOrCreateKey(backend), backend: backend.name };
  } catch (e) {
    const why = e instanceof KeystoreUnavailable ? e.message : `the OS keyring failed (${String(e)})`;
    return { kind: 'none', reason: `${why}, and ${PASSPHRASE_VAR} is not set` };
  }
}

export function describeProtection(p: Protection): string {
  switch (p.kind) {
    case 'keyring':
      return `encrypted (AES-256-GCM) with a random key kept in the ${p.backend}`;
    case 'passphrase':
      return `encrypted (AES-256-GCM) with a key derived from ${PASSPHRASE_VAR} (scrypt)`;
    case 'none':
      return (
        `NOT encrypted: ${p.reason}. Anyone who can read the file can use the mailbox. ` +
        `Set ${PASSPHRASE_VAR} (or use a session with an OS keyring) and run \`mailwarden auth\` again to encrypt it.`
      );
  }
}

function aadOf(f: Pick<TokenFile, 'address' | 'scopes' | 'issuedAt' | 'protection'>): string {
  return JSON.stringify(['mailwarden-token/1', f.protection, f.address, f.issuedAt, f.scopes]);
}

export interface NewToken {
  refreshToken: string;
  address: string;
  scopes: string[];
  issuedAt: string;
  importedAt?: string;
}

export async function writeToken(path: string, token: NewToken, protection: Protection): Promise<void> {
  await writeFileAtomic(path, await sealToken(token, protection), { tightenDir: true });
}

/** Stores an account's token in the accounts store (the file above, or the state database). */
export async function writeAccountToken(
  store: AccountsStore,
  account: string,
  token: NewToken,
  protection: Protection,
): Promise<void> {
  await store.writeSecret(account, 'gmail-token', await sealToken(token, protection));
}

/** The token file's text: what the file holds, and what the state database holds byte for byte. */
export async function sealToken(token: NewToken, protection: Protection): Promise<string> {
  const file: TokenFile = {
    version: 1,
    address: token.address,
    scopes: token.scopes,
    issuedAt: token.issuedAt,
    ...(token.importedAt === undefined ? {} : { importedAt: token.importedAt }),
    protection: protection.kind,
  };
  if (protection.kind === 'none') file.refresh_token = token.refreshToken;
  else if (protection.kind === 'keyring')
    file.refreshToken = seal(protection.key, token.refreshToken, aadOf(file));
  else {
    file.kdf = newScryptParams();
    const key = await deriveKey(protection.passphrase, file.kdf);
    file.refreshToken = seal(key, token.refreshToken, aadOf(file));
  }
  return `${JSON.stringify(file, null, 2)}\n`;
}

const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

async function readRaw(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MailError('not_authorized', `The token file ${path} cannot be read (${String(e)}).`);
  }
  return parseRaw(text, path);
}

/** An account's stored token from the accounts store, parsed; undefined when there is none. */
async function readStoredRaw(
  store: AccountsStore,
  account: string,
): Promise<Record<string, unknown> | undefined> {
  const where = store.secretWhere(account, 'gmail-token');
  let text: string | undefined;
  try {
    text = await store.readSecret(account, 'gmail-token');
  } catch (e) {
    if (e instanceof MailError) throw e;
    throw new MailError('not_authorized', `The token file ${where} cannot be read (${String(e)}).`);
  }
  return text === undefined ? undefined : parseRaw(text, where);
}

function parseRaw(text: string, path: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MailError(
      'needs_reauth',
      `The token file ${path} is not valid JSON. Run \`mailwarden auth\` again.`,
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new MailError(
      'needs_reauth',
      `The token file ${path} is not a JSON object. Run \`mailwarden auth\` again.`,
    );
  }
  return json as Record<string, unknown>;
}

function metaOf(json: Record<string, unknown>): TokenMeta {
  const p = json['protection'];
  const protection: ProtectionKind = p === 'keyring' || p === 'passphrase' ? p : 'none';
  const meta: TokenMeta = { protection, legacy: json['version'] === undefined };
  const address = str(json['address']);
  const scopes = strings(json['scopes']);
  const issuedAt = str(json['issuedAt']);
  if (address !== undefined) meta.address = address;
  if (scopes !== undefined) meta.scopes = scopes;
  if (issuedAt !== undefined) meta.issuedAt = issuedAt;
  const importedAt = str(json['importedAt']);
  if (importedAt !== undefined) meta.importedAt = importedAt;
  return meta;
}

/** The clear part of a token file, or undefined when there is no file. Never needs a key. */
export async function readTokenMeta(path: string): Promise<TokenMeta | undefined> {
  const json = await readRaw(path);
  return json === undefined ? undefined : metaOf(json);
}

/** The clear part of an account's stored token, or undefined when there is none. Never needs a key. */
export async function readAccountTokenMeta(
  store: AccountsStore,
  account: string,
): Promise<TokenMeta | undefined> {
  const json = await readStoredRaw(store, account);
  return json === undefined ? undefined : metaOf(json);
}

async function keyFor(
  path: string,
  json: Record<string, unknown>,
  env: Env,
  deps: TokenDeps,
): Promise<Buffer> {
  if (json['protection'] === 'passphrase') {
    const passphrase = passphraseOf(env);
    if (passphrase === undefined) {
      throw new MailError(
        'not_authorized',
        `The token at ${path} is encrypted with a passphrase, and ${PASSPHRASE_VAR} is not set. ` +
          `Set it to the passphrase used at \`mailwarden auth\`, or run \`mailwarden auth\` again.`,
      );
    }
    try {
      return await deriveKey(passphrase, json['kdf'] as ScryptParams);
    } catch {
      throw new MailError(
        'needs_reauth',
        `The token at ${path} has unusable key parameters. Run \`mailwarden auth\` again.`,
      );
    }
  }
  const reauth = `run \`mailwarden auth\` again (with ${PASSPHRASE_VAR} set if this machine has no keyring)`;
  if (keystoreMode(env) === 'off') {
    throw new MailError(
      'not_authorized',
      `The token at ${path} is encrypted with a key kept in the OS keyring, but MAILWARDEN_KEYSTORE=off. Unset it, or ${reauth}.`,
    );
  }
  let key: Buffer | undefined;
  try {
    key = await loadKey(deps.keyring ?? osKeyring());
  } catch (e) {
    throw new MailError(
      'not_authorized',
      `The token at ${path} is encrypted with a key kept in the OS keyring, which cannot be reached: ${String((e as Error).message)}. ` +
        `Unlock the keyring, or ${reauth}.`,
    );
  }
  if (key === undefined) {
    throw new MailError(
      'needs_reauth',
      `The OS keyring holds no mailwarden token key for ${path} (removed?); ${reauth}.`,
    );
  }
  return key;
}

/** Loads and, when sealed, decrypts a token file. Every failure is a MailError saying what to do. */
export async function readTokenFile(path: string, env: Env, deps: TokenDeps = {}): Promise<StoredToken> {
  return openToken(await readRaw(path), path, env, deps);
}

/** An account's token from the accounts store, decrypted; failures as readTokenFile's. */
export async function readAccountToken(
  store: AccountsStore,
  account: string,
  env: Env,
  deps: TokenDeps = {},
): Promise<StoredToken> {
  return openToken(await readStoredRaw(store, account), store.secretWhere(account, 'gmail-token'), env, deps);
}

async function openToken(
  json: Record<string, unknown> | undefined,
  path: string,
  env: Env,
  deps: TokenDeps,
): Promise<StoredToken> {
  if (json === undefined) throw new MailError('not_authorized', `No token at ${path}. ${AUTH_FIX}`);
  const meta = metaOf(json);
  let refreshToken: string | undefined;
  if (meta.protection === 'none') {
    refreshToken = str(json['refresh_token'] ?? json['refreshToken']);
  } else {
    const key = await keyFor(path, json, env, deps);
    const aad = aadOf({
      protection: meta.protection,
      address: meta.address ?? '',
      issuedAt: meta.issuedAt ?? '',
      scopes: meta.scopes ?? [],
    });
    try {
      refreshToken = unseal(key, json['refreshToken'] as Sealed, aad);
    } catch (e) {
      if (!(e instanceof DecryptError) && !(e instanceof TypeError)) throw e;
      const hint =
        meta.protection === 'passphrase'
          ? `${PASSPHRASE_VAR} is not the passphrase it was encrypted with, or the file was altered. Set the right passphrase`
          : 'The key in the OS keyring does not open it, or the file was altered. Run `mailwarden auth` again';
      throw new MailError(
        'not_authorized',
        `The token at ${path} cannot be decrypted: ${hint}, or run \`mailwarden auth\` again.`,
      );
    }
  }
  if (refreshToken === undefined) {
    throw new MailError('needs_reauth', `${path} holds no refresh token. Run \`mailwarden auth\` again.`);
  }
  const out: StoredToken = { refreshToken };
  if (meta.scopes !== undefined) out.scopes = meta.scopes;
  if (meta.address !== undefined) out.address = meta.address;
  if (meta.issuedAt !== undefined) out.issuedAt = meta.issuedAt;
  return out;
}

/**
 * The enabled tiers narrowed by what the stored token records as granted; unchanged when there
 * is no token or it does not record its scopes (Google's insufficient_scope then names the gap).
 * Reads the clear part of one small file, no key: cheap enough for every server start.
 */
export async function tiersGrantedAt(
  path: string,
  tiers: ReadonlySet<Tier>,
): Promise<{ tiers: ReadonlySet<Tier>; dropped: Tier[] }> {
  const meta = await readTokenMeta(path).catch(() => undefined);
  if (meta?.scopes === undefined) return { tiers, dropped: [] };
  return narrowTiers(tiers, meta.scopes);
}

/** tiersGrantedAt for an account's token in the accounts store. */
export async function tiersGrantedFor(
  store: AccountsStore,
  account: string,
  tiers: ReadonlySet<Tier>,
): Promise<{ tiers: ReadonlySet<Tier>; dropped: Tier[] }> {
  const meta = await readAccountTokenMeta(store, account).catch(() => undefined);
  if (meta?.scopes === undefined) return { tiers, dropped: [] };
  return narrowTiers(tiers, meta.scopes);
}
