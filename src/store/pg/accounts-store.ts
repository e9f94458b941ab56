import type { PoolClient } from 'pg';
import { MailError, isMailError } from '../../mail/errors.js';
import { accountsFromStored, checkedForSave, findAccount } from '../accounts.js';
import type { AccountEntry } from '../accounts.js';
import type { AccountsStore, SecretKind } from '../accounts-store.js';
import { MIGRATIONS, openStateDb, stateDbError } from './db.js';
import type { StateDb } from './db.js';

/*
 * The accounts registry and its secrets in the state database (tables in db.ts MIGRATIONS):
 * mailwarden_accounts (one row per entry, jsonb as accounts.json holds it, in list order),
 * mailwarden_account_keys (every name and alias, unique across both), and
 * mailwarden_account_secrets (the encrypted envelope's text, byte for byte the file's).
 */

/** A secret the database may hold: sealed with a key (keyring or passphrase), never plaintext. */
export function checkSealed(envelope: string, account: string, kind: SecretKind): void {
  let protection: unknown;
  try {
    protection = (JSON.parse(envelope) as { protection?: unknown } | null)?.protection;
  } catch {
    protection = undefined;
  }
  if (protection === 'keyring' || protection === 'passphrase') return;
  const what = kind === 'gmail-token' ? 'Gmail token' : 'IMAP password';
  throw new MailError(
    'invalid_input',
    `protection: the ${what} of account "${account}" is not encrypted, and the state database (MAILWARDEN_STATE) never holds a plaintext secret. Set MAILWARDEN_TOKEN_PASSPHRASE (the same on every replica) and store it again; nothing was saved.`,
    { field: 'protection', retryable: false },
  );
}

/** The registry as the database holds it now (inside a transaction when `client` is in one). */
export async function readList(db: StateDb, client: Pick<PoolClient, 'query'>): Promise<AccountEntry[]> {
  const r = await client.query<{ entry: unknown }>('SELECT entry FROM mailwarden_accounts ORDER BY position');
  return accountsFromStored(
    `the accounts in ${db.name}`,
    r.rows.map((row) => row.entry),
  );
}

/** Replaces the whole registry: rows and keys (the key table's primary key refuses a clash). */
export async function writeList(
  client: Pick<PoolClient, 'query'>,
  list: readonly AccountEntry[],
): Promise<void> {
  await client.query('DELETE FROM mailwarden_accounts');
  if (list.length === 0) return;
  await client.query(
    `INSERT INTO mailwarden_accounts (name, position, entry)
     SELECT name, position, entry FROM unnest($1::text[], $2::int[], $3::jsonb[]) AS t(name, position, entry)`,
    [list.map((a) => a.name), list.map((_a, i) => i), list.map((a) => JSON.stringify(a))],
  );
  const keys = list.flatMap((a) =>
    a.alias === undefined || a.alias === a.name
      ? [[a.name, a.name]]
      : [
          [a.name, a.name],
          [a.alias, a.name],
        ],
  );
  await client.query(
    'INSERT INTO mailwarden_account_keys (key, account) SELECT * FROM unnest($1::text[], $2::text[])',
    [keys.map((k) => k[0]), keys.map((k) => k[1])],
  );
}

/**
 * Runs `work` in one transaction that holds the registry's table lock (SHARE ROW EXCLUSIVE: one
 * writer at a time, readers never blocked). Exported for the move from files.
 */
export async function inRegistryTransaction<T>(
  db: StateDb,
  doing: string,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  let client: PoolClient;
  try {
    client = await db.pool.connect();
  } catch (e) {
    throw stateDbError(db.name, e, doing);
  }
  let failed: unknown;
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE mailwarden_accounts IN SHARE ROW EXCLUSIVE MODE');
    const out = await work(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    failed = e;
    await client.query('ROLLBACK').catch(() => undefined);
    if ((e as { code?: unknown }).code === '23505')
      throw new MailError(
        'invalid_input',
        `name: a name or alias would name two accounts in ${db.name}; nothing was saved`,
        { field: 'name', retryable: false, cause: e },
      );
    throw stateDbError(db.name, e, doing);
  } finally {
    client.release(failed !== undefined && !isMailError(failed));
  }
}

export function pgAccountsStore(db: StateDb): AccountsStore {
  const query = async <R extends Record<string, unknown>>(
    doing: string,
    text: string,
    values: unknown[],
  ): Promise<{ rows: R[]; rowCount: number }> => {
    try {
      const r = await db.pool.query<R>(text, values);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    } catch (e) {
      throw stateDbError(db.name, e, doing);
    }
  };
  const list = async (): Promise<AccountEntry[]> => {
    try {
      return await readList(db, db.pool);
    } catch (e) {
      throw stateDbError(db.name, e, 'reading the accounts');
    }
  };
  return {
    kind: 'postgres',
    plaintextSecrets: false,
    list,
    find: async (ref) => findAccount(await list(), ref),
    update: (change) =>
      inRegistryTransaction(db, 'saving the accounts', async (client) => {
        const { list: next, result } = change(await readList(db, client));
        if (next !== undefined) await writeList(client, checkedForSave(`the accounts in ${db.name}`, next));
        return result;
      }),
    async readSecret(account, kind) {
      const r = await query<{ envelope: string }>(
        'reading a secret',
        'SELECT envelope FROM mailwarden_account_secrets WHERE account = $1 AND kind = $2',
        [account, kind],
      );
      return r.rows[0]?.envelope;
    },
    async writeSecret(account, kind, envelope) {
      checkSealed(envelope, account, kind);
      await query(
        'saving a secret',
        `INSERT INTO mailwarden_account_secrets (account, kind, envelope) VALUES ($1, $2, $3)
         ON CONFLICT (account, kind) DO UPDATE SET envelope = EXCLUDED.envelope, updated_at = now()`,
        [account, kind, envelope],
      );
    },
    async hasSecret(account, kind) {
      const r = await query(
        'reading a secret',
        'SELECT 1 FROM mailwarden_account_secrets WHERE account = $1 AND kind = $2',
        [account, kind],
      );
      return r.rowCount > 0;
    },
    async removeSecret(account, kind) {
      const r = await query(
        'deleting a secret',
        'DELETE FROM mailwarden_account_secrets WHERE account = $1 AND kind = $2',
        [account, kind],
      );
      return r.rowCount > 0;
    },
    secretWhere: (account, kind) => `${db.name} (${kind} of account "${account}")`,
  };
}

/**
 * One database per URL per process for the accounts store, opened (and migrated) on first use.
 * Its idle connections do not keep a command's process alive.
 */
const shared = new Map<string, Promise<StateDb>>();

export async function sharedPgAccountsStore(url: string): Promise<AccountsStore> {
  let db = shared.get(url);
  if (db === undefined) {
    db = openStateDb(url, MIGRATIONS, { max: 4, allowExitOnIdle: true });
    shared.set(url, db);
    // A failed open is tried again on the next use.
    db.catch(() => shared.delete(url));
  }
  return pgAccountsStore(await db);
}

/** Closes the shared databases (tests, and a process that wants to end at once). */
export async function closeSharedPgAccountsStores(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  await Promise.all(all.map(async (db) => (await db.catch(() => undefined))?.close()));
}
