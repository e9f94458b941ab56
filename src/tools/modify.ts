import { z } from 'zod';
import type { LabelChange } from '../providers/mailbox.js';
import type { AnyTool } from './define.js';
import { defineTool } from './define.js';
import { checkAppliedLabels } from './bulk/policy.js';
import { guardedPerThread, refusedSchema } from './guarded.js';
import type { GateIntent } from '../policy/gate.js';
import { labelRef, materialize, ref, resolveChange } from './labels.js';
import { usage } from './search.js';

const MAX_THREADS = 100;

const threadIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/, 'a thread id (letters, digits, "-" and "_") from search or get_thread');

/** Exactly one of threadId / threadIds, so a call never means "all threads" by omission. */
const targets = {
  threadId: threadIdSchema.optional(),
  threadIds: z.array(threadIdSchema).min(1).max(MAX_THREADS).optional().describe(`at most ${MAX_THREADS}`),
};

function oneOfTargets(
  v: { threadId?: string | undefined; threadIds?: string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((v.threadId === undefined) === (v.threadIds === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['threadId'],
      message: 'give exactly one of threadId or threadIds',
    });
  }
}

const labelList = z.array(z.string().min(1).max(300)).max(50);

const report = {
  changed: z.array(
    z.object({
      threadId: z.string(),
      messages: z.number().optional(),
      readBack: z
        .boolean()
        .optional()
        .describe('the answer never came; the thread read back afterwards shows the change'),
    }),
  ),
  failed: z.array(z.object({ threadId: z.string(), code: z.string(), message: z.string() })),
  refused: refusedSchema.optional(),
  notAttempted: z
    .array(z.string())
    .describe('not started: the call was cancelled, ran out of time, or Gmail rate-limited it'),
  remainingToday: z
    .number()
    .optional()
    .describe('agent moves out of the inbox left today under the daily cap'),
  usage,
};

function threadList(args: { threadId?: string | undefined; threadIds?: string[] | undefined }): string[] {
  return [...new Set(args.threadId !== undefined ? [args.threadId] : (args.threadIds ?? []))];
}

export const modifyLabels = defineTool({
  name: 'modify_labels',
  title: 'Add or remove labels on threads',
  tier: 'manage',
  access: 'write',
  description:
    'Add and remove labels (by name or id) on every message of one thread (threadId) or up to 100 (threadIds). Unknown names in add are created (nested "A/B" too); unknown ids are refused. Reports each thread as changed, refused by the write policy (with the rule), failed (with the error) or notAttempted (after cancellation).',
  input: z
    .strictObject({ ...targets, add: labelList.default([]), remove: labelList.default([]) })
    .superRefine(oneOfTargets),
  output: z.object({
    change: z.object({ add: z.array(labelRef), remove: z.array(labelRef) }),
    createdLabels: z.array(labelRef),
    ...report,
  }),
  async handle(ctx, args) {
    const ids = threadList(args);
    const resolved = await resolveChange(ctx.mailbox, args.add, args.remove, ctx.signal);
    // allowedLabels holds for the labels a move applies too, and before any label is created.
    if (ctx.gate !== undefined) await checkAppliedLabels(await ctx.gate(), resolved, 'modify_labels');
    const applied = await materialize(ctx.mailbox, resolved, ctx.signal, ctx.gate);
    const change: LabelChange = {
      add: applied.add.map((l) => l.id),
      remove: applied.remove.map((l) => l.id),
    };
    const result = await guardedPerThread(
      ctx,
      ids,
      labelIntent(
        'modify_labels',
        change,
        applied.add.map((l) => l.name),
        applied.remove.map((l) => l.name),
      ),
      async (mailbox, threadId) => (await mailbox.modifyThread(threadId, change)).length,
      change,
    );
    return {
      change: { add: applied.add.map(ref), remove: applied.remove.map(ref) },
      createdLabels: applied.created.map(ref),
      ...result,
    };
  },
});

/** A fixed change on threads: archive, mark read/unread. */
/**
 * What the policy judges a label change as: removing INBOX is archiving, adding SPAM or TRASH is
 * moving there, adding INBOX back is a restore; anything else is a label change.
 */
