import { mapBounded } from '../../mail/async.js';
import { MailError, isMailError } from '../../mail/errors.js';
import type { MailMessage } from '../../mail/types.js';
import type { GateIntent, GateItem, PerItemOutcome } from '../../policy/gate.js';
import type { LabelChange } from '../../providers/mailbox.js';
import { messageItem } from './message-items.js';
import { readConcurrency } from './define.js';
import type { ToolContext } from './define.js';
import {
  agentLabelOf,
  isOutcomeUnknown,
  nothingChanged,
  prepared,
  runThroughGate,
  usageSince,
} from './guarded.js';

/*
 * The thread tools given messageIds: each message is judged on its own by the write policy
 * (src/policy/gate.ts) from its live labels and its own From, the allowed ones are written with
 * one modifyMessages per distinct change, and every message is then read back, so what is
 * reported changed is what the mailbox shows — modifyMessages itself answers nothing per id.
 */

/** Reads in flight (Gmail: one messages.get or thread read each; IMAP answers them together). */
const READS = 8;
const HEADERS = ['From', 'Subject', 'Message-ID'];

export interface MessageReport {
  changed: Array<{ messageId: string; readBack?: boolean }>;
  failed: Array<{ messageId: string; code: string; message: string }>;
  refused: Array<{ messageId: string; rule: string; reason: string }>;
  notAttempted: string[];
  remainingToday?: number;
  usage: { requests: number; quotaUnits: number };
}

/** One message's live labels and headers: messages.get where the provider has it, else its thread. */
export async function readOne(ctx: ToolContext, id: string): Promise<MailMessage> {
  const options = { format: 'metadata' as const, metadataHeaders: HEADERS, signal: ctx.signal };
  if (ctx.mailbox.getMessage) return ctx.mailbox.getMessage(id, options);
  const { threadId } = await ctx.mailbox.getMessageLabels(id, ctx.signal);
  const m = (await ctx.mailbox.getThread(threadId, options)).messages.find((x) => x.id === id);
  if (m === undefined) throw new MailError('not_found', `no message ${id.slice(0, 40)} on this account`);
  return m;
}

const errorOf = (e: unknown): { code: string; message: string } => ({
  code: isMailError(e) ? e.code : 'internal_error',
  message: String((e as Error)?.message ?? e),
});

/** Whether the message carries the change now (a missing label to remove counts as removed). */
const shows = (labels: readonly string[], change: LabelChange): boolean =>
  change.add.every((l) => labels.includes(l)) && !change.remove.some((l) => labels.includes(l));

/**
 * Judges each message, writes the allowed ones (`changeFor` gives a message's change from its
 * live labels), reads them back and reports each: changed, refused, failed or notAttempted.
 */
