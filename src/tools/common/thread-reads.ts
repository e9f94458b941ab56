import { mapBounded } from '../../mail/async.js';
import { isMailError } from '../../mail/errors.js';
import type { MailError } from '../../mail/errors.js';
import type { MailThread } from '../../mail/types.js';
import type { Mailbox, ThreadReadOptions } from '../../providers/mailbox.js';

/** What becomes of a listed thread that is gone when read: left out, or the call's error. */
export type GoneThread = 'skip' | 'fail';

export interface ListedReadOptions {
  /** Threads read at once when the provider reads them one request each. */
  concurrency: number;
  /**
   * A thread gone since the listing (not_found): 'skip' leaves it out (undefined in its place),
   * 'fail' fails the call as any other failed read does. Default 'skip'.
   */
  gone?: GoneThread;
  /**
   * Runs on each thread (undefined where one was left out) in its read's slot, right after it is
   * read, so the bound on reads at once holds and nothing waits for the slowest read of all.
   */
  then?: (t: MailThread | undefined) => Promise<MailThread | undefined>;
}

/** A read's answer as the call takes it: the thread, undefined where one gone is left out, or thrown. */
function settle(r: MailThread | MailError | undefined, gone: GoneThread): MailThread | undefined {
  if (r === undefined || !isMailError(r)) return r;
  if (gone === 'skip' && r.code === 'not_found') return undefined;
  throw r;
}

/**
 * Threads listed moments ago, each read the same way, in the order of `ids`. A provider that
 * reads many threads in few requests (Gmail batch requests) reads them all at once; otherwise
 * they are read `concurrency` at a time. The one place search, triage and new mail read their
 * listed threads, so the batched and the one-by-one reads cannot drift apart.
 */
export async function readListedThreads(
  mb: Mailbox,
  ids: readonly string[],
  options: ThreadReadOptions,
  read: ListedReadOptions,
): Promise<Array<MailThread | undefined>> {
  const gone = read.gone ?? 'skip';
  const many = mb.getThreads;
  const batched = many !== undefined && ids.length > 1 ? await many.call(mb, ids, options) : undefined;
  const one = async (id: string): Promise<MailThread | undefined> => {
    try {
      return await mb.getThread(id, options);
    } catch (e) {
      if (isMailError(e)) return settle(e, gone);
      throw e;
    }
  };
  return mapBounded(ids, read.concurrency, async (id, i) => {
    const t = batched === undefined ? await one(id) : settle(batched[i], gone);
    return read.then === undefined ? t : read.then(t);
  });
}
