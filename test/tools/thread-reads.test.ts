import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import type { MailThread } from '../../src/mail/types.js';
import type { Mailbox } from '../../src/providers/mailbox.js';
import { readListedThreads } from '../../src/tools/common/thread-reads.js';

/*
 * The one reader of listed threads (search, triage, new mail): the same answers whether the
 * provider reads threads in batches or one request each.
 */

const thread = (id: string): MailThread => ({ id, messages: [] });

/** A mailbox whose thread `gone` was deleted since the listing and whose `broken` fails to read. */
function mailbox(batches: boolean, gone: string, broken?: string): Mailbox & { requests: number } {
  const answer = (id: string): MailThread | MailError =>
    id === gone
      ? new MailError('not_found', `thread ${id} not found`)
      : id === broken
        ? new MailError('upstream_unavailable', 'the server failed')
        : thread(id);
  const mb = {
    requests: 0,
    async getThread(id: string) {
      mb.requests += 1;
      const r = answer(id);
      if (r instanceof MailError) throw r;
      return r;
    },
    ...(batches
      ? {
          async getThreads(ids: readonly string[]) {
            mb.requests += 1;
            return ids.map(answer);
          },
        }
      : {}),
  };
  return mb as unknown as Mailbox & { requests: number };
}

describe.each([
  ['in one batch', true],
  ['one request each', false],
])('listed threads read %s', (_how, batches) => {
  it('a thread gone since the listing is left out in its place; the rest keep their order', async () => {
    const mb = mailbox(batches, 't2');
    const got = await readListedThreads(mb, ['t1', 't2', 't3'], { format: 'metadata' }, { concurrency: 2 });
    expect(got.map((t) => t?.id)).toEqual(['t1', undefined, 't3']);
    expect(mb.requests).toBe(batches ? 1 : 3);
  });

  it('with gone: "fail", a thread gone since the listing fails the call with not_found', async () => {
    const mb = mailbox(batches, 't2');
    const e = await readListedThreads(
      mb,
      ['t1', 't2', 't3'],
      { format: 'metadata' },
      { concurrency: 2, gone: 'fail' },
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MailError);
    expect((e as MailError).code).toBe('not_found');
  });

  it('any other failed read fails the call with its own error, gone or not', async () => {
    const mb = mailbox(batches, 'none', 't3');
    const e = await readListedThreads(
      mb,
      ['t1', 't2', 't3'],
      { format: 'metadata' },
      { concurrency: 2 },
    ).catch((x: unknown) => x);
    expect((e as MailError).code).toBe('upstream_unavailable');
  });

  it('`then` sees each thread (undefined where one is gone) and its answer takes the thread’s place', async () => {
    const mb = mailbox(batches, 't2');
    const seen: Array<string | undefined> = [];
    const got = await readListedThreads(
      mb,
      ['t1', 't2', 't3'],
      { format: 'metadata' },
      {
        concurrency: 1,
        then: async (t) => {
          seen.push(t?.id);
          return t === undefined ? undefined : thread(`${t.id}-whole`);
        },
      },
    );
    expect(seen).toEqual(['t1', undefined, 't3']);
    expect(got.map((t) => t?.id)).toEqual(['t1-whole', undefined, 't3-whole']);
  });
});
