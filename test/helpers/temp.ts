import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Temp dirs a test file made, removed when the file's tests are done. Importing this module
 * registers the removal on the importing file's root suite (vitest evaluates modules afresh for
 * each test file). Being registered first, it runs after the file's own afterAll hooks (after
 * hooks run in reverse order), so servers and clients are closed before their dirs go.
 */
const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A fresh dir under the system temp dir, e.g. tempDir('mailwarden-gate-'); removed after the file. */
export function tempDir(prefix: string): string {
  return removeAfterFile(mkdtempSync(join(tmpdir(), prefix)));
}

/** Removes a dir something else created (a sandbox config dir, a server's) after the file. */
export function removeAfterFile(dir: string): string {
  made.push(dir);
  return dir;
}
