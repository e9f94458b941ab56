import { mkdir, readFile, stat } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { join } from 'node:path';
import { MailError } from '../mail/errors.js';
import { parseClients } from '../policy/clients.js';
import type { ClientEntry } from '../policy/clients.js';
import { writeFileAtomic } from './atomic.js';
import { configDir } from './config.js';
import type { Env } from './config.js';

/*
 * clients.json in the config dir: the HTTP clients and the hashes of their tokens (the format and
 * its checks: src/policy/clients.ts). Written whole through a temp file and rename, mode 0600.
 */

export function clientsPath(env: Env): string {
  return join(configDir(env), 'clients.json');
}

/** The clients, or undefined when the file does not exist (the server then knows only MAILWARDEN_TOKEN). */
export async function readClients(env: Env): Promise<ClientEntry[] | undefined> {
  const path = clientsPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MailError('internal_error', `cannot read ${path}: ${(e as Error).message}`);
  }
  return parseClients(text, path);
}

/** Replaced whole (a concurrent reader sees the old list or the new one); 0600. */
export async function writeClients(env: Env, list: readonly ClientEntry[]): Promise<void> {
  await writeFileAtomic(clientsPath(env), `${JSON.stringify({ clients: list }, null, 2)}\n`);
}

/**
 * Read, change and write clients.json as one step: two `mailwarden clients add` at the same
 * moment each see the other's entry, instead of the later write dropping the earlier one. The
 * lock is a directory beside the file (proper-lockfile, as the write lock), given up after 10 s.
 */
export async function updateClients<T>(
  env: Env,
  change: (
    list: ClientEntry[],
  ) => { list: readonly ClientEntry[]; result: T } | Promise<{ list: readonly ClientEntry[]; result: T }>,
): Promise<T> {
  const path = clientsPath(env);
  await mkdir(configDir(env), { recursive: true, mode: 0o700 });
  const release = await lockfile
    .lock(path, {
      lockfilePath: `${path}.lock`,
      realpath: false,
      stale: 10_000,
      retries: { retries: 100, minTimeout: 20, maxTimeout: 100 },
    })
    .catch((e: unknown) => {
      throw new MailError(
        'upstream_unavailable',
        `another process is changing ${path}; try again (${(e as Error).message})`,
      );
    });
  try {
    const { list, result } = await change((await readClients(env)) ?? []);
    await writeClients(env, list);
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}

/**
 * The clients as the file holds them now: a stat per call, and a new read only when the file
 * changed (another inode, size or mtime), so `mailwarden clients add` and `remove` take effect on
 * a running server's next request. A file that became unreadable or invalid throws until fixed.
 */
export function clientsSource(env: Env): () => Promise<ClientEntry[] | undefined> {
  const path = clientsPath(env);
  let seen: { key: string; list: ClientEntry[] | undefined } | undefined;
  return async () => {
    const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw new MailError('internal_error', `cannot read ${path}: ${e.message}`);
    });
    const key = st === undefined ? 'absent' : `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (seen?.key === key) return seen.list;
    const list = await readClients(env);
    seen = { key, list };
    return list;
  };
}
