import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import type { ErrorCode } from '../mail/errors.js';
import { isoInZone, resolveUntil } from '../mail/snooze-dates.js';
import { SNOOZE_PARENTS, snoozeLabelName, snoozeLabelsOf } from '../mail/snooze-labels.js';
import type { SnoozeLabel } from '../mail/snooze-labels.js';
import type { Label } from '../mail/types.js';
import type { ToolContext } from './common/define.js';
import { defineTool, readConcurrency } from './common/define.js';
import { guardedPerThread, refusedSchema } from './common/guarded.js';
import type { ThreadWriteOptions } from '../providers/mailbox.js';
import type { GateIntent } from '../policy/gate.js';
import { forgetLabels } from './common/labels-cache.js';
import { mailReaders } from './common/lazy.js';
import { serverTimeZone } from '../policy/move-cap.js';

/**
 * The server decides what is due by its own clock and zone (TZ), never the model's: a model has
 * no reliable clock, and the labels must mean the same thing to the sweep that returns them.
 */
export { serverTimeZone };

/** Errors that would fail every remaining item the same way: stop instead of hammering Google. */
const STOP_CODES: ReadonlySet<ErrorCode> = new Set([
  'not_authorized',
  'needs_reauth',
  'insufficient_scope',
  'forbidden_operation',
  'rate_limited',
  'network_error',
]);

export function stopsTheRun(code: ErrorCode): boolean {
  return STOP_CODES.has(code);
}

export function errorOf(e: unknown, ctx: ToolContext): { code: ErrorCode; message: string } {
  if (isMailError(e)) return { code: e.code, message: e.message };
  ctx.log.warn('snooze write failed', { error: String(e) });
  return { code: 'internal_error', message: 'internal error; stderr has details' };
}

const failure = z.object({ threadId: z.string(), code: z.string(), message: z.string() });
const perThread = {
  changed: z.array(z.string()),
  failed: z.array(failure),
  refused: refusedSchema.optional(),
  notAttempted: z.array(z.string()).describe('not tried because an earlier error stopped the run'),
};

type PerThread = {
  changed: string[];
  failed: z.infer<typeof failure>[];
  refused?: Array<{ threadId: string; rule: string; reason: string }>;
  notAttempted: string[];
};

/** Through the write policy where the server has one (snooze is a move out; unsnooze a restore). */
async function guardedEach(
  ctx: ToolContext,
  ids: string[],
  intent: GateIntent,
  fn: (threadId: string, options: ThreadWriteOptions) => Promise<void>,
  /** A label the write needs: made only once a thread is allowed (a refused call writes nothing). */
  prepare?: () => Promise<void>,
): Promise<PerThread> {
  if (ctx.gate === undefined) {
    if (ids.length > 0) await prepare?.();
    return eachThread(ctx, ids, (id) => fn(id, {}));
  }
  const r = await guardedPerThread(
    ctx,
    ids,
    intent,
    async (_mailbox, id, options) => {
      await fn(id, options);
      return undefined;
    },
    undefined,
    prepare,
  );
  return {
    changed: r.changed.map((c) => c.threadId),
    failed: r.failed,
    refused: r.refused,
    notAttempted: r.notAttempted,
  };
}

/** Threads a few at a time; an error that would repeat for every thread stops the rest. */
async function eachThread(
  ctx: ToolContext,
  ids: string[],
  fn: (threadId: string) => Promise<void>,
): Promise<PerThread> {
  const outcome = new Map<string, true | { code: ErrorCode; message: string }>();
  let stopped = false;
  let done = 0;
  await mapBounded(ids, readConcurrency(ctx.mailbox, 4), async (id) => {
    if (stopped || ctx.signal.aborted) return;
    try {
      await fn(id);
      outcome.set(id, true);
    } catch (e) {
      const err = errorOf(e, ctx);
      outcome.set(id, err);
      if (stopsTheRun(err.code)) stopped = true;
    }
    await ctx.progress(++done, ids.length);
  });
  const out: PerThread = { changed: [], failed: [], notAttempted: [] };
  for (const id of ids) {
    const o = outcome.get(id);
    if (o === undefined) out.notAttempted.push(id);
    else if (o === true) out.changed.push(id);
    else out.failed.push({ threadId: id, ...o });
  }
  return out;
}

