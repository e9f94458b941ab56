import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { IMAP_DEMO_PASSPHRASE } from '../../src/sandbox/imap-account.js';
import { insertRecords } from '../../src/store/pg/action-log.js';
import { startPostgres } from './postgres.js';
import type { PgCluster } from './postgres.js';

/*
 * One suite, two state backends: the server's state in files under its config dir (the default)
 * or in PostgreSQL (MAILWARDEN_STATE). A test file that runs its cases on both takes each
 * server's environment from stateEnv() and reads or plants action-log records through the
 * functions here, which go wherever that server keeps them.
 */

export type StateBackend = 'files' | 'postgres';
export const STATE_BACKENDS: readonly StateBackend[] = ['files', 'postgres'];

/** Every item with each state backend, for describe.each. */
export function withStates<T>(items: readonly T[]): Array<[T, StateBackend]> {
  return items.flatMap((item) => STATE_BACKENDS.map((state): [T, StateBackend] => [item, state]));
}

let cluster: PgCluster | undefined;
let databases = 0;

/** The environment for a server on this backend; each postgres server gets a database of its own. */
export async function stateEnv(state: StateBackend): Promise<Record<string, string>> {
  if (state === 'files') return {};
  cluster ??= await startPostgres();
  // The accounts and their secrets are in the database too, sealed with a passphrase: the one the
  // IMAP demo's files use, so one environment opens both (test/helpers/pg-accounts.ts).
  return {
    MAILWARDEN_STATE: await cluster.createDatabase(`state_${process.pid}_${++databases}`),
    MAILWARDEN_TOKEN_PASSPHRASE: IMAP_DEMO_PASSPHRASE,
  };
}

/** Stops the cluster stateEnv started, if any (a file's afterAll). */
export async function closeStateBackends(): Promise<void> {
  const c = cluster;
  cluster = undefined;
  await c?.close();
}

interface Where {
  configDir: string;
  env: Record<string, string>;
}

async function withDb<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Every action-log record the server wrote, oldest first. */
export async function logRecords(where: Where): Promise<Array<Record<string, unknown>>> {
  const url = where.env['MAILWARDEN_STATE'];
  if (url === undefined)
    return readFileSync(join(where.configDir, 'action-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return withDb(url, async (c) => {
    const r = await c.query<{ record: Record<string, unknown> }>(
      'SELECT record FROM mailwarden_action_log ORDER BY id',
    );
    return r.rows.map((row) => row.record);
  });
}

/** The move records (kind "move") among them. */
export async function moveRecords(where: Where): Promise<Array<Record<string, unknown>>> {
  return (await logRecords(where)).filter((r) => r['kind'] === 'move');
}

/** Plants a record in the server's action log, as a process that died mid-write would leave it. */
export async function appendRecord(where: Where, record: Record<string, unknown>): Promise<void> {
  const url = where.env['MAILWARDEN_STATE'];
  if (url === undefined) {
    appendFileSync(join(where.configDir, 'action-log.jsonl'), `${JSON.stringify(record)}\n`);
    return;
  }
  await withDb(url, (c) => insertRecords(c, [record as { account: string; time?: string }]));
}
