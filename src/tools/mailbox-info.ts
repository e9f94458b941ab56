import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { defineTool } from './common/define.js';
import type { Label } from '../mail/types.js';
import { shownLabel } from '../mail/label-names.js';
import { labelMap, shownLabelRef } from './common/labels-cache.js';

const label = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['system', 'user']),
  messagesTotal: z.number().optional(),
  messagesUnread: z.number().optional(),
  threadsTotal: z.number().optional(),
  threadsUnread: z.number().optional(),
  color: z
    .object({ backgroundColor: z.string(), textColor: z.string() })
    .optional()
    .describe("the label's colour in Gmail (hex), when it has one"),
});

export const listLabels = defineTool({
  name: 'list_labels',
  title: 'List labels',
  tier: 'read',
  access: 'read',
  description:
    'List the mailbox labels (system and user) with ids and colours. counts: true adds message/thread totals and unread counts (one extra request per label).',
  input: z.strictObject({ counts: z.boolean().default(false) }),
  output: z.object({ labels: z.array(label) }),
  async handle(ctx, args) {
    // The person's own view of the labels: asked now, never a kept list.
    const labels = await ctx.mailbox.listLabels(ctx.signal, { fresh: true });
    const shown = (l: Label): Label => ({ ...l, ...shownLabelRef(ctx.fence, l) });
    if (!args.counts)
      return {
        labels: labels.map(({ id, name, type, color }) =>
          shown({ id, name, type, ...(color ? { color } : {}) }),
        ),
      };
    // Gmail's labels.list omits counts; labels.get has them.
    const detailed = await mapBounded(labels, 8, (l) => ctx.mailbox.getLabel(l.id, ctx.signal));
    return { labels: detailed.map(shown) };
  },
});

/** Server-made advice; the account name is the user's own configuration, not mail. */
function authservIdMissing(account: string): string {
  return `No trusted authserv-id is set for account "${account}", so sender authentication reads unchecked on every message. The user sets it by re-adding the account with --authserv-id ID, ID being the name the receiving server writes first in the topmost Authentication-Results header of mail it received; \`mailwarden check --account ${account}\` prints the exact command.`;
}

export const getProfile = defineTool({
  name: 'get_profile',
  title: 'Mailbox profile',
  tier: 'read',
  access: 'read',
  description:
    'Mailbox address, message and thread totals, historyId (the cursor for what_changed), provider, capabilities (history, filters, how mail is organised), the trusted authserv-id, account name, version.',
  input: z.strictObject({}),
  output: z.object({
    account: z.string(),
    provider: z.enum(['gmail', 'imap']),
    emailAddress: z.string(),
    messagesTotal: z.number(),
    threadsTotal: z.number(),
    historyId: z.string(),
    capabilities: z.object({
      history: z.boolean().describe('what_changed works'),
      filters: z.boolean(),
      organisation: z
        .enum(['labels', 'folders', 'folders+keywords', 'folders+label-folders'])
        .describe(
          'labels: many per message (Gmail); folders: one place per message, user labels as keywords or label folders',
        ),
      flatLabels: z.boolean().optional().describe('true: labels cannot nest, a name with "/" is refused'),
    }),
    authservId: z
      .string()
      .optional()
      .describe(
        'only the topmost Authentication-Results is read, and only when its authserv-id is this one; absent: every message is unchecked',
      ),
    authservIdMissing: z
      .string()
      .optional()
      .describe('when no authserv-id is set: what that means and how to set it'),
    serverVersion: z.string(),
  }),
  async handle(ctx) {
    const p = await ctx.mailbox.getProfile(ctx.signal);
    return {
      account: ctx.mailbox.account,
      provider: ctx.mailbox.provider,
      emailAddress: p.emailAddress,
      messagesTotal: p.messagesTotal,
      threadsTotal: p.threadsTotal,
      historyId: p.historyId,
      capabilities: { ...ctx.mailbox.capabilities },
      ...(ctx.mailbox.trustedAuthservId === undefined
        ? { authservIdMissing: authservIdMissing(ctx.mailbox.account) }
        : { authservId: ctx.mailbox.trustedAuthservId }),
      serverVersion: ctx.serverVersion,
    };
  },
});

const change = z.object({ messageId: z.string(), threadId: z.string(), labels: z.array(z.string()) });

export const whatChanged = defineTool({
  name: 'what_changed',
  title: 'What changed since a cursor',
  tier: 'read',
  access: 'read',
  description:
    'Changes since a historyId (from get_profile or the last what_changed): messages added/deleted, labels added/removed per message, and nextHistoryId. A historyId too old for the server is an invalid_input error, never an empty page.',
  input: z.strictObject({
    historyId: z
      .string()
      .max(8000)
      .regex(
        /^(\d+|i[A-Za-z0-9_-]+)$/,
        'a historyId from get_profile or what_changed (Gmail: decimal; IMAP: i…)',
      ),
    pageToken: z.string().max(500).optional(),
  }),
  output: z.object({
    added: z.array(change),
    deleted: z.array(z.object({ messageId: z.string(), threadId: z.string() })),
    labelsAdded: z.array(change),
    labelsRemoved: z.array(change),
    nextHistoryId: z.string(),
    nextPageToken: z.string().optional(),
  }),
  async handle(ctx, args) {
    const [page, labels] = await Promise.all([
      ctx.mailbox.history(args.historyId, {
        signal: ctx.signal,
        ...(args.pageToken ? { pageToken: args.pageToken } : {}),
      }),
      labelMap(ctx.mailbox, ctx.clock.now(), ctx.signal),
    ]);
    const names = (ids: string[]) =>
      ids.map((id) => shownLabel(labels.get(id), id, (n) => ctx.fence.wrap(n)));
    const conv = (c: { messageId: string; threadId: string; labelIds: string[] }) => ({
      messageId: c.messageId,
      threadId: c.threadId,
      labels: names(c.labelIds),
    });
    return {
      added: page.added.map(conv),
      deleted: page.deleted,
      labelsAdded: page.labelsAdded.map(conv),
      labelsRemoved: page.labelsRemoved.map(conv),
      nextHistoryId: page.historyId,
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    };
  },
});
