import { z } from 'zod';
import { mapBounded } from '../../mail/async.js';
import { ERROR_CODES, MailError, isMailError } from '../../mail/errors.js';
import type { ErrorCode } from '../../mail/errors.js';
import { headerValue, parseAddressList } from '../../mail/headers.js';
import type { MailMessage, MailPlace, MailThread } from '../../mail/types.js';
import { threadPlace } from '../../mail/place.js';
import type { Gate, GateIntent, GateItem, GateRun, PerItemOutcome } from '../../policy/gate.js';
import type { LabelChange, Mailbox, ThreadWriteOptions } from '../../providers/mailbox.js';
import { confirmChange, readConcurrency } from './define.js';
import type { ToolContext } from './define.js';

/*
 * The thread tools' path through the write policy (src/policy/gate.ts): each thread is judged on
 * its own from its live labels and senders, with the day's moves counted from the action log under
 * the account's write lock where the cap counts them; refused threads are reported with the rule
 * that refused them and never touched. A call is an error only when nothing changed.
 */

/** Threads read at once to judge them: a few for Gmail, all of them where reads are batched. */
const READS = 8;

export const refusedSchema = z
  .array(z.object({ threadId: z.string(), rule: z.string(), reason: z.string() }))
  .describe('refused by the write policy; untouched');

export interface GuardedReport {
  changed: Array<{ threadId: string; messages?: number; readBack?: boolean }>;
  failed: Array<{ threadId: string; code: string; message: string }>;
  refused: Array<{ threadId: string; rule: string; reason: string }>;
  notAttempted: string[];
  remainingToday?: number;
  usage: { requests: number; quotaUnits: number };
}

/**
 * A write whose answer never came (deadline, connection lost after sending): it may have landed.
 * Providers say so with a network_error that is not retryable.
 */
export function isOutcomeUnknown(e: unknown): boolean {
  return isMailError(e) && (e.code === 'network_error' || e.code === 'deadline_exceeded') && !e.retryable;
}

/** Whether every message of the thread carries the change now (a failed read says no). */
async function visibleNow(mailbox: Mailbox, threadId: string, change: LabelChange): Promise<boolean> {
  try {
    const t = await mailbox.getThread(threadId, { format: 'metadata', metadataHeaders: ['Message-ID'] });
    return (
      t.messages.length > 0 &&
      t.messages.every(
        (m) =>
          change.add.every((l) => m.labelIds.includes(l)) &&
          !change.remove.some((l) => m.labelIds.includes(l)),
      )
    );
  } catch {
    return false;
  }
}

/** One thread as the policy sees it: where its messages are, and who wrote them. */
/** IMAP: the copies of the messages a change moves, for the log (Gmail has none). */
export function placesOf(messages: readonly MailMessage[]): { places?: MailPlace[] } {
  const places = messages.flatMap((m) => m.places ?? []);
  return places.length > 0 ? { places } : {};
}

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
    place: threadPlace(t.messages),
    ...placesOf(moving),
  };
}

/**
 * One thread's write: the messages the judging read found (options.messageIds) and the labels it
 * saw on them (`labels`); returns the messages changed, when the provider says.
 */
export type ThreadWrite = (
  mailbox: Mailbox,
  threadId: string,
  options: ThreadWriteOptions,
  labels: readonly string[],
) => Promise<number | undefined>;

/**
 * Judges, then writes the allowed threads with `write` (which returns the messages changed), and
 * reports every thread: changed, failed, refused or notAttempted.
 */
