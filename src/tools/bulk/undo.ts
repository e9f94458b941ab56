import { z } from 'zod';
import { MAX_PLAN_MESSAGES, checkUndoPlan } from '../../mail/bulk-plan.js';
import { OPAQUE, defineTool } from '../common/define.js';
import { usage } from '../common/schemas.js';
import { chunkReport, nothingChanged, runChunks, runFields } from './chunks.js';
import {
  bulkRefusedSchema,
  guardedAction,
  moveOf,
  policyChunks,
  preflightMove,
  refusedEverything,
} from './policy.js';

const gmailId = (what: string) =>
  z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, `a Gmail ${what} id (letters, digits, "-" and "_")`);

/**
 * The inverse of one bulk_modify run, as bulk_modify returns it with undo: true. Messages with
 * the same inverse share a group, so a plan for thousands of messages stays a few groups long
 * and undo costs one batchModify per 1,000 of them.
 */
export const undoPlanSchema = z.strictObject({
  kind: z.literal('mailwarden.undo'),
  version: z.literal(1),
  account: z.string().min(1).max(200),
  createdAt: z.string().max(40),
  query: z.string().max(2000),
  labels: z.record(z.string(), z.string()).describe('label id → name when the plan was made (informational)'),
  groups: z
    .array(
      z.strictObject({
        add: z.array(gmailId('label')).max(50).describe('labels these messages lost and get back'),
        remove: z.array(gmailId('label')).max(50).describe('labels these messages gained and lose'),
        messageIds: z.array(gmailId('message')).min(1).max(MAX_PLAN_MESSAGES),
      }),
    )
    .max(1000),
});

export const undoBulkModify = defineTool({
  name: 'undo_bulk_modify',
  title: 'Undo a bulk label change',
  tier: 'manage',
  access: 'write',
  description:
    'Replay the undoPlan of a bulk_modify (undo: true): each message regains exactly the labels it lost and loses those it gained. The plan is checked first (shape, account, labels that still exist); a bad plan changes nothing. Reports per chunk like bulk_modify.',
  // A model hands the plan back as it got it, so its shape is advertised as one opaque object
  // (src/mcp/schema-compact.ts); the full schema still checks it here.
  input: z.strictObject({
    plan: undoPlanSchema.meta({ description: "bulk_modify's undoPlan, unchanged", [OPAQUE]: true }),
  }),
  output: z.object({
    account: z.string(),
    groups: z.number(),
    messages: z.number(),
    submitted: z.number(),
    failed: z.number(),
    ...runFields,
    notAttempted: z.number(),
    cancelled: z.boolean(),
    chunks: z.array(chunkReport),
    refused: bulkRefusedSchema.optional(),
    remainingToday: z
      .number()
      .optional()
      .describe('agent moves out of the inbox left today under the daily cap (a plan that moves mail out)'),
    usage,
  }),
  async handle(ctx, args) {
    const before = ctx.mailbox.usage();
    const { plan } = args;
    const labels = await ctx.mailbox.listLabels(ctx.signal);
    checkUndoPlan(plan, ctx.mailbox.account, new Set(labels.map((l) => l.id)));
    // A plan is the model's input like any other: one that takes mail out of the inbox (the undo
    // of a restore) is held to the write policy as bulk_modify's moves are.
    const moving = plan.groups
      .filter((g) => moveOf(g) !== undefined)
      .reduce((n, g) => n + g.messageIds.length, 0);
    // A restore in a plan (the undo of an archive) is judged too: from where each message is.
    const judged = plan.groups.some((g) => guardedAction(g) !== undefined);
    const gate = ctx.gate !== undefined && judged ? await ctx.gate() : undefined;
    const held =
      gate === undefined || moving === 0
        ? undefined
        : await preflightMove(ctx, gate, 'undo_bulk_modify', moving, undefined);
    const policed =
      gate === undefined
        ? undefined
        : policyChunks(ctx, gate, 'undo_bulk_modify', [], held?.capLifted ?? false);
    const run = await runChunks(
      ctx,
      plan.groups.map((g) => ({ ids: g.messageIds, change: { add: g.add, remove: g.remove } })),
      policed?.guard,
    );
    const refused = policed?.refused();
    if (refused !== undefined && run.submitted === 0 && run.failed === 0) throw refusedEverything(refused);
    const none = nothingChanged(run);
    if (none !== undefined) throw none;
    const remainingToday =
      gate === undefined || policed === undefined || moving === 0
        ? null
        : (policed.remainingToday() ?? (await gate.remaining()));
    const after = ctx.mailbox.usage();
    return {
      account: plan.account,
      groups: plan.groups.length,
      messages: plan.groups.reduce((n, g) => n + g.messageIds.length, 0),
      submitted: run.submitted,
      failed: run.failed,
      unknown: run.unknown,
      ...(run.rateLimited === undefined ? {} : { rateLimited: run.rateLimited }),
      notAttempted: run.notAttempted,
      cancelled: run.cancelled,
      chunks: run.chunks,
      ...(refused === undefined ? {} : { refused }),
      ...(remainingToday === null ? {} : { remainingToday }),
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    };
  },
});
