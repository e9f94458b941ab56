import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of the written file; secrets default to owner-only. */
  mode?: number;
  /** Mode of the directories this call creates. */
  dirMode?: number;
  /**
   * Also set an existing parent directory to `dirMode`. For directories that hold nothing but
   * secrets (tokens/); off by default, since the config dir may be one the user chose and shares.
   */
  tightenDir?: boolean;
}

/**
 * Writes `data` so that a reader sees either the old file or the whole new one, never a torn
 * one: a temp file in the same directory (same filesystem, so rename(2) is atomic), fsynced,
 * then renamed over the target. The temp file is created with O_EXCL and the final mode, so the
 * secret is never readable by others, not even for the moment between create and chmod.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dirMode = options.dirMode ?? 0o700;
  const dir = dirname(path);
  const created = await mkdir(dir, { recursive: true, mode: dirMode });
  // mkdir leaves an existing directory's mode alone, and the umask trims a new one.
  if (created !== undefined || options.tightenDir === true) await chmod(dir, dirMode);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(temp, 'wx', mode);
  try {
    try {
      await fh.writeFile(data);
      // The umask may have cleared bits the caller asked for; a secret file is exactly `mode`.
      await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, path);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  // Persist the rename itself; not every platform lets a directory be opened and synced.
  const dh = await open(dir, 'r').catch(() => undefined);
  if (dh !== undefined)
    await dh
      .sync()
      .catch(() => undefined)
      .finally(() => dh.close());
}
