import type { Pool, PoolClient } from 'pg';
import { MailError, isMailError } from '../../mail/errors.js';
import { redactUrl } from '../state.js';

/*
 * The PostgreSQL state database (MAILWARDEN_STATE=postgres://…): one pool per process, the
 * schema created and migrated by the server at start. This module is imported dynamically, and
 * it imports the driver dynamically, so a files install never loads either.
 */

/** Versioned migrations; index + 1 is the version. Append only: a released step never changes. */
export const MIGRATIONS: readonly string[] = [
  // 1: the action log (every record as jsonb, with the fields readers select on as columns) and
  // the new-mail marks.
  `CREATE TABLE mailwarden_action_log (
     id bigserial PRIMARY KEY,
     account text NOT NULL,
     time timestamptz NOT NULL,
     tool text NOT NULL,
     op text NOT NULL,
     kind text,
     call text,
     outcome text NOT NULL,
     record jsonb NOT NULL
   );
   CREATE INDEX mailwarden_action_log_account_time ON mailwarden_action_log (account, time);
   CREATE TABLE mailwarden_inbox_marks (
     account text PRIMARY KEY,
     mark jsonb NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now()
   );`,
  // 2: the server's own timers' slots (src/policy/timer-slots.ts): the last claim of each timer
  // for each account, on the database's clock.
  `CREATE TABLE mailwarden_timer_slots (
     account text NOT NULL,
     timer text NOT NULL,
     claimed_at timestamptz NOT NULL,
     PRIMARY KEY (account, timer)
   );`,
  // 3: bulk preview tokens (src/store/pg/preview-tokens.ts), keyed by the token's SHA-256, and the
  // one-click unsubscribe ledger (src/store/pg/sent-ledger.ts): the requests made, and the claims
  // of requests under way.
  `CREATE TABLE mailwarden_preview_tokens (
     token_hash text PRIMARY KEY,
     account text NOT NULL,
     query text NOT NULL,
     change text NOT NULL,
     ids text[] NOT NULL,
     issued_at timestamptz NOT NULL,
     expires_at timestamptz NOT NULL,
     used boolean NOT NULL DEFAULT false
   );
   CREATE INDEX mailwarden_preview_tokens_account ON mailwarden_preview_tokens (account, issued_at);
   CREATE INDEX mailwarden_preview_tokens_expires ON mailwarden_preview_tokens (expires_at);
   CREATE TABLE mailwarden_unsubscribe_ledger (
     id bigserial PRIMARY KEY,
     account text NOT NULL,
     sender text NOT NULL,
     url text NOT NULL,
     at timestamptz NOT NULL,
     thread_id text NOT NULL,
     status integer
   );
   CREATE INDEX mailwarden_unsubscribe_ledger_sender ON mailwarden_unsubscribe_ledger (account, sender);
   CREATE INDEX mailwarden_unsubscribe_ledger_url ON mailwarden_unsubscribe_ledger (account, url);
   CREATE TABLE mailwarden_unsubscribe_claims (
     account text NOT NULL,
     key text NOT NULL,
     holder text NOT NULL,
     claimed_at timestamptz NOT NULL,
     PRIMARY KEY (account, key)
   );`,
  // The accounts registry (src/store/accounts-store.ts): each entry as accounts.json holds it, in
  // the order `accounts list` shows; every name and alias in one key table, so no name or alias
  // can name two accounts; and each account's secrets as the exact encrypted envelope the file
  // holds (never a plaintext one: the check refuses it; never the key).
  `CREATE TABLE mailwarden_accounts (
     name text PRIMARY KEY,
     position integer NOT NULL,
     entry jsonb NOT NULL CHECK (entry->>'name' = name)
   );
   CREATE TABLE mailwarden_account_keys (
     key text PRIMARY KEY,
     account text NOT NULL REFERENCES mailwarden_accounts (name) ON DELETE CASCADE
   );
   CREATE TABLE mailwarden_account_secrets (
     account text NOT NULL,
     kind text NOT NULL CHECK (kind IN ('gmail-token', 'imap-password')),
     envelope text NOT NULL CHECK ((envelope::jsonb)->>'protection' IN ('keyring', 'passphrase')),
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (account, kind)
   );`,
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Advisory lock key (a fixed 64-bit number) that serializes migrations across replicas. */
export const MIGRATE_LOCK = '7244145573123661606';

export interface StateDb {
  readonly pool: Pool;
  /** The URL with any password hidden, for messages. */
  readonly name: string;
  close(): Promise<void>;
}

/** SQLSTATE classes that mean the connection or the server is gone or not ready (retry later). */
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];

