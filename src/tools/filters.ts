import { z } from 'zod';
import { MailError } from '../mail/errors.js';
import {
  criteriaOverlap,
  criteriaToQuery,
  discardsFutureMatches,
  normaliseCriteria,
  resolveFilterLabels,
  sameCriteria,
  validateCriteria,
} from '../mail/filter-criteria.js';
import type { FilterCriteria, ResolvedLabels } from '../mail/filter-criteria.js';
import type { Label } from '../mail/types.js';
import type { Mailbox, MailFilter } from '../providers/mailbox.js';
import type { ToolContext } from './common/define.js';
import { defineTool } from './common/define.js';
import { checkLabelName } from './common/label-changes.js';
import { shownLabelRef } from './common/labels-cache.js';
import type { Fence } from '../mcp/untrusted.js';
import { mailReaders } from './common/lazy.js';

/**
 * Gmail filters (tier filters). Label actions only: no input schema here has a forward field,
 * the Mailbox interface cannot carry one, and the egress checkpoint refuses a filter body that
 * mentions forwarding (docs/architecture.md, promise 1).
 */

const text = (what: string) => z.string().max(1000).optional().describe(what);
const criteriaSchema = z
  .strictObject({
    from: text('search syntax: an address, a domain, "a OR b"'),
    to: text('search syntax'),
    subject: text('words'),
    query: text('Gmail search query'),
    negatedQuery: text('must NOT match'),
    hasAttachment: z.boolean().optional(),
    excludeChats: z.boolean().optional(),
    size: z.number().int().min(1).max(100_000_000).optional().describe('bytes, with sizeComparison'),
    sizeComparison: z.enum(['larger', 'smaller']).optional(),
  })
  .describe('what the filter matches (at least one field)');
const labelsIn = (what: string) => z.array(z.string().min(1).max(225)).max(20).default([]).describe(what);
export const actionInput = {
  criteria: criteriaSchema,
  addLabels: labelsIn('names or ids; new names are created (STARRED, IMPORTANT, TRASH, CATEGORY_* allowed)'),
  removeLabels: labelsIn('names or ids (INBOX: skip the inbox, UNREAD: mark read, SPAM: never spam)'),
};

const labelRef = z.object({ id: z.string(), name: z.string() });
export const filterView = z.object({
  id: z.string(),
  criteria: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  query: z.string().describe('the Gmail search these criteria amount to'),
  addLabels: z.array(labelRef),
  removeLabels: z.array(labelRef),
  forward: z.string().optional().describe('set outside mailwarden; shown for audit'),
  flags: z.array(z.enum(['forwards_mail', 'trashes_mail', 'skips_inbox_without_label'])),
});
type FilterView = z.infer<typeof filterView>;

export function filtersOf(
  ctx: ToolContext,
): Required<Pick<Mailbox, 'listFilters' | 'createFilter' | 'deleteFilter'>> {
  const { listFilters, createFilter, deleteFilter } = ctx.mailbox;
  if (!listFilters || !createFilter || !deleteFilter) {
    throw new MailError(
      'unsupported',
      `the ${ctx.mailbox.provider} account "${ctx.mailbox.account}" has no server-side filters`,
    );
  }
  const m = ctx.mailbox;
  return {
    listFilters: listFilters.bind(m),
    createFilter: createFilter.bind(m),
    deleteFilter: deleteFilter.bind(m),
  };
}

export function view(f: MailFilter, labels: ReadonlyMap<string, Label>, fence: Fence): FilterView {
  const ref = (id: string) => {
    const l = labels.get(id);
    return l === undefined ? { id, name: fence.wrap(id) } : shownLabelRef(fence, l);
  };
  const flags: FilterView['flags'] = [];
  if (f.action.forward !== undefined) flags.push('forwards_mail');
  const discard = discardsFutureMatches(f.action);
  if (discard === 'trash') flags.push('trashes_mail');
  if (discard === 'skips_inbox_without_label') flags.push('skips_inbox_without_label');
  return {
    id: f.id,
    criteria: { ...normaliseCriteria(f.criteria) },
    query: criteriaToQuery(f.criteria),
    addLabels: f.action.addLabelIds.map(ref),
    removeLabels: f.action.removeLabelIds.map(ref),
    ...(f.action.forward === undefined ? {} : { forward: f.action.forward }),
    flags,
  };
}

export const listFilters = defineTool({
  name: 'list_filters',
  title: 'List filters',
  tier: 'filters',
  access: 'read',
  description:
    'The mailbox filters: criteria, the equivalent search query, and label actions with label names. A forwarding filter (mailwarden never creates one) is shown with its address and flagged forwards_mail: check with the user that they set it up.',
  input: z.strictObject({}),
  output: z.object({
    filters: z.array(filterView),
    forwarding: z.number().describe('filters that forward mail'),
  }),
  async handle(ctx) {
    const f = filtersOf(ctx);
    const [filters, labels] = await Promise.all([f.listFilters(ctx.signal), freshLabels(ctx)]);
    const views = filters.map((x) => view(x, labels, ctx.fence));
    return { filters: views, forwarding: views.filter((v) => v.forward !== undefined).length };
  },
});