const threadList = {
  threadId: z.string().min(1).max(256).optional(),
  threadIds: z.array(z.string().min(1).max(256)).min(1).max(100).optional(),
};

function threadIdsOf(args: { threadId?: string | undefined; threadIds?: string[] | undefined }): string[] {
  if ((args.threadId === undefined) === (args.threadIds === undefined)) {
    throw invalidInput('threadIds', 'give either threadId or threadIds (up to 100), not both');
  }
  return [...new Set(args.threadIds ?? [args.threadId as string])];
}

/** Label ids present on any message of a thread, read live (metadata only). */
async function threadLabels(ctx: ToolContext, threadId: string): Promise<Set<string>> {
  const t = await ctx.mailbox.getThread(threadId, {
    format: 'metadata',
    metadataHeaders: ['Subject'],
    signal: ctx.signal,
  });
  if (t.messages.length === 0) throw new MailError('not_found', `thread ${threadId} has no messages`);
  return new Set(t.messages.flatMap((m) => m.labelIds));
}

async function createOrFind(ctx: ToolContext, name: string): Promise<string> {
  try {
    return (await ctx.mailbox.createLabel({ name }, ctx.signal)).id;
  } catch (e) {
    // Gmail answers 409 (invalid_input here) when another run created the same name meanwhile.
    if (!isMailError(e) || e.code !== 'invalid_input') throw e;
    const lower = name.toLowerCase();
    const found = (await ctx.mailbox.listLabels(ctx.signal)).find((l) => l.name.toLowerCase() === lower);
    if (!found) throw e;
    return found.id;
  }
}

async function ensureLabel(ctx: ToolContext, name: string, labels: Label[]): Promise<string> {
  const byName = new Map(labels.map((l) => [l.name.toLowerCase(), l.id]));
  const have = byName.get(name.toLowerCase());
  if (have !== undefined) return have;
  for (const parent of SNOOZE_PARENTS) {
    if (!byName.has(parent.toLowerCase())) await createOrFind(ctx, parent);
  }
  const id = await createOrFind(ctx, name);
  forgetLabels(ctx.mailbox);
  return id;
}

export const snooze = defineTool({
  name: 'snooze',
  title: 'Snooze threads',
  tier: 'manage',
  access: 'write',
  description:
    "Take threads out of the inbox until a time, on labels any mail client shows (MCP/Snoozed/2026-06-20, …T0930 for a minute). until, in the server's time zone: a date, a date and time (2026-06-20 9am), today / tomorrow / weekend / next week / a weekday with an optional time, or 'in N days|weeks|hours'. sweep_snoozed brings due threads back.",
  input: z.strictObject({
    ...threadList,
    until: z.string().min(1).max(100).describe('when it comes back, e.g. "tomorrow 9am", "2026-06-20"'),
  }),
  output: z.object({
    label: z.string(),
    dueAt: z.string().describe('ISO 8601 with the server zone offset'),
    timeZone: z.string(),
    ...perThread,
  }),
  async handle(ctx, args) {
    const ids = threadIdsOf(args);
    const timeZone = serverTimeZone();
    // Resolved before anything is written: a past or unreadable until changes nothing.
    const due = resolveUntil(args.until, ctx.clock.now(), timeZone);
    const name = snoozeLabelName(due.spec);
    const labels = await ctx.mailbox.listLabels(ctx.signal);
    const snoozeIds = new Set(snoozeLabelsOf(labels, timeZone).map((l) => l.id));
    let target = '';
    const result = await guardedEach(
      ctx,
      ids,
      { tool: 'snooze', action: 'snooze', actor: 'agent' },
      async (id, options) => {
        const present = await threadLabels(ctx, id);
        const old = [...present].filter((l) => snoozeIds.has(l) && l !== target);
        // One threads.modify: the thread never sits with two due dates or with none.
        await ctx.mailbox.modifyThread(id, { add: [target], remove: ['INBOX', ...old] }, ctx.signal, options);
      },
      async () => {
        target = await ensureLabel(ctx, name, labels);
      },
    );
    return { label: name, dueAt: isoInZone(due.at, timeZone), timeZone, ...result };
  },
});

