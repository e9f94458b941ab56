import { mapBounded } from '../../mail/async.js';
import { isMailError } from '../../mail/errors.js';
import type { MailError } from '../../mail/errors.js';
import type { MailThread } from '../../mail/types.js';
import type { Mailbox, ThreadReadOptions } from '../../providers/mailbox.js';

/** A thread gone since the listing is left out (undefined); any other failure fails the call. */
export function goneAsNone(r: MailThread | MailError | undefined): MailThread | undefined {
  if (r === undefined) return undefined;
  if (!isMailError(r)) return r;
  if (r.code === 'not_found') return undefined;
  throw r;
}

/**
 * Threads listed moments ago, each read the same way, in the order of `ids`: one gone since the
 * listing is undefined. A provider that reads many threads in few requests (Gmail batch
 * requests) reads them all at once; otherwise they are read `concurrency` at a time.
 */
export async function readListedThreads(
  mb: Mailbox,
  ids: readonly string[],
  options: ThreadReadOptions,
  concurrency: number,
): Promise<Array<MailThread | undefined>> {
  const many = mb.getThreads;
  if (many !== undefined && ids.length > 1) return (await many.call(mb, ids, options)).map(goneAsNone);
  return mapBounded(ids, concurrency, (id) =>
    mb.getThread(id, options).catch((e: unknown) => {
      if (isMailError(e) && e.code === 'not_found') return undefined;
      throw e;
    }),
  );
}
