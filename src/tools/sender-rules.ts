import { z } from 'zod';
import { MailError, isMailError } from '../mail/errors.js';
import { chunk } from '../mail/snooze-labels.js';
import type { GateIntent, GateItem, PerItemOutcome } from '../policy/gate.js';
import { senderRuleFor, senderRuleQueries } from '../policy/sender-rules.js';
import type { RuleMatch } from '../policy/sender-rules.js';
import type { LabelChange } from '../providers/mailbox.js';
import { readMessageItems } from './common/message-items.js';
import { agentLabelOf } from './common/guarded.js';
import type { ToolContext } from './common/define.js';
import { usage } from './common/schemas.js';

/*
 * Sender rules applied by the server (policy.json senderRules): inbox mail from a sender the
 * user has already decided on is archived or moved to spam without asking the model. Each move
 * goes through the write policy's gate as actor "rule", so every rule still holds (inbox-only,
 * protected correspondents, no sender) except the daily cap, which counts agent moves only; each
 * message gets its line in the action log with the sender rule that moved it.
 */

/** Messages one sweep takes (one batch per action at most); the next sweep takes the rest. */
export const RULE_SWEEP_LIMIT = 1000;
/** Gmail messages.batchModify takes at most 1000 ids (docs/facts.md); IMAP batches the same way. */
const BATCH = 1000;
/** The tool name rule moves carry in the action log. */
export const RULE_TOOL = 'sender-rules';

const CHANGES: Record<RuleMatch['action'], LabelChange> = {
  archive: { add: [], remove: ['INBOX'] },
  spam: { add: ['SPAM'], remove: ['INBOX'] },
};