export const unsnooze = defineTool({
  name: 'unsnooze',
  title: 'Unsnooze threads',
  tier: 'manage',
  access: 'write',
  description:
    'Bring snoozed threads back to the inbox now and remove their snooze labels (read state is left as it is). A thread that is not snoozed is just put in the inbox.',
  input: z.strictObject(threadList),
  output: z.object(perThread),
  async handle(ctx, args) {
    const ids = threadIdsOf(args);
    const labels = await ctx.mailbox.listLabels(ctx.signal);
    const snoozeIds = new Set(snoozeLabelsOf(labels, serverTimeZone()).map((l) => l.id));
    return guardedEach(
      ctx,
      ids,
      { tool: 'unsnooze', action: 'restore', actor: 'agent' },
      async (id, options) => {
        const present = await threadLabels(ctx, id);
        const old = [...present].filter((l) => snoozeIds.has(l));
        await ctx.mailbox.modifyThread(id, { add: ['INBOX'], remove: old }, ctx.signal, options);
      },
    );
  },
});

/** Every message carrying a label (all pages of the exact per-message index). */
export async function messagesWithLabel(
  ctx: ToolContext,
  label: SnoozeLabel,
  includeSpamTrash: boolean,
): Promise<Array<{ id: string; threadId: string }>> {
  const out: Array<{ id: string; threadId: string }> = [];
  let pageToken: string | undefined;
  do {
    // By label id, not a label: query: Gmail answers labelIds from live per-message labels.
    const page = await ctx.mailbox.searchMessages('', {
      labelIds: [label.id],
      maxResults: 500,
      includeSpamTrash,
      signal: ctx.signal,
      ...(pageToken === undefined ? {} : { pageToken }),
    });
    out.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return out;
}

export const listSnoozed = defineTool({
  name: 'list_snoozed',
  title: 'List snoozed threads',
  tier: 'read',
  access: 'read',
  description:
    'Snoozed threads, earliest due first: due time (server zone), label, subject, and overdue when due but not yet swept back.',
  input: z.strictObject({
    limit: z.number().int().min(1).max(500).default(100).describe('threads to read subjects for'),
  }),
  output: z.object({
    timeZone: z.string(),
    now: z.string(),
    total: z.number(),
    truncated: z.boolean(),
    threads: z.array(
      z.object({
        threadId: z.string(),
        dueAt: z.string(),
        label: z.string(),
        subject: z.string().describe('fenced mail text'),
        overdue: z.boolean(),
      }),
    ),
  }),
  async handle(ctx, args) {
    const timeZone = serverTimeZone();
    const now = ctx.clock.now();
    const labels = snoozeLabelsOf(await ctx.mailbox.listLabels(ctx.signal), timeZone);
    // Labels come earliest first, so a thread carrying two keeps the earlier (it returns then).
    const dueOf = new Map<string, SnoozeLabel>();
    for (const label of labels) {
      for (const m of await messagesWithLabel(ctx, label, false)) {
        if (!dueOf.has(m.threadId)) dueOf.set(m.threadId, label);
      }
    }
    const picked = [...dueOf].slice(0, args.limit);
    const { header } = await mailReaders();
    const rows = await mapBounded(picked, 8, async ([threadId, label]) => {
      try {
        const t = await ctx.mailbox.getThread(threadId, {
          format: 'metadata',
          metadataHeaders: ['Subject'],
          signal: ctx.signal,
        });
        const first = t.messages[0];
        return {
          threadId,
          dueAt: isoInZone(label.at, timeZone),
          label: label.name,
          subject: ctx.fence.wrap(first ? header(first.headers, 'Subject') : ''),
          overdue: label.at <= now,
        };
      } catch (e) {
        // Deleted between the search and the read: it is no longer snoozed.
        if (isMailError(e) && e.code === 'not_found') return undefined;
        throw e;
      }
    });
    const threads = rows.filter((r) => r !== undefined);
    return {
      timeZone,
      now: isoInZone(now, timeZone),
      total: dueOf.size - (picked.length - threads.length),
      truncated: dueOf.size > picked.length,
      threads,
    };
  },
});
