import { headerValue } from '../../mail/headers.js';
import { invalidArgument } from '../errors.js';
import { normalizeMessageId, parentMessageIds, parseMessage } from '../message.js';
import type { UserMailbox } from '../model.js';
import type { Route } from './types.js';
import { ok } from './types.js';

/**
 * drafts.create, the one drafts method the sandbox serves (mailwarden's opt-in drafts tier).
 * drafts.send stays refused in routes/table.ts; there is no drafts.list/get/update/delete.
 */

/** Reply and forward prefixes Gmail looks past when it compares subjects. */
const PREFIX = /^\s*(?:re|fwd?|aw|sv)(?:\[\d+\])?\s*:\s*/i;

function baseSubject(subject: string): string {
  let s = subject;
  while (PREFIX.test(s)) s = s.replace(PREFIX, '');
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * Gmail's documented rule for joining a thread ("Managing threads"): the request names the
 * threadId, the References/In-Reply-To headers point into it, and the Subject matches. A draft
 * that fails any of them starts a thread of its own, which is what a client with wrong
 * threading headers would see at Google.
 */
function joinsThread(mailbox: UserMailbox, threadId: string, raw: Uint8Array): boolean {
  const thread = mailbox.thread(threadId);
  const parsed = parseMessage(raw, 0);
  const inThread = new Set(thread.messages.map((m) => normalizeMessageId(m.parsed.facts.rfc822MessageId)));
  const refs = parentMessageIds(parsed.headers).map(normalizeMessageId);
  if (!refs.some((id) => inThread.has(id))) return false;
  const subject = baseSubject(headerValue(parsed.headers, 'Subject') ?? '');
  return thread.messages.some((m) => baseSubject(m.parsed.facts.subject) === subject);
}

/** Gmail draft ids are "r" and a decimal number; deriving it from the message id needs no table. */
const draftIdOf = (messageId: string): string => `r${BigInt(`0x${messageId}`).toString()}`;

export const draftRoutes: Route[] = [
  {
    verb: 'POST',
    pattern: /^drafts$/,
    method: 'drafts.create',
    handle: ({ mailbox, params, body, now }) => {
      params.rejectUnknown([]);
      const message = (body as { message?: { raw?: unknown; threadId?: unknown } } | null)?.message;
      const raw = message?.raw;
      if (typeof raw !== 'string' || raw === '') throw invalidArgument('Missing draft message');
      if (!/^[A-Za-z0-9_=+/-]+$/.test(raw)) throw invalidArgument('Invalid value for ByteString: raw');
      const bytes = new Uint8Array(Buffer.from(raw, 'base64'));
      const threadId = message?.threadId;
      if (threadId !== undefined && typeof threadId !== 'string')
        throw invalidArgument('Invalid value for threadId');
      const join = threadId !== undefined && threadId !== '' && joinsThread(mailbox, threadId, bytes);
      const stored = mailbox.addMessage(bytes, ['DRAFT'], now, {
        placement: join ? { threadId: threadId } : 'new-thread',
        record: true,
      });
      return ok({
        id: draftIdOf(stored.id),
        message: { id: stored.id, threadId: stored.threadId, labelIds: [...stored.labelIds] },
      });
    },
  },
];
