import { z } from 'zod';
import { mapBounded } from '../../mail/async.js';
import { buildUndoPlan, changeKey, restrictPlan } from '../../mail/bulk-plan.js';
import type { UndoPlan } from '../../mail/bulk-plan.js';
import { invalidInput } from '../../mail/errors.js';
import { labelStatePredicates, parseQuery } from '../../mail/query/index.js';
import type { MessageRef } from '../../mail/types.js';
import type { LabelChange } from '../../providers/mailbox.js';
import type { ToolContext } from '../common/define.js';
import { confirmChange, defineTool } from '../common/define.js';
import { labelRef, materialize, ref, resolveChange } from '../common/label-changes.js';
import type { AppliedChange } from '../common/label-changes.js';
import { mailReaders } from '../common/lazy.js';
import { usage } from '../common/schemas.js';
import { chunkReport, nothingChanged, runChunks, runFields } from './chunks.js';
import { listMessages } from './listing.js';
import {
  bulkMoveOut,
  bulkRefusedSchema,
  changeIntent,
  checkAppliedLabels,
  checkChangeAllowed,
  policyChunks,
  preflightMove,
  refusedEverything,
} from './policy.js';
import { previewsOf } from './preview-tokens.js';
import { preWriteReads } from './reads.js';
import { undoPlanSchema } from './undo.js';
import { agentLabelOf } from '../common/guarded.js';
import { ID_SAMPLE, verifiedSchema, verifyChange } from './verify.js';

const MAX_MESSAGES = 100_000;
/** Writes to more messages than this ask the human first (MAILWARDEN_CONFIRM). */
const CONFIRM_OVER = 1000;
const SAMPLES = 3;

const labelList = z.array(z.string().min(1).max(300)).max(50);

const sample = z.object({
  messageId: z.string(),
  threadId: z.string(),
  subject: z.string().describe('fenced mail text'),
  from: z.string().describe('fenced mail text'),
  date: z.string(),
});

/** A few matched messages to show a person before they confirm (3 thread reads, 30 units). */
async function samplesOf(
  ctx: ToolContext,
  refs: readonly MessageRef[],
): Promise<Array<z.input<typeof sample>>> {
  const { dateOf, header } = await mailReaders();
  const picks: MessageRef[] = [];
  for (const r of refs) {
    if (picks.length === SAMPLES) break;
    if (!picks.some((p) => p.threadId === r.threadId)) picks.push(r);
  }
  const out = await mapBounded(picks, SAMPLES, async (r) => {
    try {
      const t = await ctx.mailbox.getThread(r.threadId, {
        format: 'metadata',
        metadataHeaders: ['Subject', 'From'],
        signal: ctx.signal,
      });
      const m = t.messages.find((x) => x.id === r.id) ?? t.messages[0];
      if (m === undefined) return undefined;
      return {
        messageId: r.id,
        threadId: r.threadId,
        subject: ctx.fence.wrap(header(m.headers, 'Subject')),
        from: ctx.fence.wrap(header(m.headers, 'From')),
        date: dateOf(m),
      };
    } catch {
      // A sample is an illustration; one that vanished since the listing is simply not shown.
      return undefined;
    }
  });
  return out.filter((s) => s !== undefined);
}

