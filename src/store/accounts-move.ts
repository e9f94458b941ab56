import { readdir } from 'node:fs/promises';
import type { PoolClient } from 'pg';
import { join } from 'node:path';
import { MailError } from '../mail/errors.js';
import { checkedForSave, checkName } from './accounts.js';
import type { AccountEntry } from './accounts.js';
import { filesAccountsStore, SECRET_KINDS, secretPath } from './accounts-store.js';
import type { SecretKind } from './accounts-store.js';
import { configDir } from './config.js';
import type { Env } from './config.js';
import { checkSealed, inRegistryTransaction, readList, writeList } from './pg/accounts-store.js';
import type { StateDb } from './pg/db.js';

/**
 * A one-machine install's accounts moved into the state database (`mailwarden state migrate`):
 * accounts.json's entries and every stored secret (tokens/<name>.json, tokens/imap/<name>.json,
 * also those of an account without an entry, such as the implicit "default"), copied as they are:
 * nothing is decrypted, the envelopes arrive byte for byte. All in one transaction: an account
 * already in the database with a different entry or secret, a name or alias clash, or a plaintext
 * secret (the database never holds one) refuses the whole move, and nothing is written.
 */

export interface MovedAccounts {
  /** Entries added to the database's registry. */
  accounts: number;
  /** Secrets added to the database. */
  secrets: number;
  /** Entries and secrets the database already held, the same: left as they were. */
  skippedSame: number;
}

interface SecretFile {
  account: string;
  kind: SecretKind;
  envelope: string;
}

/** Every secret file under tokens/ whose name is an account name, in name order. */
async function secretFiles(env: Env): Promise<SecretFile[]> {
  const files = filesAccountsStore(env);
  const out: SecretFile[] = [];
  for (const kind of SECRET_KINDS) {
    const dir =
      kind === 'gmail-token' ? join(configDir(env), 'tokens') : join(configDir(env), 'tokens', 'imap');
    const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [] as string[];
      throw new MailError('internal_error', `cannot read ${dir}: ${e.message}`);
    });
    for (const file of names.sort()) {
      const m = /^(.+)\.json$/.exec(file);
      if (m === null) continue;
      let account: string;
      try {
        account = checkName(m[1] as string, 'name');
      } catch {
        continue; // not an account's file (a temp file of an interrupted write, say)
      }
      if (secretPath(env, account, kind) !== join(dir, file)) continue; // upper case: not ours
      const envelope = await files.readSecret(account, kind);
      if (envelope !== undefined) out.push({ account, kind, envelope });
    }
  }
  return out;
}

/** An entry as compared: every field but `default` (the database keeps its own default). */
function sameEntry(a: AccountEntry, b: AccountEntry): boolean {
  const canon = (e: AccountEntry): string => {
    const { default: _d, ...rest } = e;
    return JSON.stringify(rest, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1)),
          )
        : v,
    );
  };
  return canon(a) === canon(b);
}

function conflict(what: string): MailError {
  return new MailError(
    'invalid_input',
    `${what}; nothing was moved. Remove it from the state database (\`mailwarden accounts remove NAME\` with MAILWARDEN_STATE set) or rename it here, then move again.`,
    { field: 'accounts', retryable: false },
  );
}

export async function moveAccountsToPostgres(env: Env, db: StateDb): Promise<MovedAccounts> {
  const { entries, secrets } = await readAccountFiles(env);
  return inRegistryTransaction(db, 'moving the accounts in', (client) =>
    moveAccountsIn(db, client, entries, secrets),
  );
}

/** The files' accounts and secret files; a plaintext secret is refused before anything is written. */
async function readAccountFiles(env: Env): Promise<{ entries: AccountEntry[]; secrets: SecretFile[] }> {
  const entries = await filesAccountsStore(env).list();
  const secrets = await secretFiles(env);
  // Refused before anything is written: a plaintext secret would have to be encrypted first.
  for (const s of secrets) checkSealed(s.envelope, s.account, s.kind);
  return { entries, secrets };
}

/**
 * The same move inside a transaction the caller holds (`mailwarden state migrate`, whose movers
 * share one): the registry's table lock is taken here, and nothing is committed.
 */
export async function moveAccountsInTransaction(
  env: Env,
  db: StateDb,
  client: Pick<PoolClient, 'query'>,
): Promise<MovedAccounts & { perAccount: Record<string, number> }> {
  const { entries, secrets } = await readAccountFiles(env);
  await client.query('LOCK TABLE mailwarden_accounts IN SHARE ROW EXCLUSIVE MODE');
  const perAccount: Record<string, number> = {};
  const moved = await moveAccountsIn(db, client, entries, secrets, (account) => {
    perAccount[account] = (perAccount[account] ?? 0) + 1;
  });
  return { ...moved, perAccount };
}

async function moveAccountsIn(
  db: StateDb,
  client: Pick<PoolClient, 'query'>,
  entries: readonly AccountEntry[],
  secrets: readonly SecretFile[],
  /** Called once for each entry and each secret written, with its account. */
  wrote: (account: string) => void = () => undefined,
): Promise<MovedAccounts> {
  {
    const inDb = await readList(db, client);
    const out: MovedAccounts = { accounts: 0, secrets: 0, skippedSame: 0 };
    const added: AccountEntry[] = [];
    for (const entry of entries) {
      const there = inDb.find((a) => a.name === entry.name);
      if (there === undefined) added.push(entry);
      else if (sameEntry(there, entry)) out.skippedSame++;
      else
        throw conflict(
          `account "${entry.name}" is already in the state database ${db.name} with a different entry`,
        );
    }
    const held = await client.query<{ account: string; kind: string; envelope: string }>(
      'SELECT account, kind, envelope FROM mailwarden_account_secrets WHERE account = ANY($1::text[])',
      [[...new Set(secrets.map((s) => s.account))]],
    );
    const fresh: SecretFile[] = [];
    for (const s of secrets) {
      const there = held.rows.find((r) => r.account === s.account && r.kind === s.kind);
      if (there === undefined) fresh.push(s);
      else if (there.envelope === s.envelope) out.skippedSame++;
      else
        throw conflict(
          `account "${s.account}" already has a different ${s.kind} in the state database ${db.name}`,
        );
    }
    if (added.length > 0) {
      // After the database's own entries, which keep their order and their default.
      await writeList(client, checkedForSave(`the accounts in ${db.name}`, [...inDb, ...added]));
      out.accounts = added.length;
      for (const e of added) wrote(e.name);
    }
    for (const s of fresh) {
      // A secret written meanwhile by a server (it does not take the registry's lock) stays.
      const r = await client.query(
        'INSERT INTO mailwarden_account_secrets (account, kind, envelope) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [s.account, s.kind, s.envelope],
      );
      out.secrets += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) > 0) wrote(s.account);
    }
    return out;
  }
}
