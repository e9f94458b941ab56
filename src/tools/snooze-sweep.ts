import { z } from 'zod';
import { MailError, isMailError } from '../mail/errors.js';
import type { Gate, GateItem } from '../policy/gate.js';
import { writeOutcomeOf } from '../policy/logged-mailbox.js';
import type { ErrorCode } from '../mail/errors.js';
import { isoInZone } from '../mail/snooze-dates.js';
import { chunk, snoozeLabelsOf } from '../mail/snooze-labels.js';
import type { SnoozeLabel } from '../mail/snooze-labels.js';
import type { LabelChange } from '../providers/mailbox.js';
import type { ToolContext } from './common/define.js';
import { defineTool } from './common/define.js';
import { forgetLabels } from './common/labels-cache.js';
import { errorOf, messagesWithLabel, serverTimeZone, stopsTheRun } from './snooze.js';

/** Gmail messages.batchModify takes at most 1000 ids (docs/facts.md). */
export const BATCH_SIZE = 1000;

/*
 * Order of operations, chosen so that an interrupted sweep (a failed batch, a killed process)
 * run again finishes the job with nothing lost or doubled:
 *
 * 1. Work is found from the mailbox, never from memory: messages that still carry a due label.
 *    What an earlier run finished no longer carries it, so it is not touched twice (its UNREAD
 *    is not set again after the user read it); what it did not finish is found again.
 * 2. One batchModify per batch adds INBOX and UNREAD and removes the due label together. Gmail
 *    applies a message's label change as one write, so each message is either still snoozed
 *    (label, no INBOX) or back (INBOX, no label), never neither. A thread split over two
 *    batches is in the inbox as soon as one lands and is still found by its label for the rest.
 *    (A provider that cannot do both at once must add INBOX first: "both" is found again,
 *    "neither" is a thread lost in the archive.)
 * 3. A due label is deleted last, only after every batch for it succeeded and a fresh read shows
 *    no message carries it: labels.delete strips the label from its messages, so an early delete
 *    would drop still-snoozed mail into the archive with nothing left to bring it back.
 */

interface Plan {
  label: SnoozeLabel;
  /** Due messages outside spam and trash: they go back to the inbox. */
  back: Array<{ id: string; threadId: string }>;
  /** Due messages in spam or trash: the user threw them away, so only the label goes. */
  release: Array<{ id: string; threadId: string }>;
}

const batchSchema = z.object({
  label: z.string(),
  kind: z.enum(['return', 'release']).describe('release: spam/trash, label removed only'),
  messages: z.number(),
  threadIds: z.array(z.string()),
  outcome: z.enum(['ok', 'failed', 'not_attempted']),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
type Batch = z.infer<typeof batchSchema>;

export const sweepOutput = z.object({
  dryRun: z.boolean(),
  now: z.string(),
  timeZone: z.string(),
  dueLabels: z.array(
    z.object({
      label: z.string(),
      dueAt: z.string(),
      threads: z.number(),
      messages: z.number(),
      inSpamOrTrash: z.number(),
    }),
  ),
  dueThreads: z.array(z.string()).describe('threads due now, earliest due first'),
  returned: z.array(z.string()).describe('threads this run put back in the inbox, unread'),
  pending: z.array(z.string()).describe('due threads still snoozed because a batch failed'),
  batches: z.array(batchSchema),
  labelsDeleted: z.array(z.string()),
  labelsKept: z.array(z.object({ label: z.string(), reason: z.string() })),
  ok: z.boolean().describe('every batch succeeded'),
});
export type SweepReport = z.infer<typeof sweepOutput>;

/** Keeps a thread's messages next to each other so a thread rarely straddles two batches. */
function byThread(refs: Array<{ id: string; threadId: string }>): Array<{ id: string; threadId: string }> {
  return [...refs].sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
}

async function plan(ctx: ToolContext, due: SnoozeLabel[]): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const label of due) {
    const back = await messagesWithLabel(ctx, label, false);
    const inbox = new Set(back.map((m) => m.id));
    const all = await messagesWithLabel(ctx, label, true);
    plans.push({ label, back: byThread(back), release: byThread(all.filter((m) => !inbox.has(m.id))) });
  }
  return plans;
}

async function isEmpty(ctx: ToolContext, label: SnoozeLabel): Promise<boolean> {
  const counted = await ctx.mailbox.getLabel(label.id, ctx.signal);
  if (typeof counted.messagesTotal === 'number') return counted.messagesTotal === 0;
  // No count from this provider: ask the index, spam and trash included.
  const page = await ctx.mailbox.searchMessages('', {
    labelIds: [label.id],
    maxResults: 1,
    includeSpamTrash: true,
    signal: ctx.signal,
  });
  return page.items.length === 0;
}

/**
 * One batch, under the write policy when there is one: the account's write lock (a sweep from
 * cron and a server never interleave with other writers), and a line per message in the action
 * log, intent before the write and outcome after. A return is a restore (it counts against no
 * cap); a release only removes the snooze label. Both are the server's doing (actor "rule").
 */
