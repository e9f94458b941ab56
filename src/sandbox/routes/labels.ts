import { invalidArgument } from '../errors.js';
import { labelResource, readLabelInput } from '../labels.js';
import type { LabelInput } from '../labels.js';
import type { Route, RouteContext } from './types.js';
import { noContent, ok } from './types.js';

function labelInput(ctx: RouteContext): LabelInput {
  ctx.params.rejectUnknown([]);
  const input = readLabelInput(ctx.body);
  if (typeof input === 'string') throw invalidArgument(input);
  return input;
}

const id = (ctx: RouteContext): string => ctx.ids[0] ?? '';

export const labelRoutes: Route[] = [
  {
    verb: 'GET',
    pattern: /^profile$/,
    method: 'getProfile',
    handle: ({ mailbox, params }) => {
      params.rejectUnknown([]);
      return ok({
        emailAddress: mailbox.email,
        messagesTotal: mailbox.messages.size,
        threadsTotal: mailbox.threads.size,
        historyId: String(mailbox.history.historyId),
      });
    },
  },
  {
    verb: 'GET',
    pattern: /^labels$/,
    method: 'labels.list',
    handle: ({ mailbox, params }) => {
      params.rejectUnknown([]);
      return ok({ labels: [...mailbox.labels.values()].map((l) => labelResource(l)) });
    },
  },
  {
    verb: 'GET',
    pattern: /^labels\/([^/]+)$/,
    method: 'labels.get',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      const label = ctx.mailbox.label(id(ctx));
      return ok(labelResource(label, ctx.mailbox.labelCounts(label.id)));
    },
  },
  {
    verb: 'POST',
    pattern: /^labels$/,
    method: 'labels.create',
    handle: (ctx) => ok(labelResource(ctx.mailbox.createLabel(labelInput(ctx)))),
  },
  {
    verb: 'PATCH',
    pattern: /^labels\/([^/]+)$/,
    method: 'labels.patch',
    handle: (ctx) => ok(labelResource(ctx.mailbox.updateLabel(id(ctx), labelInput(ctx), false))),
  },
  {
    verb: 'PUT',
    pattern: /^labels\/([^/]+)$/,
    method: 'labels.update',
    handle: (ctx) => ok(labelResource(ctx.mailbox.updateLabel(id(ctx), labelInput(ctx), true))),
  },
  {
    verb: 'DELETE',
    pattern: /^labels\/([^/]+)$/,
    method: 'labels.delete',
    handle: (ctx) => {
      ctx.params.rejectUnknown([]);
      ctx.mailbox.deleteLabel(id(ctx));
      return noContent();
    },
  },
];
