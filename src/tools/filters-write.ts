import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import { hasPositiveCriterion } from '../mail/filter-criteria.js';
import type { Label } from '../mail/types.js';
import type { LabelChange } from '../providers/mailbox.js';
import type { ToolContext } from './common/define.js';
import { confirmChange, defineTool } from './common/define.js';
import {
  actionInput,
  filterView,
  filtersOf,
  freshLabels,
  matching,
  plan,
  planOutput,
  planResult,
  view,
} from './filters.js';
import type { Plan } from './filters.js';
import { ensureLabel } from './common/label-changes.js';
import type { ConfirmRequest } from '../policy/confirm.js';
import { STANDING_MOVE_RULE, keepsOutOfInbox } from '../policy/standing-moves.js';
import { shownLabelRef } from './common/labels-cache.js';

/** messages.batchModify takes at most 1,000 ids (Gmail API reference). */
const CHUNK = 1000;
/** Verification reads each message (messages.get, 5 units): an even sample, not the whole set. */
const VERIFY_SAMPLE = 100;
const MAX_LISTED = 20;

const DISCARD_TEXT = {
  trash: 'future matching mail goes straight to Trash (deleted for good after 30 days)',
  skips_inbox_without_label: 'future matching mail skips the inbox with no label: it is only in All Mail',
} as const;

const applied = z.object({
  matched: z.number().describe('messages matching now (up to maxMessages)'),
  more: z.boolean().describe('more messages match than maxMessages; those were not changed'),
  submitted: z.number().describe('messages sent to Gmail in chunks that succeeded'),
  chunks: z.number(),
  failedChunks: z.array(
    z.object({ index: z.number(), size: z.number(), code: z.string(), message: z.string() }),
  ),
  verified: z
    .object({
      checked: z.number().describe('messages re-read (a sample of at most 100)'),
      ok: z.number(),
      mismatched: z.array(z.string()).describe('ids whose live labels do not show the change (at most 20)'),
    })
    .optional(),
});

function describeChange(p: Plan): Record<string, string> {
  const names = [...p.labels.add.map((l) => l.name), ...p.labels.create.map((n) => `${n} (new)`)];
  const out: Record<string, string> = {};
  if (names.length > 0) out['Add labels'] = names.join(', ');
  if (p.labels.remove.length > 0) out['Remove labels'] = p.labels.remove.map((l) => l.name).join(', ');
  return out;
}

function sample<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)] as T);
}

async function apply(
  ctx: ToolContext,
  ids: readonly string[],
  change: LabelChange,
  verify: boolean,
): Promise<Omit<z.infer<typeof applied>, 'matched' | 'more'>> {
  const failedChunks: z.infer<typeof applied>['failedChunks'] = [];
  const done: string[] = [];
  const chunks = Math.ceil(ids.length / CHUNK);
  for (let i = 0; i < chunks; i++) {
    const part = ids.slice(i * CHUNK, (i + 1) * CHUNK);
    try {
      await ctx.mailbox.modifyMessages([...part], change, ctx.signal);
      done.push(...part);
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      // Honest partial results (docs/architecture.md, promise 6): one chunk failing does not hide the others.
      const err = isMailError(e) ? e : new MailError('internal_error', String(e));
      failedChunks.push({ index: i, size: part.length, code: err.code, message: err.message });
    }
    await ctx.progress(
      Math.min((i + 1) * CHUNK, ids.length),
      ids.length,
      'applying the filter to existing mail',
    );
  }
  const out = { submitted: done.length, chunks, failedChunks };
  if (!verify) return out;
  const checkedIds = sample(done, VERIFY_SAMPLE);
  const live = await mapBounded(checkedIds, 8, (id) => ctx.mailbox.getMessageLabels(id, ctx.signal));
  const mismatched = live
    .filter(
      (m) =>
        !change.add.every((l) => m.labelIds.includes(l)) || change.remove.some((l) => m.labelIds.includes(l)),
    )
    .map((m) => m.id);
  return {
    ...out,
    verified: {
      checked: live.length,
      ok: live.length - mismatched.length,
      mismatched: mismatched.slice(0, MAX_LISTED),
    },
  };
}

