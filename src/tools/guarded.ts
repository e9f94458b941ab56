import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { ERROR_CODES, MailError, isMailError } from '../mail/errors.js';
import type { ErrorCode } from '../mail/errors.js';
import { headerValue, parseAddressList } from '../mail/headers.js';
import type { MailThread } from '../mail/types.js';
import type { GateIntent, GateItem, PerItemOutcome } from '../policy/gate.js';
import type { Mailbox } from '../providers/mailbox.js';
import { confirmChange, readConcurrency } from './define.js';
import type { ToolContext } from './define.js';

/*
 * The thread tools' path through the write policy (src/policy/gate.ts): each thread is judged on
 * its own from its live labels and senders, under the account's write lock, with the day's moves
 * counted from the action log; refused threads are reported with the rule that refused them and
 * never touched. A call is an error only when nothing changed.
 */

/** Threads read at once to judge them: a few for Gmail, all of them where reads are batched. */
const READS = 8;

export const refusedSchema = z
  .array(z.object({ threadId: z.string(), rule: z.string(), reason: z.string() }))
  .describe('refused by the write policy (README "What the server enforces"), untouched');

export interface GuardedReport {
  changed: Array<{ threadId: string; messages?: number }>;
  failed: Array<{ threadId: string; code: string; message: string }>;
  refused: Array<{ threadId: string; rule: string; reason: string }>;
  notAttempted: string[];
  remainingToday?: number;
  usage: { requests: number; quotaUnits: number };
}

/** One thread as the policy sees it: where its messages are, and who wrote them. */
export function gateItem(t: MailThread, action: GateIntent['action']): GateItem {
  const labels = [...new Set(t.messages.flatMap((m) => m.labelIds))];
  // The user's own messages say nothing about who the conversation is with.
  const theirs = t.messages.filter((m) => !m.labelIds.includes('SENT') && !m.labelIds.includes('DRAFT'));
  const judged = theirs.length > 0 ? theirs : t.messages;
  const froms = judged.map((m) => headerValue(m.headers, 'From') ?? '');
  const first = parseAddressList(froms[0] ?? '')[0]?.address;
  const moving = action === 'restore' ? t.messages : t.messages.filter((m) => m.labelIds.includes('INBOX'));
  const subject = headerValue(t.messages[0]?.headers ?? [], 'Subject');
  const messageId = headerValue(t.messages[0]?.headers ?? [], 'Message-ID');
  return {
    id: t.id,
    kind: 'thread',
    messageCount: Math.max(1, moving.length),
    sender: first === undefined || first === '' ? undefined : first,
    senderHeader: froms.filter((f) => f !== '').join(', '),
    ...(subject === undefined ? {} : { subject }),
    ...(messageId === undefined ? {} : { messageId }),
    labelIds: labels,
  };
}

/**
 * Judges, then writes the allowed threads with `write` (which returns the messages changed), and
 * reports every thread: changed, failed, refused or notAttempted.
 */