async function sweepBatch(
  ctx: ToolContext,
  gate: Gate | undefined,
  w: { plan: Plan; batch: Batch; ids: string[]; change: LabelChange },
): Promise<void> {
  if (gate === undefined) {
    await ctx.mailbox.modifyMessages(w.ids, w.change, ctx.signal);
    return;
  }
  const place = w.batch.kind === 'return' ? [w.plan.label.id] : ['TRASH'];
  const items: GateItem[] = w.ids.map((id) => ({
    id,
    kind: 'message',
    messageCount: 1,
    sender: undefined,
    senderHeader: '',
    labelIds: place,
  }));
  let failure: unknown;
  const run = await gate.run(
    items,
    w.batch.kind === 'return'
      ? { tool: 'sweep_snoozed', action: 'restore', actor: 'rule' }
      : { tool: 'sweep_snoozed', action: 'label', actor: 'rule', removeLabels: [w.plan.label.name] },
    async (allowed, signal) => {
      try {
        await ctx.mailbox.modifyMessages(
          allowed.map((a) => a.id),
          w.change,
          signal,
        );
        return allowed.map((a) => ({ id: a.id, outcome: 'moved' as const }));
      } catch (e) {
        failure = e;
        const outcome = writeOutcomeOf(e);
        return allowed.map((a) => ({ id: a.id, outcome, error: errorOf(e, ctx).code }));
      }
    },
  );
  if (failure !== undefined) throw failure;
  if (run.writeError !== undefined) throw run.writeError;
  const refused = run.results.find((r) => r.outcome === 'refused');
  if (refused)
    throw new MailError(
      'forbidden_operation',
      `the write policy refused the batch: ${refused.reason ?? refused.rule}`,
    );
}

/** Runs one sweep (or only plans it, with dryRun). Used by the tool, the CLI and auto-sweep. */
export async function runSweep(ctx: ToolContext, dryRun: boolean): Promise<SweepReport> {
  const timeZone = serverTimeZone();
  const now = ctx.clock.now();
  const due = snoozeLabelsOf(await ctx.mailbox.listLabels(ctx.signal), timeZone).filter((l) => l.at <= now);
  const plans = await plan(ctx, due);
  const dueThreads = [...new Set(plans.flatMap((p) => p.back.map((m) => m.threadId)))];
  const report: SweepReport = {
    dryRun,
    now: isoInZone(now, timeZone),
    timeZone,
    dueLabels: plans.map((p) => ({
      label: p.label.name,
      dueAt: isoInZone(p.label.at, timeZone),
      threads: new Set(p.back.map((m) => m.threadId)).size,
      messages: p.back.length,
      inSpamOrTrash: p.release.length,
    })),
    dueThreads,
    returned: [],
    pending: [],
    batches: [],
    labelsDeleted: [],
    labelsKept: [],
    ok: true,
  };
  if (dryRun) return report;

  const work: Array<{ plan: Plan; batch: Batch; ids: string[]; change: LabelChange }> = [];
  for (const p of plans) {
    const kinds = [
      { kind: 'return' as const, refs: p.back, change: { add: ['INBOX', 'UNREAD'], remove: [p.label.id] } },
      { kind: 'release' as const, refs: p.release, change: { add: [], remove: [p.label.id] } },
    ];
    for (const { kind, refs, change } of kinds) {
      for (const part of chunk(refs, BATCH_SIZE)) {
        const batch: Batch = {
          label: p.label.name,
          kind,
          messages: part.length,
          threadIds: [...new Set(part.map((m) => m.threadId))],
          outcome: 'not_attempted',
        };
        work.push({ plan: p, batch, ids: part.map((m) => m.id), change });
      }
    }
  }
  let stopped = false;
  const gate = ctx.gate ? await ctx.gate() : undefined;
  for (const [i, w] of work.entries()) {
    if (stopped || ctx.signal.aborted) break;
    try {
      await sweepBatch(ctx, gate, w);
      w.batch.outcome = 'ok';
    } catch (e) {
      const err = errorOf(e, ctx);
      w.batch.outcome = 'failed';
      w.batch.error = err;
      if (stopsTheRun(err.code as ErrorCode)) stopped = true;
    }
    await ctx.progress(i + 1, work.length, `batch ${i + 1} of ${work.length}`);
  }
  report.batches = work.map((w) => w.batch);
  report.ok = report.batches.every((b) => b.outcome === 'ok');
  const unfinished = new Set(
    work
      .filter((w) => w.batch.outcome !== 'ok' && w.batch.kind === 'return')
      .flatMap((w) => w.batch.threadIds),
  );
  report.returned = dueThreads.filter((t) => !unfinished.has(t));
  report.pending = dueThreads.filter((t) => unfinished.has(t));

  for (const p of plans) {
    const mine = work.filter((w) => w.plan === p);
    if (mine.some((w) => w.batch.outcome !== 'ok')) {
      report.labelsKept.push({ label: p.label.name, reason: 'a batch for it did not complete' });
      continue;
    }
    if (stopped) {
      report.labelsKept.push({
        label: p.label.name,
        reason: 'the sweep stopped early; the next one deletes it',
      });
      continue;
    }
    try {
      if (!(await isEmpty(ctx, p.label))) {
        report.labelsKept.push({ label: p.label.name, reason: 'messages still carry it' });
        continue;
      }
      await ctx.mailbox.deleteLabel(p.label.id, ctx.signal);
      report.labelsDeleted.push(p.label.name);
    } catch (e) {
      // Someone (another sweep) deleted it first: the goal is met.
      if (isMailError(e) && e.code === 'not_found') continue;
      report.labelsKept.push({ label: p.label.name, reason: errorOf(e, ctx).message });
    }
  }
  if (report.labelsDeleted.length > 0) forgetLabels(ctx.mailbox);
  return report;
}

export const sweepSnoozed = defineTool({
  name: 'sweep_snoozed',
  title: 'Return due snoozed threads',
  tier: 'manage',
  access: 'write',
  description:
    'Bring every snoozed thread that is due (server clock and zone) back to the inbox, marked unread, without its snooze label; emptied due labels are deleted. Per-batch results; running it again after a failure finishes the job. dryRun: only report what is due.',
  input: z.strictObject({ dryRun: z.boolean().default(false) }),
  output: sweepOutput,
  handle: (ctx, args) => runSweep(ctx, args.dryRun),
});
