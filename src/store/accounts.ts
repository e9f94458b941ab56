import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MailError, invalidInput } from '../mail/errors.js';
import { TIERS } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { writeFileAtomic } from './atomic.js';
import type { ImapSettings } from '../providers/imap/settings.js';
import { parseImapSettings } from './account-imap.js';
import { configDir } from './config.js';
import type { Env } from './config.js';
import type { AccountsStore } from './accounts-store.js';
import { readAccountToken } from './tokens.js';

/**
 * The accounts one server may serve: `accounts.json` in the config dir,
 * `{"accounts": [{name, alias?, address?, provider, imap?, tiers, default, added}]}`. It names
 * accounts, how to reach IMAP ones, and the tiers each allows; it never holds a secret (Gmail
 * tokens stay in tokens/<name>.json, IMAP passwords in tokens/imap/<name>.json). That is the files
 * backend of the accounts store (accounts-store.ts); with MAILWARDEN_STATE=postgres://… the same
 * entries and secrets live in the state database, and the functions below work on either.
 */

export interface AccountEntry {
  /** Lower-cased; also the token file's name, so one name is one token. */
  name: string;
  alias?: string;
  /** The mailbox address, once known (from the token file or the provider's profile). */
  address?: string;
  provider: 'gmail' | 'imap';
  /** provider "imap" only: where and how to connect (never the password). */
  imap?: ImapSettings;
  /** The tiers tool calls against this account may use (intersected with the server's tiers). */
  tiers: Tier[];
  default: boolean;
  /** ISO 8601; absent only for the implicit account of a server without accounts.json. */
  added?: string;
}

/** The accounts store MAILWARDEN_STATE chooses (imported on use: its module imports this one). */
async function accountsStore(env: Env): Promise<AccountsStore> {
  return (await import('./accounts-store.js')).accountsStore(env);
}

/** Tiers that make sense per account; `accounts` governs the registry itself, not a mailbox. */
const ACCOUNT_TIERS: readonly Tier[] = TIERS.filter((t) => t !== 'accounts');

/** What `account: "all"` means in a tool call, so no account or alias may be called that. */
export const ALL_ACCOUNTS = 'all';

/** Same rule as config.accountName: the name becomes a file name, so no dots first, no slashes. */
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What removal says when Google did not confirm the revocation (or none was possible). */
export const REVOKE_NOTE =
  'Google did not confirm revoking the grant (no token to revoke, or the request failed); remove "mailwarden" at https://myaccount.google.com/permissions to be sure.';

/** Revokes a refresh token at the provider; true when it confirmed. Supplied by the caller. */
export type Revoker = (refreshToken: string) => Promise<boolean>;

export function accountsPath(env: Env): string {
  return join(configDir(env), 'accounts.json');
}

export function checkName(value: string, field: string): string {
  const name = value.trim().toLowerCase();
  if (!NAME.test(name))
    throw invalidInput(field, `"${value}" is not a valid name (letters, digits, . _ -; up to 64)`);
  if (name === ALL_ACCOUNTS)
    throw invalidInput(field, `"${ALL_ACCOUNTS}" is reserved: it means every account`);
  return name;
}

export function parseTiers(value: readonly string[] | string, field: string): Tier[] {
  const parts = typeof value === 'string' ? value.split(',') : value;
  const out = new Set<Tier>(['read']);
  for (const raw of parts) {
    const t = raw.trim().toLowerCase();
    if (t === '') continue;
    if (!(ACCOUNT_TIERS as readonly string[]).includes(t))
      throw invalidInput(field, `unknown tier "${t}"; allowed: ${ACCOUNT_TIERS.join(', ')}`);
    out.add(t as Tier);
  }
  return ACCOUNT_TIERS.filter((t) => out.has(t));
}

function bad(path: string, problem: string): MailError {
  return new MailError(
    'invalid_input',
    `${path}: ${problem}. Fix or delete the file (\`mailwarden accounts\`).`,
    {
      field: 'accounts.json',
    },
  );
}