export async function guardedPerThread(
  ctx: ToolContext,
  ids: readonly string[],
  intent: GateIntent,
  write: (mailbox: Mailbox, threadId: string) => Promise<number | undefined>,
): Promise<GuardedReport> {
  const before = ctx.mailbox.usage();
  const out: GuardedReport = { changed: [], failed: [], refused: [], notAttempted: [], usage: before };
  const items: GateItem[] = [];
  const reads = await mapBounded(ids, readConcurrency(ctx.mailbox, READS), async (id) => {
    try {
      return await ctx.mailbox.getThread(id, {
        format: 'metadata',
        metadataHeaders: ['From', 'Subject', 'Message-ID'],
      });
    } catch (e) {
      out.failed.push({
        threadId: id,
        code: isMailError(e) ? e.code : 'internal_error',
        message: String((e as Error).message ?? e),
      });
      return undefined;
    }
  });
  for (const t of reads) if (t !== undefined) items.push(gateItem(t, intent.action));
  const writeAll = async (allowed: readonly GateItem[]): Promise<PerItemOutcome[]> =>
    mapBounded(allowed, readConcurrency(ctx.mailbox, 4), async (item) => {
      if (ctx.signal.aborted) return { id: item.id, outcome: 'failed', error: 'not attempted: cancelled' };
      try {
        const n = await write(ctx.mailbox, item.id);
        if (n !== undefined) counts.set(item.id, n);
        return { id: item.id, outcome: 'moved' };
      } catch (e) {
        errors.set(item.id, e);
        // A write whose answer was lost may have happened: unknown, and counted against the cap.
        const unknown = isMailError(e) && e.code === 'network_error' && !e.retryable;
        return {
          id: item.id,
          outcome: unknown ? 'unknown' : 'failed',
          error: String((e as Error).message ?? e),
        };
      }
    });
  const counts = new Map<string, number>();
  const errors = new Map<string, unknown>();
  if (ctx.gate === undefined) {
    for (const r of await writeAll(items)) record(out, r.id, r.outcome, counts, errors);
  } else {
    const gate = await ctx.gate();
    let capLifted = false;
    const preview = await gate.judge(items, intent);
    const overCap = preview.filter((v) => v.rule === 'daily-cap').length;
    if (overCap > 0 && gate.canLiftCap) {
      // A human, not the model, may lift the cap for this one call (elicitation).
      const left = (await gate.remaining()) ?? 0;
      const answer = await confirmChange(ctx, {
        message: `The daily limit on moving mail out of the inbox has ${left} left today; this ${intent.tool} would go ${overCap} thread(s) over it. Allow it for this one call?`,
        details: { tool: intent.tool, overLimit: overCap, leftToday: left },
      }).catch((e: unknown) => {
        if (isMailError(e) && (e.code === 'declined_by_user' || e.code === 'forbidden_operation'))
          return 'declined';
        throw e;
      });
      capLifted = answer === 'confirmed';
    }
    const run = await gate.run(items, intent, (allowed) => writeAll(allowed), { capLifted });
    for (const r of run.results) {
      if (r.outcome === 'refused')
        out.refused.push({ threadId: r.id, rule: r.rule ?? 'policy', reason: r.reason ?? '' });
      else record(out, r.id, r.outcome, counts, errors);
    }
    if (run.remainingToday !== null && run.remainingToday !== undefined)
      out.remainingToday = run.remainingToday;
  }
  const after = ctx.mailbox.usage();
  out.usage = {
    requests: after.requests - before.requests,
    quotaUnits: after.quotaUnits - before.quotaUnits,
  };
  if (out.changed.length === 0 && (out.refused.length > 0 || out.failed.length > 0)) {
    // Nothing changed: the call is an error, and says item by item why.
    const why = [
      ...out.refused.map((r) => `${r.threadId.slice(0, 24)}…: refused (${r.rule}): ${r.reason}`),
      ...out.failed.map((f) => `${f.threadId.slice(0, 24)}…: ${f.code}: ${f.message}`),
    ];
    const allRefused = out.failed.length === 0;
    const known = out.failed
      .map((f) => f.code)
      .find((c): c is ErrorCode => (ERROR_CODES as readonly string[]).includes(c));
    throw new MailError(
      allRefused ? 'forbidden_operation' : (known ?? 'network_error'),
      `nothing was changed${allRefused ? ': the write policy refused every thread' : ''} — ${why.join('; ')}`,
      { retryable: false },
    );
  }
  return out;
}

function record(
  out: GuardedReport,
  id: string,
  outcome: 'moved' | 'failed' | 'unknown',
  counts: ReadonlyMap<string, number>,
  errors: ReadonlyMap<string, unknown>,
): void {
  if (outcome === 'moved') {
    const n = counts.get(id);
    out.changed.push({ threadId: id, ...(n === undefined ? {} : { messages: n }) });
    return;
  }
  const e = errors.get(id);
  if (outcome === 'failed' && e === undefined) {
    out.notAttempted.push(id);
    return;
  }
  out.failed.push({
    threadId: id,
    code: outcome === 'unknown' ? 'unknown' : isMailError(e) ? e.code : 'internal_error',
    message:
      outcome === 'unknown'
        ? `outcome unknown: ${String((e as Error)?.message ?? e)}`
        : String((e as Error)?.message ?? e),
  });
}