export async function guardedPerThread(
  ctx: ToolContext,
  ids: readonly string[],
  intent: GateIntent,
  write: ThreadWrite,
  /** The labels the write leaves on every message: read back when its answer never came. */
  expect?: LabelChange,
  /**
   * Runs once, after every thread was judged and every confirmation asked, and only when some
   * thread is allowed (creating a label the write needs): a refused call writes nothing.
   */
  prepare?: () => Promise<void>,
): Promise<GuardedReport> {
  const before = ctx.mailbox.usage();
  const out: GuardedReport = { changed: [], failed: [], refused: [], notAttempted: [], usage: before };
  const items: GateItem[] = [];
  // A rate limit's wait, for the error when nothing changed (rate_limited keeps it).
  let retryAfter: number | undefined;
  if (ctx.gate !== undefined) await (await ctx.gate()).prepare(intent, ctx.signal);
  const reads = await mapBounded(ids, readConcurrency(ctx.mailbox, READS), async (id) => {
    try {
      return await ctx.mailbox.getThread(id, {
        signal: ctx.signal,
        format: 'metadata',
        metadataHeaders: ['From', 'Subject', 'Message-ID'],
        ...(expect === undefined ? {} : { forChange: expect }),
      });
    } catch (e) {
      if (isMailError(e) && e.retryAfterSeconds !== undefined) retryAfter ??= e.retryAfterSeconds;
      out.failed.push({
        threadId: id,
        code: isMailError(e) ? e.code : 'internal_error',
        message: String((e as Error).message ?? e),
      });
      return undefined;
    }
  });
  // The write changes exactly the messages judged here (a reply that arrives later was not judged).
  const judged = new Map<string, string[]>();
  for (const t of reads) {
    if (t === undefined) continue;
    items.push(gateItem(t, intent.action));
    judged.set(
      t.id,
      t.messages.map((m) => m.id),
    );
  }
  const { agentLabel } = await agentLabelOf(ctx);
  // After a rate limit the provider has already had its one wait: the rest is not attempted.
  let stopped = false;
  const writeAll = async (allowed: readonly GateItem[]): Promise<PerItemOutcome[]> => {
    const unready = await prepared(prepare, allowed, errors);
    if (unready !== undefined) return unready;
    const together = Math.min(allowed.length, writeConcurrency(ctx.mailbox, allowed.length));
    return mapBounded(allowed, together, async (item) => {
      if (ctx.signal.aborted) return { id: item.id, outcome: 'failed', error: 'not attempted: cancelled' };
      if (stopped) return { id: item.id, outcome: 'failed', error: 'not attempted: rate limited' };
      try {
        const messageIds = judged.get(item.id);
        const n = await write(
          ctx.mailbox,
          item.id,
          {
            ...(messageIds === undefined ? {} : { messageIds }),
            ...(agentLabel === undefined ? {} : { agentLabel }),
            together,
          },
          item.labelIds,
        );
        if (n !== undefined) counts.set(item.id, n);
        return { id: item.id, outcome: 'moved' };
      } catch (e) {
        if (isMailError(e) && e.code === 'rate_limited') stopped = true;
        if (isMailError(e) && e.retryAfterSeconds !== undefined) retryAfter ??= e.retryAfterSeconds;
        // A write whose answer was lost may have happened: unknown, and counted against the cap,
        // unless the thread's labels, read back now, show it did.
        const unknown = isOutcomeUnknown(e);
        if (unknown && expect !== undefined && (await visibleNow(ctx.mailbox, item.id, expect))) {
          readBack.add(item.id);
          return { id: item.id, outcome: 'moved' };
        }
        errors.set(item.id, e);
        return {
          id: item.id,
          outcome: unknown ? 'unknown' : 'failed',
          error: String((e as Error).message ?? e),
        };
      }
    });
  };
  const readBack = new Set<string>();
  const counts = new Map<string, number>();
  const errors = new Map<string, unknown>();
  if (ctx.gate === undefined) {
    for (const r of await writeAll(items)) record(out, r.id, r.outcome, counts, errors, readBack);
  } else {
    const run = await runThroughGate(ctx, ctx.gate, items, intent, 'thread', writeAll);
    for (const r of run.results) {
      if (r.outcome === 'refused')
        out.refused.push({ threadId: r.id, rule: r.rule ?? 'policy', reason: r.reason ?? '' });
      else record(out, r.id, r.outcome, counts, errors, readBack);
    }
    if (run.remainingToday !== null && run.remainingToday !== undefined)
      out.remainingToday = run.remainingToday;
  }
  out.usage = usageSince(ctx, before);
  const failure = nothingChanged(
    out.changed.length,
    out.refused.map((r) => ({ id: r.threadId, rule: r.rule, reason: r.reason })),
    out.failed.map((f) => ({ id: f.threadId, code: f.code, message: f.message })),
    'thread',
    retryAfter,
  );
  if (failure !== undefined) throw failure;
  return out;
}

/** Thread writes in flight at once: all of them where the provider gathers them into one request. */
const writeConcurrency = (mailbox: Mailbox, n: number): number =>
  mailbox.batchesWrites === true ? n : readConcurrency(mailbox, 4);

/** policy.json agentLabel, for the provider writes of a policy-judged call (none without a policy). */
export async function agentLabelOf(ctx: ToolContext): Promise<Pick<ThreadWriteOptions, 'agentLabel'>> {
  if (ctx.gate === undefined) return {};
  const label = (await ctx.gate()).rules.agentLabel;
  return label === null ? {} : { agentLabel: label };
}