export const ruleSweepSchema = z.object({
  account: z.string(),
  dryRun: z.boolean(),
  rules: z
    .object({ archive: z.number(), spam: z.number() })
    .describe('rules in policy.json for this account'),
  messages: z.array(
    z.object({
      id: z.string(),
      threadId: z.string(),
      sender: z.string().describe('the From address (from the message)'),
      action: z.enum(['archive', 'spam']),
      rule: z.string().describe('the sender rule that matched'),
      outcome: z
        .enum(['moved', 'wouldMove', 'refused', 'failed', 'unknown'])
        .describe('wouldMove: dryRun only; unknown: the write may or may not have happened'),
      refusedBy: z.string().optional().describe('the policy rule that refused it'),
      reason: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
  counts: z.object({
    matched: z.number(),
    moved: z.number(),
    wouldMove: z.number(),
    refused: z.number(),
    failed: z.number(),
    unknown: z.number(),
    notChecked: z.number().describe('inbox hits whose sender could not be read; left in place'),
  }),
  readError: z.object({ code: z.string(), message: z.string() }).optional(),
  more: z
    .boolean()
    .describe(`more candidates than one sweep takes (${RULE_SWEEP_LIMIT}); the next sweep goes on`),
  ok: z.boolean().describe('nothing failed, nothing unknown, every candidate checked'),
  usage,
});
export type RuleSweepReport = z.infer<typeof ruleSweepSchema>;
type Line = RuleSweepReport['messages'][number];

/** One real sweep per account at a time in this process: a second caller waits for the first. */
const running = new Map<string, Promise<RuleSweepReport>>();

/**
 * Applies the account's sender rules to its inbox now (dryRun: only says what would move). Used
 * by the serving server's timer, `mailwarden sweep-rules`, and the new-mail tools. Needs the
 * write policy (ctx.gate): without it nothing is moved.
 */
export async function sweepSenderRules(
  ctx: ToolContext,
  options: { dryRun: boolean },
): Promise<RuleSweepReport> {
  let report: RuleSweepReport;
  if (options.dryRun) report = await sweep(ctx, true);
  else {
    const account = ctx.mailbox.account;
    let p = running.get(account);
    if (p === undefined) {
      p = sweep(ctx, false).finally(() => running.delete(account));
      running.set(account, p);
    }
    report = await p;
  }
  // Senders come from mail: fenced for this caller's result (a joined sweep was another's).
  return {
    ...report,
    messages: report.messages.map((m) => ({ ...m, sender: ctx.fence.wrap(m.sender) })),
  };
}

function errorText(e: unknown): string {
  return isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}

async function sweep(ctx: ToolContext, dryRun: boolean): Promise<RuleSweepReport> {
  if (ctx.gate === undefined)
    throw new MailError(
      'internal_error',
      'sender rules run only under the write policy, and this context has none; nothing was moved',
    );
  const gate = await ctx.gate();
  const rules = gate.rules.senderRules;
  const before = ctx.mailbox.usage();
  const report: RuleSweepReport = {
    account: gate.account,
    dryRun,
    rules: { archive: rules.archive.length, spam: rules.spam.length },
    messages: [],
    counts: { matched: 0, moved: 0, wouldMove: 0, refused: 0, failed: 0, unknown: 0, notChecked: 0 },
    more: false,
    ok: true,
    usage: { requests: 0, quotaUnits: 0 },
  };
  if (rules.archive.length + rules.spam.length === 0) return report;

  // The sieve: the server's search, coarse on purpose; the exact match is below.
  const threadOf = new Map<string, string>();
  for (const query of senderRuleQueries(rules)) {
    if (report.more) break;
    let pageToken: string | undefined;
    do {
      const page = await ctx.mailbox.searchMessages(query, {
        maxResults: 500,
        signal: ctx.signal,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      for (const r of page.items) {
        if (threadOf.has(r.id)) continue;
        if (threadOf.size >= RULE_SWEEP_LIMIT) report.more = true;
        else threadOf.set(r.id, r.threadId);
      }
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined && !report.more);
    if (pageToken !== undefined) report.more = true;
  }
  const ids = [...threadOf.keys()];
  const { items, readError } = await readMessageItems(ctx, ids, threadOf);
  if (readError !== undefined) {
    report.readError = readError;
    report.counts.notChecked = ids.length - items.length;
  }

  // The rule, matched on the live From address of mail that is in the inbox now.
  const byAction = new Map<RuleMatch['action'], Array<GateItem & { senderRule: string }>>();
  for (const item of items) {
    if (!item.labelIds.includes('INBOX')) continue;
    const match = senderRuleFor(rules, item.sender);
    if (match === undefined) continue;
    const list = byAction.get(match.action) ?? [];
    list.push({ ...item, senderRule: match.rule });
    byAction.set(match.action, list);
  }

  for (const action of ['archive', 'spam'] as const) {
    const list = byAction.get(action);
    if (list === undefined) continue;
    const intent: GateIntent = { tool: RULE_TOOL, action, actor: 'rule' };
    const line = (
      item: (typeof list)[number],
      outcome: Line['outcome'],
      extra: Partial<Line> = {},
    ): Line => ({
      id: item.id,
      threadId: threadOf.get(item.id) ?? '',
      sender: item.sender ?? '',
      action,
      rule: item.senderRule,
      outcome,
      ...extra,
    });
    const byId = new Map(list.map((i) => [i.id, i]));
    // A preview outside the lock; gate.run judges again inside it.
    const verdicts = await gate.judge(list, intent);
    if (dryRun) {
      for (const v of verdicts) {
        const item = byId.get(v.id) as (typeof list)[number];
        report.messages.push(
          v.verdict === 'allowed'
            ? line(item, 'wouldMove')
            : line(item, 'refused', { refusedBy: v.rule ?? 'policy', reason: v.reason ?? '' }),
        );
      }
      continue;
    }
    // A refusal is reported at every sweep but logged once per message and process (gate.ts).
    const run = await gate.run(list, intent, (allowed) =>
      writeBatches(ctx, allowed, CHANGES[action], threadOf),
    );
    const results = new Map(run.results.map((r) => [r.id, r]));
    for (const item of list) {
      const r = results.get(item.id);
      if (r === undefined) continue;
      if (r.outcome === 'refused')
        report.messages.push(
          line(item, 'refused', { refusedBy: r.rule ?? 'policy', reason: r.reason ?? '' }),
        );
      else report.messages.push(line(item, r.outcome, r.error === undefined ? {} : { error: r.error }));
    }
  }

  const c = report.counts;
  for (const m of report.messages) {
    c.matched++;
    c[m.outcome]++;
  }
  report.ok = c.failed === 0 && c.unknown === 0 && c.notChecked === 0;
  const after = ctx.mailbox.usage();
  report.usage = {
    requests: after.requests - before.requests,
    quotaUnits: after.quotaUnits - before.quotaUnits,
  };
  return report;
}

/**
 * One modifyMessages per batch of the allowed messages. When a batch throws, the messages are
 * read back and what left the inbox is what moved: the log records what happened, not what was
 * asked. A message that cannot be read back is unknown (the write may have landed).
 */
async function writeBatches(
  ctx: ToolContext,
  allowed: readonly GateItem[],
  change: LabelChange,
  threadOf: Map<string, string>,
): Promise<PerItemOutcome[]> {
  const out: PerItemOutcome[] = [];
  const labelled = await agentLabelOf(ctx);
  for (const part of chunk(allowed, BATCH)) {
    const ids = part.map((i) => i.id);
    try {
      // No signal: a batch already sent may still land, and its outcome must be known.
      await ctx.mailbox.modifyMessages(ids, change, undefined, labelled);
      for (const id of ids) out.push({ id, outcome: 'moved' });
    } catch (e) {
      const error = errorText(e);
      const back = await readMessageItems(ctx, ids, threadOf);
      const live = new Map(back.items.map((i) => [i.id, i]));
      for (const id of ids) {
        const now = live.get(id);
        if (now === undefined) out.push({ id, outcome: 'unknown', error });
        else if (now.labelIds.includes('INBOX')) out.push({ id, outcome: 'failed', error });
        else out.push({ id, outcome: 'moved' });
      }
    }
  }
  return out;
}