export const createFilter = defineTool({
  name: 'create_filter',
  title: 'Create a filter',
  tier: 'filters',
  access: 'write',
  description:
    "Create a Gmail filter that adds and/or removes labels (by name or id; new names are created). It never forwards mail. Under inboxOnlyMoves a filter keeping mail out of the inbox (removes INBOX, adds SPAM or TRASH) needs a person's confirmation (refused if the client cannot ask) and a criteria.from of addresses or domains that covers no protected correspondent. applyToExisting also relabels matching mail now (up to maxMessages; needs a criterion besides negatedQuery); verify re-reads a sample. The user may be asked to confirm first. Run preview_filter before.",
  input: z.strictObject({
    ...actionInput,
    applyToExisting: z.boolean().default(false),
    maxMessages: z.number().int().min(1).max(5000).default(1000),
    verify: z.boolean().default(false),
  }),
  output: z.object({
    filter: filterView,
    createdLabels: z.array(z.object({ id: z.string(), name: z.string() })),
    ...planOutput,
    applied: applied.optional(),
    confirmation: z.enum(['confirmed', 'not_required', 'unavailable']),
  }),
  async handle(ctx, args) {
    const f = filtersOf(ctx);
    if (args.applyToExisting && !hasPositiveCriterion(args.criteria)) {
      throw invalidInput(
        'applyToExisting',
        'needs a criterion the mail has (from, to, subject, query, hasAttachment or size): negatedQuery alone matches nearly the whole mailbox',
      );
    }
    const p = await plan(ctx, args);
    if (args.applyToExisting && p.labels.add.some((l) => l.id === 'TRASH')) {
      throw invalidInput(
        'applyToExisting',
        'would move existing mail to Trash; create the filter without applyToExisting and trash existing mail with the trash tools',
      );
    }
    if (args.applyToExisting && ctx.gate !== undefined) {
      const moves =
        p.labels.add.some((l) => l.id === 'SPAM') || p.labels.remove.some((l) => l.id === 'INBOX');
      const rules = (await ctx.gate()).rules;
      // Relabelling existing mail out of the inbox is a bulk move; it goes through the tool the
      // write policy judges message by message, not around it.
      if (moves && (rules.dailyMoveCap > 0 || rules.protectCorrespondents || rules.inboxOnlyMoves))
        throw new MailError(
          'forbidden_operation',
          'applyToExisting would move existing mail out of the inbox, which the write policy judges message by message: move it with bulk_modify (or archive/move_to_spam), then create the filter without applyToExisting',
          { retryable: false },
        );
    }
    if (p.labels.create.length === 0) {
      const addIds = p.labels.add.map((l) => l.id).sort();
      const removeIds = p.labels.remove.map((l) => l.id).sort();
      const twin = p.identical.find(
        (x) =>
          JSON.stringify([...x.action.addLabelIds].sort()) === JSON.stringify(addIds) &&
          JSON.stringify([...x.action.removeLabelIds].sort()) === JSON.stringify(removeIds),
      );
      if (twin) throw invalidInput('criteria', `filter ${twin.id} already has these criteria and actions`);
    }
    // A filter that keeps future mail out of the inbox is a standing move: judged before anything
    // is read or written, and confirmed by a person whatever MAILWARDEN_CONFIRM says.
    let required: ConfirmRequest['required'];
    const standing = keepsOutOfInbox(
      p.labels.add.map((l) => l.id),
      p.labels.remove.map((l) => l.id),
    );
    if (standing && ctx.gate !== undefined) {
      const judged = await (await ctx.gate()).judgeStandingMove(p.criteria.from);
      if (judged.refusal !== undefined)
        throw new MailError(
          'forbidden_operation',
          `refused by the write policy (${STANDING_MOVE_RULE}): ${judged.refusal}. Nothing was changed.`,
          { retryable: false },
        );
      if (judged.needsPerson)
        required = {
          rule: STANDING_MOVE_RULE,
          why: 'this filter keeps future mail out of the inbox, where no daily cap, action-log line or correspondent check reaches it (inboxOnlyMoves)',
        };
    }
    const found = args.applyToExisting ? await matching(ctx, p.query, args.maxMessages) : undefined;

    const details: Record<string, string> = { Matches: p.query, ...describeChange(p) };
    details['Existing mail'] =
      found === undefined
        ? 'left as it is'
        : `${found.ids.length} message(s) matching now will be changed${found.more ? ` (the first ${found.ids.length}; more match and stay as they are)` : ''}`;
    if (p.discard !== undefined) details['Warning'] = DISCARD_TEXT[p.discard];
    if (p.identical.length > 0) details['Filters with the same criteria'] = String(p.identical.length);
    if (required !== undefined) details['Standing move'] = 'future matching mail will not reach the inbox';
    const confirmation = await confirmChange(ctx, {
      message: `Create a Gmail filter in ${ctx.mailbox.account}?`,
      details,
      ...(required === undefined ? {} : { required }),
    });

    // Writes start here, after every check and the human's answer.
    const known: Label[] = [...p.existing];
    const created: Label[] = [];
    const add = p.labels.add.map((l) => l.id);
    for (const name of p.labels.create) {
      const made = await ensureLabel(ctx.mailbox, name, known, ctx.signal, ctx.gate);
      add.push(made.label.id);
      created.push(...made.created);
    }
    const remove = p.labels.remove.map((l) => l.id);
    const filter = await f.createFilter(
      { criteria: p.criteria, action: { addLabelIds: add, removeLabelIds: remove } },
      ctx.signal,
    );
    const result = await (found && found.ids.length > 0
      ? apply(ctx, found.ids, { add, remove }, args.verify)
      : Promise.resolve(undefined));
    const labels = await freshLabels(ctx);
    return {
      filter: view(filter, labels, ctx.fence),
      createdLabels: created.map((l) => shownLabelRef(ctx.fence, l)),
      ...planResult(p),
      ...(found === undefined
        ? {}
        : {
            applied: {
              matched: found.ids.length,
              more: found.more,
              ...(result ?? { submitted: 0, chunks: 0, failedChunks: [] }),
            },
          }),
      confirmation,
    };
  },
});

export const deleteFilter = defineTool({
  name: 'delete_filter',
  title: 'Delete a filter',
  tier: 'filters',
  access: 'destructive',
  description:
    'Delete a filter by id (list_filters). Mail it already labelled keeps its labels. The result holds the deleted definition, for create_filter to recreate (forwarding excepted).',
  input: z.strictObject({
    filterId: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'a filter id from list_filters')
      .max(200),
  }),
  output: z.object({ deleted: filterView }),
  async handle(ctx, args) {
    const f = filtersOf(ctx);
    const [filters, labels] = await Promise.all([f.listFilters(ctx.signal), freshLabels(ctx)]);
    const target = filters.find((x) => x.id === args.filterId);
    if (target === undefined) {
      throw new MailError('not_found', `no filter has id ${args.filterId}; list_filters shows the ids`);
    }
    await f.deleteFilter(target.id, ctx.signal);
    return { deleted: view(target, labels, ctx.fence) };
  },
});
