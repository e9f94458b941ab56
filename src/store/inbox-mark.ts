import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MailError } from '../mail/errors.js';
import { parseMark } from '../mail/inbox-mark.js';
import type { InboxMark } from '../mail/inbox-mark.js';
import { writeFileAtomic } from './atomic.js';

/**
 * One small file per account (`<dir>/<account>.json`, 0600, directory 0700) holding the sweep's
 * mark (src/mail/inbox-mark.ts). Written to a temp file, fsynced and renamed over the old one,
 * so a crash leaves the old mark or the new one, never half of either.
 */
export interface InboxMarkStore {
  readonly dir: string;
  pathFor(account: string): string;
  /** undefined when there is no mark yet; a damaged file is a clear internal_error. */
  read(account: string): Promise<InboxMark | undefined>;
  write(mark: InboxMark): Promise<void>;
}

/** Account names as src/store/accounts.ts allows them (never ".." or a slash). */
const SAFE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function inboxMarkStore(dir: string): InboxMarkStore {
  const pathFor = (account: string): string => {
    if (!SAFE.test(account))
      throw new MailError(
        'internal_error',
        `account name ${JSON.stringify(account)} cannot name a mark file`,
      );
    return join(dir, `${account}.json`);
  };
  return {
    dir,
    pathFor,
    async read(account) {
      const path = pathFor(account);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new MailError(
          'internal_error',
          `the new-mail mark ${path} cannot be read: ${(e as Error).message}`,
          {
            cause: e,
          },
        );
      }
      return parseMark(text, path, account);
    },
    async write(mark) {
      await writeFileAtomic(pathFor(mark.account), `${JSON.stringify(mark, null, 1)}\n`, {
        mode: 0o600,
        dirMode: 0o700,
        tightenDir: true,
      });
    },
  };
}