function parseEntry(path: string, raw: unknown, i: number): AccountEntry {
  if (raw === null || typeof raw !== 'object') throw bad(path, `accounts[${i}] is not an object`);
  const o = raw as Record<string, unknown>;
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw bad(path, `accounts[${i}].${k} is not a string`);
    return v;
  };
  const wrap = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw bad(path, `accounts[${i}]: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const name = wrap(() => checkName(str('name') ?? '', 'name'));
  const alias = str('alias');
  const address = str('address');
  const added = str('added');
  const provider = str('provider') ?? 'gmail';
  if (provider !== 'gmail' && provider !== 'imap')
    throw bad(path, `accounts[${i}].provider "${provider}" is not supported (gmail, imap)`);
  if (provider === 'gmail' && o['imap'] !== undefined)
    throw bad(path, `accounts[${i}].imap is only for provider "imap"`);
  const tiersRaw = o['tiers'];
  if (tiersRaw !== undefined && !Array.isArray(tiersRaw))
    throw bad(path, `accounts[${i}].tiers is not a list`);
  const tiers = wrap(() => parseTiers((tiersRaw ?? ['read']) as string[], 'tiers'));
  const entry: AccountEntry = { name, provider, tiers, default: o['default'] === true };
  if (alias !== undefined && alias !== '') entry.alias = wrap(() => checkName(alias, 'alias'));
  if (address !== undefined && address !== '') entry.address = address.trim();
  if (added !== undefined) entry.added = added;
  if (provider === 'imap') entry.imap = wrap(() => parseImapSettings(o['imap'], 'imap'));
  return entry;
}

/** Exactly one default whenever there are accounts: the first marked one, else the first. */
function normaliseDefault(list: AccountEntry[]): AccountEntry[] {
  const i = Math.max(
    0,
    list.findIndex((a) => a.default),
  );
  return list.map((a, j) => ({ ...a, default: j === i }));
}

function checkUnique(list: readonly AccountEntry[], onClash: (problem: string) => MailError): void {
  const seen = new Map<string, string>();
  for (const a of list) {
    const keys = a.alias === undefined || a.alias === a.name ? [a.name] : [a.name, a.alias];
    for (const key of keys) {
      const owner = seen.get(key);
      if (owner !== undefined)
        throw onClash(
          owner === a.name
            ? `account "${a.name}" is listed twice`
            : `"${key}" names both account "${owner}" and account "${a.name}"`,
        );
      seen.set(key, a.name);
    }
  }
}

/**
 * Entries as stored (accounts.json's list, or the state database's rows), checked field by field
 * and for names and aliases used twice; `where` names the store in the messages.
 */
export function accountsFromStored(where: string, list: readonly unknown[]): AccountEntry[] {
  const entries = list.map((raw, i) => parseEntry(where, raw, i));
  checkUnique(entries, (p) => bad(where, p));
  return normaliseDefault(entries);
}

/**
 * A changed list before it is saved: names and aliases unique (the same invalid_input the file's
 * reader gives), exactly one default.
 */
export function checkedForSave(where: string, list: readonly AccountEntry[]): AccountEntry[] {
  checkUnique(list, (p) => bad(where, p));
  return list.length === 0 ? [] : normaliseDefault([...list]);
}

/**
 * The registered accounts, from the accounts store MAILWARDEN_STATE chooses (accounts.json by
 * default); none when there are none (a single-account setup).
 */
export async function readAccounts(env: Env): Promise<AccountEntry[]> {
  return (await accountsStore(env)).list();
}

/** accounts.json itself: the files backend's registry; none when the file does not exist. */
export async function readAccountsFile(env: Env): Promise<AccountEntry[]> {
  const path = accountsPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new MailError('internal_error', `cannot read ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw bad(path, 'is not valid JSON');
  }
  const list = (json as { accounts?: unknown } | null)?.accounts;
  if (!Array.isArray(list)) throw bad(path, 'has no "accounts" list');
  return accountsFromStored(path, list);
}

/** Replaced whole (never torn for a concurrent reader); 0600 like the token files beside it. */
export async function writeAccounts(env: Env, list: readonly AccountEntry[]): Promise<void> {
  await writeFileAtomic(accountsPath(env), `${JSON.stringify({ accounts: list }, null, 2)}\n`);
}

