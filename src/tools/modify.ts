import { z } from 'zod';
import type { LabelChange } from '../providers/mailbox.js';
import type { AnyTool, ToolContext } from './common/define.js';
import { defineTool } from './common/define.js';
import { changeIntent, checkAppliedLabels, guardedAction } from './bulk/policy.js';
import { guardedPerThread } from './common/guarded.js';
import { guardedPerMessage } from './common/guarded-messages.js';
import type { MessageReport } from './common/guarded-messages.js';
import type { GuardedReport, ThreadWrite } from './common/guarded.js';
import type { GateIntent } from '../policy/gate.js';
import { labelRef, materialize, ref, resolveChange } from './common/label-changes.js';
import type { AppliedChange } from './common/label-changes.js';
import { usage } from './common/schemas.js';

const MAX_THREADS = 100;

const threadIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/, 'a thread id (letters, digits, "-" and "_") from search or get_thread');

const messageIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/, 'a message id (letters, digits, "-" and "_") from search or get_thread');

/** Exactly one of threadId / threadIds / messageIds, so a call never means "all" by omission. */
const targets = {
  threadId: threadIdSchema.optional(),
  threadIds: z.array(threadIdSchema).min(1).max(MAX_THREADS).optional(),
  messageIds: z.array(messageIdSchema).min(1).max(MAX_THREADS).optional(),
};

/** What the label tools' descriptions say of their targets (the fields themselves say nothing). */
const TARGETS_NOTE =
  'Exactly one of threadId, threadIds (whole threads) or messageIds (those messages); results per item.';

interface Targets {
  threadId?: string | undefined;
  threadIds?: string[] | undefined;
  messageIds?: string[] | undefined;
}

function oneOfTargets(v: Targets, ctx: z.RefinementCtx): void {
  const given = [v.threadId, v.threadIds, v.messageIds].filter((x) => x !== undefined).length;
  if (given !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['threadId'],
      message: `give exactly one of threadId, threadIds or messageIds (${given === 0 ? 'none was given' : 'several were given'})`,
    });
  }
}

/** Thread or message: each reported item names one. */
const itemId = { threadId: z.string().optional(), messageId: z.string().optional() };

const labelList = z.array(z.string().min(1).max(300)).max(50);

const report = {
  changed: z.array(
    z.object({
      ...itemId,
      messages: z.number().optional(),
      readBack: z.boolean().optional().describe('no answer came; a read-back shows the change'),
    }),
  ),
  failed: z.array(z.object({ ...itemId, code: z.string(), message: z.string() })),
  refused: z
    .array(z.object({ ...itemId, rule: z.string(), reason: z.string() }))
    .optional()
    .describe('refused by the write policy; untouched'),
  notAttempted: z.array(z.string()).describe('not started: cancelled, out of time or rate-limited'),
  remainingToday: z.number().optional().describe('moves out of the inbox left today (daily cap)'),
  usage,
};

function threadList(args: Targets): string[] {
  return [...new Set(args.threadId !== undefined ? [args.threadId] : (args.threadIds ?? []))];
}

/**
 * Threads through guardedPerThread, or messageIds through guardedPerMessage with the change
 * each message gets from its live labels (the same change, or restore's per-message one).
 */
function perTarget(
  ctx: ToolContext,
  args: Targets,
  intent: GateIntent,
  write: ThreadWrite,
  expect: LabelChange,
  forMessage: (labels: readonly string[]) => LabelChange = () => expect,
  prepare?: () => Promise<void>,
): Promise<GuardedReport | MessageReport> {
  if (args.messageIds !== undefined)
    return guardedPerMessage(ctx, [...new Set(args.messageIds)], intent, forMessage, prepare);
  return guardedPerThread(ctx, threadList(args), intent, write, expect, prepare);
}

export const modifyLabels = defineTool({
  name: 'modify_labels',
  title: 'Add or remove labels on threads',
  tier: 'manage',
  access: 'write',
  description:
    'Add and remove labels (names or ids) on every message of threads (threadId / threadIds) or on single messages (messageIds). Unknown names in add are created ("A/B" too); unknown ids are refused. Results per item (refused: with the write policy\'s rule).',
  input: z
    .strictObject({ ...targets, add: labelList.default([]), remove: labelList.default([]) })
    .superRefine(oneOfTargets),
  output: z.object({
    change: z.object({ add: z.array(labelRef), remove: z.array(labelRef) }),
    createdLabels: z.array(labelRef),
    ...report,
  }),
  async handle(ctx, args) {
    const resolved = await resolveChange(ctx.mailbox, args.add, args.remove, ctx.signal);
    // Judged from what the change means before anything exists: allowedLabels for the labels it
    // applies, then each item, and only then are missing labels created (when something is allowed).
    const intent = changeIntent('modify_labels', resolved);
    if (ctx.gate !== undefined) await checkAppliedLabels(await ctx.gate(), resolved, 'modify_labels');
    const change: LabelChange = {
      add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label.id] : [])),
      remove: resolved.remove.map((l) => l.id),
    };
    let applied: AppliedChange | undefined;
    const prepare = async (): Promise<void> => {
      applied = await materialize(ctx.mailbox, resolved, ctx.signal, ctx.gate);
      change.add.splice(0, change.add.length, ...applied.add.map((l) => l.id));
    };
    const result = await perTarget(
      ctx,
      args,
      intent,
      async (mailbox, threadId, o) => (await mailbox.modifyThread(threadId, change, ctx.signal, o)).length,
      change,
      () => change,
      prepare,
    );
    const shown = applied ?? {
      add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label] : [])),
      remove: resolved.remove,
      created: [],
    };
    return {
      change: { add: shown.add.map(ref(ctx.fence)), remove: shown.remove.map(ref(ctx.fence)) },
      createdLabels: shown.created.map(ref(ctx.fence)),
      ...result,
    };
  },
});

