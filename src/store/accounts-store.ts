import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { findAccount, readAccountsFile, writeAccounts } from './accounts.js';
import type { AccountEntry } from './accounts.js';
import { configDir } from './config.js';
import type { Env } from './config.js';
import { writeFileAtomic } from './atomic.js';
import { stateSetting } from './state.js';

/**
 * Where the accounts registry and its secrets live, behind one interface with two backends:
 * files under the config dir (the default: accounts.json, tokens/<name>.json,
 * tokens/imap/<name>.json, exactly as before), or the PostgreSQL state database
 * (MAILWARDEN_STATE=postgres://…, src/store/pg/accounts-store.ts). A secret is the whole text of
 * its file, the encrypted envelope (ciphertext, iv, tag, kdf parameters): the store moves it as it
 * is and never sees the key or the plaintext (tokens.ts and imap-secret.ts seal and open it).
 */

/** A Gmail account's refresh token (tokens.ts), an IMAP account's password (imap-secret.ts). */
export type SecretKind = 'gmail-token' | 'imap-password';

export const SECRET_KINDS: readonly SecretKind[] = ['gmail-token', 'imap-password'];

/** What a registry change writes (`list`, whole; absent: nothing) and answers (`result`). */
export interface RegistryChange<T> {
  list?: readonly AccountEntry[];
  result: T;
}

export interface AccountsStore {
  readonly kind: 'files' | 'postgres';
  /** False where a plaintext secret (protection "none") must never be written: the database. */
  readonly plaintextSecrets: boolean;
  /** The registered accounts in their order, exactly one default when there are any. */
  list(): Promise<AccountEntry[]>;
  /** An account by name, alias or address (case-insensitive). */
  find(ref: string): Promise<AccountEntry | undefined>;
  /**
   * One read-modify-write of the registry: `change` gets the current list and says what to save.
   * The database runs it in one transaction holding the registry's lock, so two writers never
   * lose each other's change; a throw saves nothing.
   */
  update<T>(change: (list: AccountEntry[]) => RegistryChange<T>): Promise<T>;
  /** The stored envelope's text, or undefined when there is none. */
  readSecret(account: string, kind: SecretKind): Promise<string | undefined>;
  writeSecret(account: string, kind: SecretKind, envelope: string): Promise<void>;
  hasSecret(account: string, kind: SecretKind): Promise<boolean>;
  /** True when there was one to delete. */
  removeSecret(account: string, kind: SecretKind): Promise<boolean>;
  /** Where the secret is kept, for messages: a file path, or the database and the account. */
  secretWhere(account: string, kind: SecretKind): string;
}

/** The file a secret lives in on the files backend (0600, in 0700 directories). */
export function secretPath(env: Env, account: string, kind: SecretKind): string {
  const tokens = join(configDir(env), 'tokens');
  // A subdirectory for IMAP: an account name may contain dots, so `<name>.imap.json` could be
  // another account's Gmail token file.
  return kind === 'gmail-token' ? join(tokens, `${account}.json`) : join(tokens, 'imap', `${account}.json`);
}

/** The files backend: today's code, today's bytes on disk. */
export function filesAccountsStore(env: Env): AccountsStore {
  const where = (account: string, kind: SecretKind): string => secretPath(env, account, kind);
  const exists = (path: string): Promise<boolean> =>
    stat(path).then(
      () => true,
      () => false,
    );
  return {
    kind: 'files',
    plaintextSecrets: true,
    list: () => readAccountsFile(env),
    find: async (ref) => findAccount(await readAccountsFile(env), ref),
    async update(change) {
      const { list, result } = change(await readAccountsFile(env));
      if (list !== undefined) await writeAccounts(env, list);
      return result;
    },
    async readSecret(account, kind) {
      try {
        return await readFile(where(account, kind), 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
    writeSecret: (account, kind, envelope) =>
      writeFileAtomic(where(account, kind), envelope, { tightenDir: true }),
    hasSecret: (account, kind) => exists(where(account, kind)),
    async removeSecret(account, kind) {
      const path = where(account, kind);
      const existed = await exists(path);
      await rm(path, { force: true });
      return existed;
    },
    secretWhere: where,
  };
}

/**
 * The store MAILWARDEN_STATE chooses. The PostgreSQL one (and the driver) is loaded only when a
 * PostgreSQL URL is set; its pool is shared by the process and lets a command's process exit.
 */
export async function accountsStore(env: Env): Promise<AccountsStore> {
  const setting = stateSetting(env);
  if (setting.kind === 'files') return filesAccountsStore(env);
  return (await import('./pg/accounts-store.js')).sharedPgAccountsStore(setting.url);
}