/** The registered entry for a name, alias or address, or undefined (e.g. the implicit Gmail account). */
export async function readAccountEntry(env: Env, ref: string): Promise<AccountEntry | undefined> {
  return (await accountsStore(env)).find(ref);
}

/** An account by name, alias or address (case-insensitive). */
export function findAccount<T extends Pick<AccountEntry, 'name' | 'alias' | 'address'>>(
  list: readonly T[],
  ref: string,
): T | undefined {
  const key = ref.trim().toLowerCase();
  return (
    list.find((a) => a.name === key) ??
    list.find((a) => a.alias === key) ??
    list.find((a) => a.address !== undefined && a.address.toLowerCase() === key)
  );
}

/**
 * What the account tools see (src/tools/accounts.ts). The runtime implements it, so a server
 * pinned to one account, or serving the demo, can refuse changes with its own reason.
 */
export interface AccountRegistry {
  /** The accounts this server serves, default first-class: never a token. */
  list(): Promise<AccountEntry[]>;
  /** Registers an account whose token already exists (`mailwarden auth --account NAME`). */
  add(input: NewAccount): Promise<AccountEntry>;
  /**
   * add_account: registers a Gmail account, signing it in (or in again) through the loopback
   * consent flow when that is needed. A sign-in already waiting for the same name is reused.
   */
  signIn(input: SignInRequest): Promise<SignInStart>;
  remove(ref: string): Promise<RemovedAccount>;
}

export interface SignInRequest {
  name: string;
  alias?: string;
  tiers?: readonly string[];
  makeDefault?: boolean;
  /** Accept a different mailbox than the one the account is registered with. */
  force?: boolean;
}

export interface SignInOutcome {
  entry: AccountEntry;
  status: 'added' | 'reauthenticated';
  note?: string;
}

/** A consent flow waiting for a person's browser (the token never leaves the registry). */
export interface PendingSignIn {
  id: string;
  /** The consent page, for a person to open on this machine. */
  url: string;
  reauth: boolean;
  /** ms since epoch; the flow gives up then. */
  expiresAt: number;
  /** The outcome once the browser came back (then it is reported, and forgotten). */
  wait(signal: AbortSignal): Promise<SignInOutcome>;
  /** Stops waiting: nothing is stored. No effect once the flow has ended. */
  cancel(reason: MailError): void;
}

export type SignInStart = { kind: 'done'; outcome: SignInOutcome } | { kind: 'consent'; flow: PendingSignIn };

export interface NewAccount {
  name: string;
  alias?: string;
  address?: string;
  tiers?: readonly string[] | string;
  makeDefault?: boolean;
  /** An IMAP account (its password already stored, see imap-secret.ts). */
  imap?: ImapSettings;
  /**
   * Replaces an entry of the same provider (alias, tiers, default kept unless given): re-adding
   * an IMAP account, or a Gmail account that has just signed in again.
   */
  replace?: boolean;
}

export async function addAccount(env: Env, input: NewAccount, now: Date = new Date()): Promise<AccountEntry> {
  const name = checkName(input.name, 'name');
  // One read-modify-write of the registry (serialized by the database when it is there).
  return (await accountsStore(env)).update((all) => withAccount(all, name, input, now));
}

