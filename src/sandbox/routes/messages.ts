import { invalidArgument } from '../errors.js';
import type { StoredMessage } from '../model.js';
import type { MessageFormat } from '../payload.js';
import { attachmentResource, messageRef, messageResource } from '../payload.js';
import { listMessages } from '../search.js';
import { readModifyBody } from './params.js';
import type { Route, RouteContext } from './types.js';
import { noContent, ok } from './types.js';

const BATCH_LIMIT = 1000;
const FORMATS: readonly MessageFormat[] = ['full', 'metadata', 'minimal', 'raw'];

function message(ctx: RouteContext): StoredMessage {
  return ctx.mailbox.message(ctx.ids[0] ?? '');
}

/** trash adds TRASH and leaves every other label alone; untrash removes TRASH. */
function setTrash(ctx: RouteContext, trashed: boolean): StoredMessage {
  ctx.params.rejectUnknown([]);
  const msg = message(ctx);
  ctx.mailbox.changeLabels(msg, trashed ? ['TRASH'] : [], trashed ? [] : ['TRASH']);
  return msg;
}

export const messageRoutes: Route[] = [
  {
    verb: 'GET',
    pattern: /^messages$/,
    method: 'messages.list',
    handle: ({ mailbox, params, now }) => {
      const result = listMessages(mailbox, params.list(), now);
      return ok({
        ...(result.items.length > 0
          ? { messages: result.items.map((m) => ({ id: m.id, threadId: m.threadId })) }
          : {}),
        ...(result.nextPageToken === undefined ? {} : { nextPageToken: result.nextPageToken }),
        resultSizeEstimate: result.resultSizeEstimate,
      });
    },
  },
  {
    verb: 'POST',
    pattern: /^messages\/batchModify$/,
    method: 'messages.batchModify',
    handle: ({ mailbox, params, body }) => {
      params.rejectUnknown([]);
      const ids = (body as { ids?: unknown } | null)?.ids;
      if (!Array.isArray(ids) || !ids.every((x): x is string => typeof x === 'string')) {
        throw invalidArgument('Invalid value for ids');
      }
      if (ids.length === 0) throw invalidArgument('ids: at least one id is required');
      if (ids.length > BATCH_LIMIT)
        throw invalidArgument(`Too many ids: at most ${BATCH_LIMIT} per batchModify`);
      const { add, remove } = readModifyBody(body);
      mailbox.validateLabelChange(add, remove);
      // Gmail silently skips ids it does not know and still answers 204.
      for (const id of ids) {
        const msg = mailbox.messages.get(id);
        if (msg) mailbox.changeLabels(msg, add, remove);
      }
      return noContent();
    },
  },
  {
    verb: 'GET',
    pattern: /^messages\/([^/]+)$/,
    method: 'messages.get',
    handle: (ctx) => {
      ctx.params.rejectUnknown(['format', 'metadataHeaders']);
      const format = ctx.params.oneOf('format', FORMATS, 'full');
      return ok(messageResource(message(ctx), format, ctx.params.all('metadataHeaders')));
    },
  },
  {
    verb: 'POST',
    pattern: /^messages\/([^/]+)\/modify$/,
    method: 'messages.modify',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      const msg = message(ctx);
      const { add, remove } = readModifyBody(ctx.body);
      ctx.mailbox.validateLabelChange(add, remove);
      ctx.mailbox.changeLabels(msg, add, remove);
      return ok(messageRef(msg));
    },
  },
  {
    verb: 'POST',
    pattern: /^messages\/([^/]+)\/trash$/,
    method: 'messages.trash',
    handle: (ctx) => ok(messageRef(setTrash(ctx, true))),
  },
  {
    verb: 'POST',
    pattern: /^messages\/([^/]+)\/untrash$/,
    method: 'messages.untrash',
    handle: (ctx) => ok(messageRef(setTrash(ctx, false))),
  },
  {
    verb: 'GET',
    pattern: /^messages\/([^/]+)\/attachments\/([^/]+)$/,
    method: 'messages.attachments.get',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      return ok(attachmentResource(message(ctx), ctx.ids[1] ?? ''));
    },
  },
];