/** What the policy judges a fixed change as (archive, spam, mark read…). */
function labelIntent(tool: string, change: LabelChange): GateIntent {
  const action = guardedAction(change);
  return action === undefined
    ? { tool, action: 'label', actor: 'agent', addLabels: [], removeLabels: [] }
    : { tool, action, actor: 'agent' };
}

function fixedChange(name: string, title: string, change: LabelChange, description: string): AnyTool {
  return defineTool({
    name,
    title,
    tier: 'manage',
    access: 'write',
    description: `${description} ${TARGETS_NOTE}`,
    input: z.strictObject(targets).superRefine(oneOfTargets),
    output: z.object(report),
    handle: (ctx, args) =>
      perTarget(
        ctx,
        args,
        labelIntent(name, change),
        async (mailbox, threadId, o) => (await mailbox.modifyThread(threadId, change, ctx.signal, o)).length,
        change,
      ),
  });
}

export const archive = fixedChange(
  'archive',
  'Archive threads',
  { add: [], remove: ['INBOX'] },
  'Archive: remove INBOX (the mail stays in All Mail).',
);
export const markRead = fixedChange(
  'mark_read',
  'Mark threads read',
  { add: [], remove: ['UNREAD'] },
  'Mark mail read.',
);
export const markUnread = fixedChange(
  'mark_unread',
  'Mark threads unread',
  { add: ['UNREAD'], remove: [] },
  'Mark mail unread.',
);

export const trash = defineTool({
  name: 'trash',
  title: 'Move threads to trash',
  tier: 'manage',
  // Gmail empties the trash after 30 days, so this can lose mail if nobody untrashes it.
  access: 'destructive',
  description: `Move to the trash (untrash brings it back; Gmail deletes trashed mail after 30 days). Never deletes anything itself. ${TARGETS_NOTE}`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    perTarget(
      ctx,
      args,
      { tool: 'trash', action: 'trash', actor: 'agent' },
      async (mailbox, threadId, o) => {
        await mailbox.trashThread(threadId, ctx.signal, o);
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
  description: `Take mail out of the trash. ${TARGETS_NOTE}`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    perTarget(
      ctx,
      args,
      { tool: 'untrash', action: 'restore', actor: 'agent', fromLabelIds: ['TRASH'] },
      async (mailbox, threadId, o) => {
        await mailbox.untrashThread(threadId, ctx.signal, o);
        return undefined;
      },
      { add: [], remove: ['TRASH'] },
    ),
});

export const moveToSpam = fixedChange(
  'move_to_spam',
  'Move threads to spam',
  { add: ['SPAM'], remove: ['INBOX'] },
  'Move to spam (restore brings it back).',
);

export const restore = defineTool({
  name: 'restore',
  title: 'Restore threads to the inbox',
  tier: 'manage',
  access: 'write',
  description: `Bring mail back to the inbox from the archive, spam or trash. ${TARGETS_NOTE}`,
  input: z.strictObject(targets).superRefine(oneOfTargets),
  output: z.object(report),
  handle: (ctx, args) =>
    perTarget(
      ctx,
      args,
      { tool: 'restore', action: 'restore', actor: 'agent' },
      async (mailbox, threadId, o, labels) => {
        // Where it comes from, as the judging read saw it (no second read).
        if (labels.includes('TRASH')) await mailbox.untrashThread(threadId, ctx.signal, o);
        const remove = labels.includes('SPAM') ? ['SPAM'] : [];
        return (await mailbox.modifyThread(threadId, { add: ['INBOX'], remove }, ctx.signal, o)).length;
      },
      { add: ['INBOX'], remove: ['TRASH', 'SPAM'] },
      // A message comes back from where it is: Trash, Spam, or the archive.
      (labels) => ({ add: ['INBOX'], remove: ['TRASH', 'SPAM'].filter((l) => labels.includes(l)) }),
    ),
});
