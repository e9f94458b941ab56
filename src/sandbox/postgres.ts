import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './balancer.js';

/*
 * A throwaway PostgreSQL 15 cluster for a test file or a benchmark (test/helpers/postgres.ts and
 * bench/pg-writes.mjs both start it from here): initdb into a temp dir owned by the
 * `postgres` user (the tests run as root, which PostgreSQL refuses to run as), listening on a
 * free high port of 127.0.0.1 with its unix socket in the temp dir, trust authentication, one
 * database. Never the packaged system cluster. .ci/run installs postgresql-15.
 */

export const PG_BIN = '/usr/lib/postgresql/15/bin';

const run = promisify(execFile);

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/mailwarden */
  url: string;
  port: number;
  dir: string;
  /** Another empty database in the same cluster; its URL. */
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop in the given mode (fast: clients are cut off, the cluster shuts down cleanly). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the stopped cluster again on the same port. */
  start(): Promise<void>;
  /** Stops it (immediate) and removes the dir. */
  close(): Promise<void>;
}

async function asPostgres(cmd: string, args: string[]): Promise<void> {
  await run('runuser', ['-u', 'postgres', '--', join(PG_BIN, cmd), ...args], { timeout: 60_000 });
}

export interface PgOptions {
  /**
   * Flush to disk as a production server does (fsync and full-page writes on). Default off: the
   * tests' clusters are thrown away, and skipping the flushes keeps them fast.
   */
  durable?: boolean;
}

export async function startPostgres(opts: PgOptions = {}): Promise<PgCluster> {
  if (!existsSync(join(PG_BIN, 'initdb')))
    throw new Error(
      `PostgreSQL 15 is not installed (${PG_BIN}/initdb missing): apt-get install postgresql-15`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'mailwarden-pg-'));
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  const data = join(dir, 'data');
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${opts.durable === true ? '' : ' -c fsync=off -c full_page_writes=off'}`;
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const start = (): Promise<void> =>
    asPostgres('pg_ctl', ['start', '-w', '-D', data, '-l', join(dir, 'log'), '-o', options]);
  const stop = (mode: 'fast' | 'immediate' = 'fast'): Promise<void> =>
    asPostgres('pg_ctl', ['stop', '-w', '-D', data, '-m', mode]);
  await start();
  const createDatabase = async (name: string): Promise<string> => {
    await asPostgres('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
    return `postgres://postgres@127.0.0.1:${port}/${name}`;
  };
  const url = await createDatabase('mailwarden');
  return {
    url,
    port,
    dir,
    createDatabase,
    stop,
    start,
    async close() {
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
