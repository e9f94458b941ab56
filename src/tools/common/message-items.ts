import { mapBounded } from '../../mail/async.js';
import { isMailError } from '../../mail/errors.js';
import { headerValue, parseAddressList } from '../../mail/headers.js';
import { placeOf } from '../../mail/place.js';
import type { MailMessage } from '../../mail/types.js';
import type { GateItem } from '../../policy/gate.js';
import { readConcurrency } from './define.js';
import type { ToolContext } from './define.js';
import { placesOf } from './guarded.js';

/* Messages as the write policy judges them: shared by the organise tools, sender rules and undo. */

const READS = 8;

/** One message as the policy sees it: its live labels and its own From. */
export function messageItem(m: MailMessage): GateItem {
  const from = headerValue(m.headers, 'From') ?? '';
  const sender = parseAddressList(from)[0]?.address;
  const subject = headerValue(m.headers, 'Subject');
  const messageId = headerValue(m.headers, 'Message-ID');
  return {
    id: m.id,
    kind: 'message',
    messageCount: 1,
    sender: sender === undefined || sender === '' ? undefined : sender,
    senderHeader: from,
    ...(subject === undefined ? {} : { subject }),
    ...(messageId === undefined ? {} : { messageId }),
    labelIds: m.labelIds,
    place: placeOf(m),
    ...placesOf([m]),
  };
}

/**
 * Messages as the policy sees them, from one metadata read per thread: live labels and each
 * message's own From. `threadOf` tells each message's thread; one not in it is looked up first
 * (and added). A message no longer in its thread was deleted since it was listed: it is left out.
 * `readError` is the first read that failed; the messages it hid are left out too.
 */
export async function readMessageItems(
  ctx: ToolContext,
  ids: readonly string[],
  threadOf: Map<string, string>,
): Promise<{ items: GateItem[]; readError?: { code: string; message: string } }> {
  const found = new Map<string, MailMessage>();
  let readError: { code: string; message: string } | undefined;
  const failed = (e: unknown): void => {
    readError ??= isMailError(e)
      ? { code: e.code, message: e.message }
      : { code: 'internal_error', message: String(e) };
  };
  const unknown = ids.filter((id) => !threadOf.has(id));
  await mapBounded(unknown, readConcurrency(ctx.mailbox, READS), async (id) => {
    try {
      threadOf.set(id, (await ctx.mailbox.getMessageLabels(id, ctx.signal)).threadId);
    } catch (e) {
      failed(e);
    }
  });
  const threads = [...new Set(ids.map((id) => threadOf.get(id) ?? ''))].filter((t) => t !== '');
  await mapBounded(threads, readConcurrency(ctx.mailbox, READS), async (threadId) => {
    try {
      const t = await ctx.mailbox.getThread(threadId, {
        format: 'metadata',
        metadataHeaders: ['From', 'Subject', 'Message-ID'],
        signal: ctx.signal,
      });
      for (const m of t.messages) found.set(m.id, m);
    } catch (e) {
      failed(e);
    }
  });
  const items = ids.flatMap((id) => {
    const m = found.get(id);
    return m === undefined ? [] : [messageItem(m)];
  });
  return { items, ...(readError === undefined ? {} : { readError }) };
}
