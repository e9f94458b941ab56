/*
 * The throwaway PostgreSQL cluster the tests start: the module lives in src/sandbox/postgres.ts,
 * so the benchmarks (plain JavaScript over dist/) start the same cluster the tests do.
 */
import { afterAll, beforeAll } from 'vitest';
import { startPostgres } from '../../src/sandbox/postgres.js';
import type { PgCluster } from '../../src/sandbox/postgres.js';
import { openStateDb } from '../../src/store/pg/index.js';
import type { StateDb } from '../../src/store/pg/index.js';

export { PG_BIN, startPostgres } from '../../src/sandbox/postgres.js';
export type { PgCluster, PgOptions } from '../../src/sandbox/postgres.js';

/** One cluster for a test file, and what the file opened on it, closed after its last test. */
export interface FileCluster {
  /** The cluster; started before the file's first test. */
  readonly cluster: PgCluster;
  /** A new empty database named `<prefix>_<n>`: its URL. */
  database(prefix: string): Promise<string>;
  /** The state database at `url` (migrated), closed after the file's last test. */
  stateDb(url: string, migrations?: readonly string[]): Promise<StateDb>;
  /** Closes `dbs` with the file's other state databases. */
  keep(...dbs: StateDb[]): void;
  /** Runs `close` after the last test, before the cluster stops (last registered, first run). */
  onClose(close: () => unknown): void;
}

/**
 * Starts a cluster in the file's beforeAll. Its afterAll runs the file's own closers (last first),
 * closes every state database the file opened or kept here, then stops the cluster.
 */
export function usePostgres(): FileCluster {
  let cluster: PgCluster | undefined;
  let n = 0;
  const dbs: StateDb[] = [];
  const closers: Array<() => unknown> = [];
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
    await cluster?.close();
  });
  const started = (): PgCluster => {
    if (cluster === undefined)
      throw new Error('usePostgres: the cluster is not started (use it inside a test)');
    return cluster;
  };
  return {
    get cluster() {
      return started();
    },
    database: (prefix) => started().createDatabase(`${prefix}_${++n}`),
    async stateDb(url, migrations) {
      const db = await openStateDb(url, migrations);
      dbs.push(db);
      return db;
    },
    keep: (...more) => void dbs.push(...more),
    onClose: (close) => void closers.push(close),
  };
}