export const bulkModify = defineTool({
  name: 'bulk_modify',
  title: 'Change labels on every message matching a query',
  tier: 'manage',
  access: 'write',
  description:
    'Add/remove labels (names or ids; new names are created) on every MESSAGE matching a Gmail query, 1,000 a chunk, reported per chunk. dryRun first: counts, samples and a single-use previewToken (30 min) pinning the exact set. crossCheck: re-check read-state/location/category on live labels, leaving contradicted messages alone (unverifiedPredicates: what rests on the index alone). undo: also return an undoPlan. verify: read labels back. Inbox moves pass the write policy (daily cap: remainingToday); added labels must be in allowedLabels (policy.json).',
  input: z.strictObject({
    query: z.string().trim().min(1).max(2000).describe('Gmail search query'),
    add: labelList.default([]),
    remove: labelList.default([]),
    dryRun: z.boolean().default(false),
    previewToken: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('from a dryRun with the same query, add and remove'),
    crossCheck: z.boolean().default(false),
    undo: z.boolean().default(false),
    verify: z.boolean().default(false),
    maxMessages: z
      .number()
      .int()
      .min(1)
      .max(MAX_MESSAGES)
      .default(5000)
      .describe('refuse (before writing) if more match'),
  }),
  output: z.object({
    query: z.string(),
    dryRun: z.boolean(),
    confirmation: z
      .enum(['confirmed', 'not_required', 'unavailable'])
      .optional()
      .describe(`writes to over ${CONFIRM_OVER} messages ask the human first`),
    change: z.object({ add: z.array(labelRef), remove: z.array(labelRef) }),
    labelsToCreate: z.array(z.string()).describe('dry run: names the write would create'),
    createdLabels: z.array(labelRef),
    matched: z.object({ messages: z.number(), threads: z.number() }),
    unverifiedPredicates: z
      .array(z.string())
      .describe('label-state predicates answered by the search index only; empty: nothing to doubt'),
    crossCheck: z
      .object({
        predicates: z.array(z.string()),
        contradicted: z.number(),
        contradictedIds: z.array(z.string()),
      })
      .optional(),
    pinned: z.number().optional().describe('messages the previewToken pinned'),
    newMatches: z.number().optional().describe('match now but were not pinned: left alone'),
    noLongerMatching: z.number().optional().describe('pinned but no longer match: left alone'),
    changedWhileReading: z
      .number()
      .optional()
      .describe('undo: stopped matching while labels were read; left alone'),
    toWrite: z.number(),
    previewToken: z.string().optional(),
    previewExpiresAt: z.string().optional(),
    samples: z.array(sample).optional(),
    submitted: z.number().describe('ids in chunks Gmail accepted (it ignores unknown ids)'),
    failed: z.number(),
    ...runFields,
    notAttempted: z.number(),
    cancelled: z.boolean(),
    chunks: z.array(chunkReport),
    verified: verifiedSchema.optional(),
    undoPlan: undoPlanSchema.optional(),
    refused: bulkRefusedSchema.optional(),
    remainingToday: z
      .number()
      .optional()
      .describe('agent moves out of the inbox left today under the daily cap (a move out only)'),
    usage,
  }),
  async handle(ctx, args) {
    const before = ctx.mailbox.usage();
    const { query } = args;
    const node = parseQuery(query);
    if (args.dryRun && args.previewToken !== undefined) {
      throw invalidInput('previewToken', 'a dryRun issues a token; send it with the write that follows');
    }
    const scope = { account: ctx.mailbox.account, query, change: changeKey(args.add, args.remove) };
    const previews = previewsOf(ctx);
    const pinned =
      args.previewToken === undefined
        ? undefined
        : await previews.check(args.previewToken, scope, ctx.clock.now());
    // A pinned set was already held to its cap; the listing only needs to find it again.
    const limit = pinned === undefined ? args.maxMessages : MAX_MESSAGES;
    // Both are reads, so they overlap: one round trip less on every bulk run. Nothing is
    // written before both have succeeded.
    const [resolved, listing] = await Promise.all([
      resolveChange(ctx.mailbox, args.add, args.remove, ctx.signal),
      listMessages(ctx.mailbox, query, { limit, signal: ctx.signal }),
    ]);
    if (listing.overLimit) {
      throw invalidInput(
        'maxMessages',
        `the query matches more than ${limit} messages (listing stopped at ${listing.refs.length}; Gmail estimates ${listing.estimate ?? 'nothing'}); nothing was changed. Narrow the query or raise maxMessages (at most ${MAX_MESSAGES}).`,
      );
    }
    const matched = pinned === undefined ? listing.refs : listing.refs.filter((r) => pinned.has(r.id));
    const existingIds = [
      ...resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label.id] : [])),
      ...resolved.remove.map((l) => l.id),
    ];
    const reads = await preWriteReads(
      ctx.mailbox,
      query,
      node,
      matched,
      { crossCheck: args.crossCheck, undoLabels: args.undo && !args.dryRun ? existingIds : [] },
      ctx.signal,
    );
    const targetIds = reads.target.map((r) => r.id);
    const common = {
      query,
      dryRun: args.dryRun,
      matched: { messages: listing.refs.length, threads: new Set(listing.refs.map((r) => r.threadId)).size },
      // crossCheck narrows what is written to messages whose live labels agree; it cannot find
      // what the index left out, so the predicates stay taken on the index's word.
      unverifiedPredicates: labelStatePredicates(node),
      ...(args.crossCheck
        ? {
            crossCheck: {
              predicates: labelStatePredicates(node),
              contradicted: reads.contradicted.length,
              contradictedIds: reads.contradicted.slice(0, ID_SAMPLE),
            },
          }
        : {}),
      ...(pinned === undefined
        ? {}
        : {
            pinned: pinned.size,
            newMatches: listing.refs.length - matched.length,
            noLongerMatching: pinned.size - matched.length,
          }),
      ...(args.undo && !args.dryRun ? { changedWhileReading: reads.changedWhileReading.length } : {}),
      toWrite: targetIds.length,
    };
    // A move out of the inbox is held to the write policy; a label it applies, whatever the move.
    const move = bulkMoveOut(resolved);
    // Restores are judged message by message too (where each message is: src/mail/place.ts).
    const intent = changeIntent('bulk_modify', resolved);
    const judged = move !== undefined || intent.action === 'restore';
    const gate = ctx.gate === undefined ? undefined : await ctx.gate();
    if (gate !== undefined) await checkAppliedLabels(gate, resolved, 'bulk_modify');
    if (gate !== undefined) await checkChangeAllowed(gate, intent);
    const usageNow = () => {
      const after = ctx.mailbox.usage();
      return { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits };
    };

    if (args.dryRun) {
      // A token pins a set to write; an empty set has nothing to pin.
      const issued =
        targetIds.length === 0 ? undefined : await previews.issue(scope, targetIds, ctx.clock.now());
      const left = gate !== undefined && move !== undefined ? await gate.remaining() : null;
      return {
        ...(left === null ? {} : { remainingToday: left }),
        ...common,
        change: {
          add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [ref(ctx.fence)(w.label)] : [])),
          remove: resolved.remove.map(ref(ctx.fence)),
        },
        labelsToCreate: resolved.add.flatMap((w) => (w.kind === 'create' ? [w.name] : [])),
        createdLabels: [],
        ...(issued === undefined
          ? {}
          : { previewToken: issued.token, previewExpiresAt: new Date(issued.expiresAt).toISOString() }),
        samples: await samplesOf(ctx, reads.target),
        submitted: 0,
        failed: 0,
        unknown: 0,
        notAttempted: 0,
        cancelled: false,
        chunks: [],
        usage: usageNow(),
      };
    }

    // A large change asks the human first (MAILWARDEN_CONFIRM), before the pin is spent and
    // before the first write: with 2026-07-28 the whole call re-runs after the answer. A move out
    // over the day's remainder is refused before that, unless the human may lift the cap: then
    // the one question asks for both.
    const large =
      targetIds.length > CONFIRM_OVER
        ? {
            message: `Change labels on ${targetIds.length} messages in ${ctx.mailbox.account}?`,
            details: {
              Query: query,
              Add: args.add.join(', ') || '(nothing)',
              Remove: args.remove.join(', ') || '(nothing)',
            },
          }
        : undefined;
    const held =
      gate !== undefined && move !== undefined && targetIds.length > 0
        ? await preflightMove(ctx, gate, 'bulk_modify', targetIds.length, large)
        : undefined;
    const confirmation =
      held?.confirmation ??
      (large !== undefined ? await confirmChange(ctx, large) : ('not_required' as const));
    // Spent before the first write: of calls racing with one token (on any replica), one writes.
    if (args.previewToken !== undefined) await previews.consume(args.previewToken, scope, ctx.clock.now());
    const change: LabelChange = {
      add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label.id] : [])),
      remove: resolved.remove.map((l) => l.id),
    };
    // No label is created for a write that has nothing to write to, nor before the policy
    // allowed some message of a judged change (the guard makes them before its first write).
    let applied: AppliedChange = {
      add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label] : [])),
      remove: resolved.remove,
      created: [],
    };
    const prepare = async (): Promise<void> => {
      applied = await materialize(ctx.mailbox, resolved, ctx.signal, ctx.gate);
      change.add.splice(0, change.add.length, ...applied.add.map((l) => l.id));
    };
    const policed =
      gate !== undefined && judged
        ? policyChunks(ctx, gate, 'bulk_modify', reads.target, held?.capLifted ?? false, prepare)
        : undefined;
    if (policed === undefined && targetIds.length > 0) await prepare();
    const run = await runChunks(
      ctx,
      targetIds.length === 0 ? [] : [{ ids: targetIds, change }],
      policed?.guard,
    );
    let plan: UndoPlan | undefined = args.undo
      ? buildUndoPlan({
          account: ctx.mailbox.account,
          createdAt: new Date(ctx.clock.now()).toISOString(),
          query,
          change,
          messageIds: targetIds,
          before: reads.membership,
          labelNames: new Map([...applied.add, ...applied.remove].map((l) => [l.id, l.name])),
        })
      : undefined;
    const refused = policed?.refused();
    // Only a move out of the inbox spends the cap; a judged restore says nothing of it.
    const remainingToday =
      policed === undefined || gate === undefined || move === undefined
        ? null
        : (policed.remainingToday() ?? (await gate.remaining()));
    if (refused !== undefined && run.submitted === 0 && run.failed === 0) throw refusedEverything(refused);
    const none = nothingChanged(run);
    if (none !== undefined) throw none;
    if (plan !== undefined)
      plan = await withAgentLabelUndone(ctx, restrictPlan(plan, run.sent), change, run.sent);
    const verified = !args.verify
      ? undefined
      : run.accepted.length === 0
        ? {
            method: 'labelIds-list' as const,
            applied: 0,
            notApplied: 0,
            unverifiable: 0,
            notAppliedIds: [],
            quotaUnits: 0,
          }
        : await verifyChange(ctx.mailbox, run.accepted, change, ctx.signal);
    return {
      ...common,
      change: { add: applied.add.map(ref(ctx.fence)), remove: applied.remove.map(ref(ctx.fence)) },
      labelsToCreate: [],
      createdLabels: applied.created.map(ref(ctx.fence)),
      submitted: run.submitted,
      failed: run.failed,
      unknown: run.unknown,
      ...(run.rateLimited === undefined ? {} : { rateLimited: run.rateLimited }),
      notAttempted: run.notAttempted,
      cancelled: run.cancelled,
      chunks: run.chunks,
      ...(verified === undefined ? {} : { verified }),
      ...(plan === undefined ? {} : { undoPlan: plan }),
      ...(refused === undefined ? {} : { refused }),
      ...(remainingToday === null ? {} : { remainingToday }),
      confirmation,
      usage: usageNow(),
    };
  },
});