/** The registry with `input` added (or replacing its entry); the new entry. Pure. */
function withAccount(
  all: readonly AccountEntry[],
  name: string,
  input: NewAccount,
  now: Date,
): { list: AccountEntry[]; result: AccountEntry } {
  const provider = input.imap === undefined ? 'gmail' : 'imap';
  const old =
    input.replace === true ? all.find((a) => a.name === name && a.provider === provider) : undefined;
  const list = all.filter((a) => a !== old);
  const alias = input.alias ?? old?.alias;
  const entry: AccountEntry = {
    name,
    provider,
    ...(input.imap === undefined ? {} : { imap: input.imap }),
    tiers:
      input.tiers === undefined && old !== undefined
        ? old.tiers
        : parseTiers(input.tiers ?? ['read', 'manage'], 'tiers'),
    default: input.makeDefault === true || old?.default === true || list.length === 0,
    added: now.toISOString(),
  };
  if (alias !== undefined && alias !== '') entry.alias = checkName(alias, 'alias');
  if (input.address !== undefined && input.address !== '') entry.address = input.address.trim();
  const taken = (key: string): string | undefined =>
    list.find((a) => a.name === key || a.alias === key)?.name;
  const byName = taken(name);
  if (byName !== undefined) throw invalidInput('name', `"${name}" already names account "${byName}"`);
  const byAlias = entry.alias === undefined ? undefined : taken(entry.alias);
  if (byAlias !== undefined)
    throw invalidInput('alias', `"${entry.alias}" already names account "${byAlias}"`);
  const others = list.map((a) => (entry.default ? { ...a, default: false } : a));
  // A replaced entry keeps its place in the list (the order `accounts list` shows).
  const at = old === undefined ? others.length : all.indexOf(old);
  return { list: [...others.slice(0, at), entry, ...others.slice(at)], result: entry };
}

export async function setDefaultAccount(env: Env, ref: string): Promise<AccountEntry> {
  return (await accountsStore(env)).update((list) => {
    const found = findAccount(list, ref);
    if (found === undefined) throw notRegistered(list, ref);
    return {
      list: list.map((a) => ({ ...a, default: a.name === found.name })),
      result: { ...found, default: true },
    };
  });
}

export interface RemovedAccount {
  /** The registry entry, when there was one. */
  removed?: AccountEntry;
  /** The account that is the default now, if the removed one was. */
  newDefault?: string;
  /** The Gmail token file or, for an IMAP account, the stored password was deleted. */
  tokenDeleted: boolean;
  /** Google confirmed revoking the refresh token (best effort, before the file is deleted). */
  revoked: boolean;
  note?: string;
}

/**
 * Deletes the entry and the stored token or password, whatever else fails: a user removing an account wants
 * its credentials gone from this machine. A name with a token file but no entry (the implicit
 * single account) is removable too.
 */
export async function removeAccount(env: Env, ref: string, revoke?: Revoker): Promise<RemovedAccount> {
  const store = await accountsStore(env);
  const list = await store.list();
  const found = findAccount(list, ref);
  const name = found?.name ?? checkName(ref, 'name');
  const tokenExisted = await store.hasSecret(name, 'gmail-token');
  const imapSecret = await store.removeSecret(name, 'imap-password');
  if (found === undefined && !tokenExisted && !imapSecret) throw notRegistered(list, ref);
  // An IMAP account has no grant to revoke: deleting the stored password is the whole of it.
  const gmail = found?.provider !== 'imap';
  const out: RemovedAccount = { tokenDeleted: imapSecret, revoked: false };
  if (gmail && tokenExisted && revoke !== undefined) {
    // Best effort: an undecryptable token or an unreachable Google never blocks the removal.
    const refreshToken = await readAccountToken(store, name, env).then(
      (t) => t.refreshToken,
      () => undefined,
    );
    if (refreshToken !== undefined) out.revoked = await revoke(refreshToken).catch(() => false);
  }
  if (gmail && !out.revoked) out.note = REVOKE_NOTE;
  if (found !== undefined) {
    // Taken out of the registry as it is now (another writer may have changed it meanwhile).
    const promoted = await store.update((current) => {
      const rest = current.filter((a) => a.name !== found.name);
      const next = found.default && rest.length > 0 ? normaliseDefault(rest) : rest;
      return { list: next, result: found.default ? next.find((a) => a.default) : undefined };
    });
    out.removed = found;
    if (promoted !== undefined) out.newDefault = promoted.name;
  }
  await store.removeSecret(name, 'gmail-token');
  out.tokenDeleted ||= tokenExisted;
  return out;
}

export function notRegistered(list: readonly AccountEntry[], ref: string): MailError {
  const known = list.map((a) => a.name).join(', ');
  return new MailError(
    'not_found',
    `no account "${ref}"${known === '' ? ' (no accounts are registered)' : `; registered: ${known}`}`,
  );
}