/**
 * A driver error as the MailError a tool answers with: a connection that cannot be made or was
 * lost is upstream_unavailable (retryable), named as the state database; anything else is an
 * internal_error. Never the driver's stack in the message.
 */
export function stateDbError(name: string, e: unknown, doing: string): MailError {
  if (isMailError(e)) return e;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : String(e);
  // No SQLSTATE class starts with E; errno codes (EPIPE is five letters too) all do.
  const sqlstate = /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E');
  // A socket error (ECONNREFUSED, ECONNRESET, ENOTFOUND…), a server shutting down or not
  // ready, or the driver's own word that the connection ended or timed out.
  const unavailable = sqlstate
    ? UNAVAILABLE_CLASSES.includes(code.slice(0, 2))
    : /^E[A-Z]+$/.test(code) || /connection|terminat|timeout|timed out|closed/i.test(message);
  if (unavailable)
    return new MailError(
      'upstream_unavailable',
      `the state database ${name} cannot be reached while ${doing} (${code || message}); nothing more was written. Try again when it is back.`,
      { cause: e, retryable: true },
    );
  return new MailError('internal_error', `the state database ${name} refused ${doing}: ${message}`, {
    cause: e,
    retryable: false,
  });
}

/**
 * Opens a pool on `url` and brings the schema to SCHEMA_VERSION: missing migrations are applied
 * in one transaction under an advisory lock, so replicas starting together apply each once; a
 * database whose version is newer than this code knows is refused.
 */
export async function openStateDb(
  url: string,
  migrations: readonly string[] = MIGRATIONS,
  poolOptions: { max?: number; allowExitOnIdle?: boolean } = {},
): Promise<StateDb> {
  const db = await openPool(url, poolOptions);
  try {
    await migrate(db, migrations);
  } catch (e) {
    await db.close().catch(() => undefined);
    throw stateDbError(db.name, e, 'migrating its schema');
  }
  return db;
}

/** A pool on `url`, without touching the schema (`mailwarden state migrate` brings it up in its own transaction). */
export async function openPool(
  url: string,
  poolOptions: { max?: number; allowExitOnIdle?: boolean } = {},
): Promise<StateDb> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5_000,
    ...poolOptions,
  });
  // An idle client whose server went away emits "error" on the pool; the next use reports it.
  pool.on('error', () => undefined);
  return { pool, name: redactUrl(url), close: () => pool.end() };
}

async function migrate(db: StateDb, migrations: readonly string[]): Promise<void> {
  const client = await db.pool.connect();
  let failed: unknown;
  try {
    await client.query('BEGIN');
    await migrateIn(
      client,
      migrations,
      (have) =>
        new MailError(
          'internal_error',
          `the state database ${db.name} has schema version ${have}, newer than this mailwarden knows (${migrations.length}): a newer mailwarden migrated it. Run that version, or point MAILWARDEN_STATE at another database; nothing was changed.`,
          { retryable: false },
        ),
    );
    await client.query('COMMIT');
  } catch (e) {
    failed = e;
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release(failed !== undefined && !isMailError(failed));
  }
}

/**
 * Inside a transaction the caller holds: the schema brought to the version of `migrations` under
 * the advisory lock that serializes migrations across replicas (a replica starting meanwhile waits
 * and then finds it done); a newer database throws what `tooNew` makes of its version.
 */
export async function migrateIn(
  client: Pick<PoolClient, 'query'>,
  migrations: readonly string[],
  tooNew: (have: number) => Error,
): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
  await client.query(
    'CREATE TABLE IF NOT EXISTS mailwarden_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const have = await schemaVersion(client);
  if (have > migrations.length) throw tooNew(have);
  for (let v = have + 1; v <= migrations.length; v++) {
    await client.query(migrations[v - 1] as string);
    await client.query('INSERT INTO mailwarden_schema (version) VALUES ($1)', [v]);
  }
}

/** The database's schema version: the highest applied migration, 0 for none. */
export async function schemaVersion(client: Pick<PoolClient, 'query'>): Promise<number> {
  const r = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM mailwarden_schema');
  return r.rows[0]?.v ?? 0;
}