/** Filters often name labels made a moment ago; the shared label cache may predate them. */
export async function freshLabels(ctx: ToolContext): Promise<Map<string, Label>> {
  return new Map((await ctx.mailbox.listLabels(ctx.signal)).map((l) => [l.id, l]));
}

export interface Plan {
  criteria: FilterCriteria;
  query: string;
  labels: ResolvedLabels;
  identical: MailFilter[];
  overlapping: Array<{ id: string; fields: string[]; shared: string[] }>;
  discard: ReturnType<typeof discardsFutureMatches>;
  existing: Label[];
}

export async function plan(ctx: ToolContext, args: z.output<z.ZodObject<typeof actionInput>>): Promise<Plan> {
  const criteria = normaliseCriteria(args.criteria);
  validateCriteria(args.criteria);
  const f = filtersOf(ctx);
  const [filters, existing] = await Promise.all([
    f.listFilters(ctx.signal),
    ctx.mailbox.listLabels(ctx.signal),
  ]);
  const labels = resolveFilterLabels(existing, args.addLabels, args.removeLabels);
  labels.create.forEach((name, i) => checkLabelName(`addLabels.${i}`, name));
  const overlapping = filters.flatMap((x) => {
    if (sameCriteria(x.criteria, criteria)) return [];
    const o = criteriaOverlap(criteria, x.criteria);
    return o.length === 0
      ? []
      : [{ id: x.id, fields: o.map((e) => e.field), shared: o.flatMap((e) => e.shared) }];
  });
  return {
    criteria,
    query: criteriaToQuery(criteria),
    labels,
    identical: filters.filter((x) => sameCriteria(x.criteria, criteria)),
    overlapping,
    // Labels still to be created are user labels: they keep mail findable.
    discard: discardsFutureMatches({
      addLabelIds: [...labels.add.map((l) => l.id), ...labels.create.map((n) => `new:${n}`)],
      removeLabelIds: labels.remove.map((l) => l.id),
    }),
    existing,
  };
}

/** Message ids matching the query now, from messages.list (the exact per-message index). */
export async function matching(
  ctx: ToolContext,
  query: string,
  limit: number,
): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = await ctx.mailbox.searchMessages(query, {
      maxResults: Math.min(500, limit - ids.length),
      signal: ctx.signal,
      ...(pageToken ? { pageToken } : {}),
    });
    ids.push(...page.items.map((m) => m.id));
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined && ids.length < limit);
  return { ids: ids.slice(0, limit), more: pageToken !== undefined };
}

export const planOutput = {
  query: z.string(),
  identicalFilters: z.array(z.string()).describe('ids of filters with the same criteria'),
  overlappingFilters: z.array(
    z.object({ id: z.string(), fields: z.array(z.string()), shared: z.array(z.string()) }),
  ),
  labelsToCreate: z.array(z.string()),
  discardsFutureMatches: z.boolean(),
  discardReason: z.enum(['trash', 'skips_inbox_without_label']).optional(),
};

export function planResult(p: Plan) {
  return {
    query: p.query,
    identicalFilters: p.identical.map((x) => x.id),
    overlappingFilters: p.overlapping,
    labelsToCreate: p.labels.create,
    discardsFutureMatches: p.discard !== undefined,
    ...(p.discard === undefined ? {} : { discardReason: p.discard }),
  };
}

export const previewFilter = defineTool({
  name: 'preview_filter',
  title: 'Preview a filter',
  tier: 'filters',
  access: 'read',
  description:
    'What create_filter would do, changing nothing: the mail it matches now, filters with identical or overlapping criteria, labels that would be created, and whether future matches would vanish from view (trashed, or out of the inbox without a label).',
  input: z.strictObject({ ...actionInput, maxMessages: z.number().int().min(1).max(5000).default(1000) }),
  output: z.object({
    ...planOutput,
    currentMatches: z.object({
      count: z.number(),
      more: z.boolean().describe('more than maxMessages match'),
    }),
    sample: z
      .array(z.object({ threadId: z.string(), from: z.string(), subject: z.string() }))
      .describe('fenced mail text'),
  }),
  async handle(ctx, args) {
    const p = await plan(ctx, args);
    const found = await matching(ctx, p.query, args.maxMessages);
    const { header } = await mailReaders();
    const refs = await ctx.mailbox.searchThreads(p.query, { maxResults: 5, signal: ctx.signal });
    const sample = [];
    for (const t of refs.items) {
      const thread = await ctx.mailbox.getThread(t.id, {
        format: 'metadata',
        metadataHeaders: ['From', 'Subject'],
        signal: ctx.signal,
      });
      const last = thread.messages[thread.messages.length - 1];
      if (last === undefined) continue;
      sample.push({
        threadId: thread.id,
        from: ctx.fence.wrap(header(last.headers, 'From')),
        subject: ctx.fence.wrap(header(last.headers, 'Subject')),
      });
    }
    return { ...planResult(p), currentMatches: { count: found.ids.length, more: found.more }, sample };
  },
});
