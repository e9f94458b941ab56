import type { gmail_v1 } from '@googleapis/gmail';
import type { StoredThread } from '../model.js';
import type { MessageFormat } from '../payload.js';
import { messageRef, threadResource } from '../payload.js';
import { listThreads } from '../search.js';
import { readModifyBody } from './params.js';
import type { Route, RouteContext } from './types.js';
import { ok } from './types.js';

const FORMATS: readonly Exclude<MessageFormat, 'raw'>[] = ['full', 'metadata', 'minimal'];

function thread(ctx: RouteContext): StoredThread {
  return ctx.mailbox.thread(ctx.ids[0] ?? '');
}

/** What threads.modify / trash / untrash answer: the thread with each message's new labels. */
function changedThread(ctx: RouteContext, t: StoredThread): gmail_v1.Schema$Thread {
  return {
    id: t.id,
    historyId: String(ctx.mailbox.threadHistoryId(t)),
    messages: t.messages.map(messageRef),
  };
}

function changeAll(
  ctx: RouteContext,
  add: readonly string[],
  remove: readonly string[],
): gmail_v1.Schema$Thread {
  const t = thread(ctx);
  for (const msg of t.messages) ctx.mailbox.changeLabels(msg, add, remove);
  return changedThread(ctx, t);
}

export const threadRoutes: Route[] = [
  {
    verb: 'GET',
    pattern: /^threads$/,
    method: 'threads.list',
    handle: ({ mailbox, params, now, staleThreadIndex }) => {
      const result = listThreads(mailbox, params.list(), now, staleThreadIndex);
      const threads = result.items.map(({ thread: t, latest }) => ({
        id: t.id,
        snippet: latest.parsed.snippet,
        historyId: String(mailbox.threadHistoryId(t)),
      }));
      return ok({
        ...(threads.length > 0 ? { threads } : {}),
        ...(result.nextPageToken === undefined ? {} : { nextPageToken: result.nextPageToken }),
        resultSizeEstimate: result.resultSizeEstimate,
      });
    },
  },
  {
    verb: 'GET',
    pattern: /^threads\/([^/]+)$/,
    method: 'threads.get',
    handle: (ctx) => {
      ctx.params.rejectUnknown(['format', 'metadataHeaders']);
      const format = ctx.params.oneOf('format', FORMATS, 'full');
      return ok(threadResource(ctx.mailbox, thread(ctx), format, ctx.params.all('metadataHeaders')));
    },
  },
  {
    verb: 'POST',
    pattern: /^threads\/([^/]+)\/modify$/,
    method: 'threads.modify',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      thread(ctx);
      const { add, remove } = readModifyBody(ctx.body);
      ctx.mailbox.validateLabelChange(add, remove);
      return ok(changeAll(ctx, add, remove));
    },
  },
  {
    verb: 'POST',
    pattern: /^threads\/([^/]+)\/trash$/,
    method: 'threads.trash',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      return ok(changeAll(ctx, ['TRASH'], []));
    },
  },
  {
    verb: 'POST',
    pattern: /^threads\/([^/]+)\/untrash$/,
    method: 'threads.untrash',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      return ok(changeAll(ctx, [], ['TRASH']));
    },
  },
];