export async function guardedPerMessage(
  ctx: ToolContext,
  ids: readonly string[],
  intent: GateIntent,
  changeFor: (labels: readonly string[]) => LabelChange,
  /** As for threads (guardedPerThread): once, when something is allowed, before any write. */
  prepare?: () => Promise<void>,
): Promise<MessageReport> {
  const before = ctx.mailbox.usage();
  const out: MessageReport = { changed: [], failed: [], refused: [], notAttempted: [], usage: before };
  let retryAfter: number | undefined;
  const read = await mapBounded(ids, readConcurrency(ctx.mailbox, READS), async (id) => {
    try {
      return await readOne(ctx, id);
    } catch (e) {
      if (isMailError(e) && e.retryAfterSeconds !== undefined) retryAfter ??= e.retryAfterSeconds;
      out.failed.push({ messageId: id, ...errorOf(e) });
      return undefined;
    }
  });
  const messages = new Map(read.flatMap((m) => (m === undefined ? [] : [[m.id, m] as const])));
  const items: GateItem[] = [...messages.values()].map(messageItem);
  const changes = new Map<string, LabelChange>();

  const writeAll = async (allowed: readonly GateItem[]): Promise<PerItemOutcome[]> => {
    const unready = await prepared(prepare, allowed, failures);
    if (unready !== undefined) return unready;
    for (const m of messages.values()) changes.set(m.id, changeFor(m.labelIds));
    if (ctx.signal.aborted)
      return allowed.map((i) => ({ id: i.id, outcome: 'failed', error: 'not attempted: cancelled' }));
    // One modifyMessages per distinct change (restore takes some from Trash, some from Spam).
    const groups = new Map<string, { change: LabelChange; ids: string[] }>();
    const already = new Set<string>();
    for (const item of allowed) {
      const change = changes.get(item.id) as LabelChange;
      // Gmail refuses a modify that changes nothing; a message already so is simply changed.
      if (shows(messages.get(item.id)?.labelIds ?? [], change)) {
        already.add(item.id);
        continue;
      }
      const key = JSON.stringify(change);
      const g = groups.get(key) ?? { change, ids: [] };
      g.ids.push(item.id);
      groups.set(key, g);
    }
    const errors = new Map<string, unknown>();
    const labelled = await agentLabelOf(ctx);
    for (const g of groups.values()) {
      try {
        await ctx.mailbox.modifyMessages(g.ids, g.change, ctx.signal, labelled);
      } catch (e) {
        if (isMailError(e) && e.retryAfterSeconds !== undefined) retryAfter ??= e.retryAfterSeconds;
        for (const id of g.ids) errors.set(id, e);
      }
    }
    // What the mailbox shows now decides each message, whatever the write answered.
    const after = await mapBounded(allowed, readConcurrency(ctx.mailbox, READS), async (item) => {
      if (already.has(item.id)) return { id: item.id, ok: true };
      try {
        // The cheapest read with live labels (Gmail format=minimal; IMAP: every copy's place).
        const m = await ctx.mailbox.getMessageLabels(item.id, ctx.signal);
        return { id: item.id, ok: shows(m.labelIds, changes.get(item.id) as LabelChange) };
      } catch {
        return { id: item.id, ok: false };
      }
    });
    return after.map(({ id, ok }): PerItemOutcome => {
      const e = errors.get(id);
      if (ok) {
        if (e !== undefined) readBack.add(id);
        return { id, outcome: 'moved' };
      }
      if (e === undefined)
        return {
          id,
          outcome: 'failed',
          error: 'not changed: the message read back afterwards does not show the change',
        };
      failures.set(id, e);
      return { id, outcome: isOutcomeUnknown(e) ? 'unknown' : 'failed', error: errorOf(e).message };
    });
  };
  const readBack = new Set<string>();
  const failures = new Map<string, unknown>();

  const record = (r: { id: string; outcome: string; rule?: string; reason?: string; error?: string }) => {
    if (r.outcome === 'moved')
      out.changed.push({ messageId: r.id, ...(readBack.has(r.id) ? { readBack: true } : {}) });
    else if (r.outcome === 'refused')
      out.refused.push({ messageId: r.id, rule: r.rule ?? 'policy', reason: r.reason ?? '' });
    else if (r.error?.startsWith('not attempted')) out.notAttempted.push(r.id);
    else {
      const e = failures.get(r.id);
      out.failed.push({
        messageId: r.id,
        code:
          r.outcome === 'unknown' ? 'unknown' : e === undefined ? 'upstream_unavailable' : errorOf(e).code,
        message: r.outcome === 'unknown' ? `outcome unknown: ${r.error ?? ''}` : (r.error ?? ''),
      });
    }
  };
  if (ctx.gate === undefined) {
    for (const r of await writeAll(items)) record(r);
  } else {
    const run = await runThroughGate(ctx, ctx.gate, items, intent, 'message', writeAll);
    for (const r of run.results) record(r);
    if (run.remainingToday !== null && run.remainingToday !== undefined)
      out.remainingToday = run.remainingToday;
  }
  out.usage = usageSince(ctx, before);
  const failure = nothingChanged(
    out.changed.length,
    out.refused.map((r) => ({ id: r.messageId, rule: r.rule, reason: r.reason })),
    out.failed.map((f) => ({ id: f.messageId, code: f.code, message: f.message })),
    'message',
    retryAfter,
  );
  if (failure !== undefined) throw failure;
  return out;
}