function labelIntent(tool: string, change: LabelChange, add: string[], remove: string[]): GateIntent {
  if (change.add.includes('TRASH')) return { tool, action: 'trash', actor: 'agent' };
  if (change.add.includes('SPAM')) return { tool, action: 'spam', actor: 'agent' };
  if (change.remove.includes('INBOX')) return { tool, action: 'archive', actor: 'agent' };
  if (change.add.includes('INBOX') || change.remove.includes('TRASH') || change.remove.includes('SPAM'))
    return { tool, action: 'restore', actor: 'agent' };
  return { tool, action: 'label', actor: 'agent', addLabels: add, removeLabels: remove };
}

function fixedChange(name: string, title: string, change: LabelChange, description: string): AnyTool {
  return defineTool({
    name,
    title,
    tier: 'manage',
    access: 'write',
    description: `${description} Takes threadId or threadIds (at most ${MAX_THREADS}); reports each thread as changed, refused by the write policy (with the rule), failed or notAttempted.`,
    input: z.strictObject(targets).superRefine(oneOfTargets),
    output: z.object(report),
    handle: (ctx, args) =>
      guardedPerThread(
        ctx,
        threadList(args),
        labelIntent(name, change, [], []),
        async (mailbox, threadId) => (await mailbox.modifyThread(threadId, change)).length,
        change,
      ),
  });
}

export const archive = fixedChange(
  'archive',
  'Archive threads',
  { add: [], remove: ['INBOX'] },
  'Archive threads: remove INBOX from every message (the mail stays in All Mail).',
);
export const markRead = fixedChange(
  'mark_read',
  'Mark threads read',
  { add: [], remove: ['UNREAD'] },
  'Mark every message of the threads read.',
);
export const markUnread = fixedChange(
  'mark_unread',
  'Mark threads unread',
  { add: ['UNREAD'], remove: [] },
  'Mark every message of the threads unread.',
);

export const trash = defineTool({
  name: 'trash',
  title: 'Move threads to trash',
  tier: 'manage',
  // Gmail empties the trash after 30 days, so this can lose mail if nobody untrashes it.
  access: 'destructive',
  description: `Move threads to the trash (untrash brings them back; Gmail deletes trashed mail after 30 days). Never deletes anything itself. Takes threadId or threadIds (at most ${MAX_THREADS}); reports each thread as changed, refused by the write policy (with the rule), failed or notAttempted.`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    guardedPerThread(
      ctx,
      threadList(args),
      { tool: 'trash', action: 'trash', actor: 'agent' },
      async (mailbox, threadId) => {
        await mailbox.trashThread(threadId);
        return undefined;
      },
      { add: ['TRASH'], remove: [] },
    ),
});

export const untrash = defineTool({
  name: 'untrash',
  title: 'Restore threads from trash',
  tier: 'manage',
  access: 'write',
  description: `Take threads out of the trash. Takes threadId or threadIds (at most ${MAX_THREADS}); reports each thread as changed, refused by the write policy (with the rule), failed or notAttempted.`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    guardedPerThread(
      ctx,
      threadList(args),
      { tool: 'untrash', action: 'restore', actor: 'agent', fromLabelIds: ['TRASH'] },
      async (mailbox, threadId) => {
        await mailbox.untrashThread(threadId);
        return undefined;
      },
      { add: [], remove: ['TRASH'] },
    ),
});

export const moveToSpam = fixedChange(
  'move_to_spam',
  'Move threads to spam',
  { add: ['SPAM'], remove: ['INBOX'] },
  'Move threads to the spam folder (restore brings them back).',
);

export const restore = defineTool({
  name: 'restore',
  title: 'Restore threads to the inbox',
  tier: 'manage',
  access: 'write',
  description: `Bring threads back to the inbox from the archive, spam or trash. Takes threadId or threadIds (at most ${MAX_THREADS}); reports each thread as changed, refused by the write policy (with the rule), failed or notAttempted.`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    guardedPerThread(
      ctx,
      threadList(args),
      { tool: 'restore', action: 'restore', actor: 'agent' },
      async (mailbox, threadId) => {
        const t = await mailbox.getThread(threadId, { format: 'metadata', metadataHeaders: ['From'] });
        const labels = new Set(t.messages.flatMap((m) => m.labelIds));
        if (labels.has('TRASH')) await mailbox.untrashThread(threadId);
        const remove = labels.has('SPAM') ? ['SPAM'] : [];
        return (await mailbox.modifyThread(threadId, { add: ['INBOX'], remove })).length;
      },
      { add: ['INBOX'], remove: ['TRASH', 'SPAM'] },
    ),
});