/**
 * policy.json agentLabel went onto every message the batch named when the change takes mail out
 * of the inbox, those already archived too. The undo takes it off: the messages it brings back to
 * the inbox lose it with that move, the others by name (the label is the server's, not the agent's).
 */
async function withAgentLabelUndone(
  ctx: ToolContext,
  plan: UndoPlan,
  change: LabelChange,
  sent: ReadonlySet<string>,
): Promise<UndoPlan> {
  const { agentLabel } = await agentLabelOf(ctx);
  const out = change.remove.includes('INBOX') && !change.add.some((l) => l === 'SPAM' || l === 'TRASH');
  if (agentLabel === undefined || !out) return plan;
  const label = (await ctx.mailbox.listLabels(ctx.signal)).find(
    (l) => l.type === 'user' && l.name.toLowerCase() === agentLabel.toLowerCase(),
  );
  if (label === undefined) return plan;
  const planned = new Set(plan.groups.flatMap((g) => g.messageIds));
  const rest = [...sent].filter((id) => !planned.has(id));
  const groups = plan.groups.map((g) =>
    g.add.includes('INBOX') || g.remove.includes(label.id) ? g : { ...g, remove: [...g.remove, label.id] },
  );
  if (rest.length > 0) groups.push({ add: [], remove: [label.id], messageIds: rest });
  return { ...plan, labels: { ...plan.labels, [label.id]: label.name }, groups };
}
