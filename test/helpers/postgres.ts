/*
 * The throwaway PostgreSQL cluster the tests start: the module lives in src/sandbox/postgres.ts,
 * so the benchmarks (plain JavaScript over dist/) start the same cluster the tests do.
 */
export { PG_BIN, startPostgres } from '../../src/sandbox/postgres.js';
export type { PgCluster, PgOptions } from '../../src/sandbox/postgres.js';