/**
 * A call's preparation (a label to create) once something is allowed; when it fails, every
 * allowed item failed with its error and nothing else was written.
 */
export async function prepared(
  prepare: (() => Promise<void>) | undefined,
  allowed: readonly GateItem[],
  errors: Map<string, unknown>,
): Promise<PerItemOutcome[] | undefined> {
  if (prepare === undefined || allowed.length === 0) return undefined;
  try {
    await prepare();
    return undefined;
  } catch (e) {
    for (const i of allowed) errors.set(i.id, e);
    return allowed.map((i) => ({ id: i.id, outcome: 'failed', error: String((e as Error).message ?? e) }));
  }
}

/**
 * The gate's run over `items`. When the call would go over the daily cap and the policy lets a
 * human lift it, the human (not the model) is asked first, through elicitation; a decline or a
 * client that cannot ask leaves the cap in place.
 */
export async function runThroughGate(
  ctx: ToolContext,
  gateOf: () => Promise<Gate>,
  items: readonly GateItem[],
  intent: GateIntent,
  unit: 'thread' | 'message',
  writeAll: (allowed: readonly GateItem[]) => Promise<PerItemOutcome[]>,
): Promise<GateRun> {
  const gate = await gateOf();
  let capLifted = false;
  const overCap = (await gate.judge(items, intent, { call: ctx.signal })).filter(
    (v) => v.rule === 'daily-cap',
  ).length;
  if (overCap > 0 && gate.canLiftCap) {
    const left = (await gate.remaining()) ?? 0;
    const answer = await confirmChange(ctx, {
      message: `The daily limit on moving mail out of the inbox has ${left} left today; this ${intent.tool} would go ${overCap} ${unit}(s) over it. Allow it for this one call?`,
      details: { tool: intent.tool, overLimit: overCap, leftToday: left },
    }).catch((e: unknown) => {
      if (isMailError(e) && (e.code === 'declined_by_user' || e.code === 'forbidden_operation'))
        return 'declined';
      throw e;
    });
    capLifted = answer === 'confirmed';
  }
  return gate.run(items, intent, (allowed) => writeAll(allowed), { capLifted, call: ctx.signal });
}

/** Requests and quota units this call has spent since `before`. */
export function usageSince(
  ctx: ToolContext,
  before: { requests: number; quotaUnits: number },
): { requests: number; quotaUnits: number } {
  const after = ctx.mailbox.usage();
  return { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits };
}

/**
 * When nothing changed and something was refused or failed, the call is an error that says item
 * by item why; a write whose outcome is unknown may have changed something, so that is a report.
 */
export function nothingChanged(
  changed: number,
  refused: ReadonlyArray<{ id: string; rule: string; reason: string }>,
  failed: ReadonlyArray<{ id: string; code: string; message: string }>,
  unit: 'thread' | 'message',
  retryAfter: number | undefined,
): MailError | undefined {
  if (changed > 0 || failed.some((f) => f.code === 'unknown')) return undefined;
  if (refused.length === 0 && failed.length === 0) return undefined;
  const why = [
    ...refused.map((r) => `${r.id.slice(0, 24)}…: refused (${r.rule}): ${r.reason}`),
    ...failed.map((f) => `${f.id.slice(0, 24)}…: ${f.code}: ${f.message}`),
  ];
  const allRefused = failed.length === 0;
  const known = failed
    .map((f) => f.code)
    .find((c): c is ErrorCode => (ERROR_CODES as readonly string[]).includes(c));
  return new MailError(
    allRefused ? 'forbidden_operation' : (known ?? 'network_error'),
    `nothing was changed${allRefused ? `: the write policy refused every ${unit}` : ''} — ${why.join('; ')}`,
    {
      retryable: known === 'rate_limited',
      ...(known === 'rate_limited' && retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    },
  );
}

function record(
  out: GuardedReport,
  id: string,
  outcome: 'moved' | 'failed' | 'unknown',
  counts: ReadonlyMap<string, number>,
  errors: ReadonlyMap<string, unknown>,
  readBack: ReadonlySet<string>,
): void {
  if (outcome === 'moved') {
    const n = counts.get(id);
    out.changed.push({
      threadId: id,
      ...(n === undefined ? {} : { messages: n }),
      ...(readBack.has(id) ? { readBack: true } : {}),
    });
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
        ? `outcome unknown: ${String((e as Error)?.message ?? e)}${isOutcomeUnknown(e) ? ' (read back just now: the change is not on every message yet)' : ''}`
        : String((e as Error)?.message ?? e),
  });
}
