import { z } from 'zod';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import type { MessageRef } from '../../mail/types.js';
import type { Gate, GateIntent, GateItem, PerItemOutcome } from '../../policy/gate.js';
import type { LabelChange } from '../../providers/mailbox.js';
import type { ResolvedChange } from '../common/label-changes.js';
import type { ToolContext } from '../common/define.js';
import { readMessageItems } from '../common/message-items.js';
import { confirmChange } from '../common/define.js';
import type { ChunkGuard, ChunkJudged } from './chunks.js';
import { ID_SAMPLE } from './verify.js';

/*
 * bulk_modify through the write policy (src/policy/gate.ts). A bulk move out of the inbox is
 * held to the day's remainder before anything is written, and then each chunk goes through the
 * gate with one item per message, so the cap counts exactly the messages that were sent and every
 * message gets its line in the action log. The per-message rules (inbox-only, protected
 * correspondents) need live labels and a From: a chunk's threads are read as metadata then, and
 * only then, since a policy with both rules off judges nothing per message.
 */

/** Thread reads in flight while a chunk is judged (Gmail: 10 units each; IMAP batches them). */

/** Labels that say where a message is; a change that adds them is a move, not a label. */
const LOCATIONS: ReadonlySet<string> = new Set(['INBOX', 'SPAM', 'TRASH']);

export type BulkMove = 'archive' | 'spam' | 'trash';

/** The move out of the inbox a change of label ids makes, the way modify.ts judges a thread change. */
export function moveOf(change: LabelChange): BulkMove | undefined {
  if (change.add.includes('TRASH')) return 'trash';
  if (change.add.includes('SPAM')) return 'spam';
  if (change.remove.includes('INBOX')) return 'archive';
  return undefined;
}

/** A move out, a restore (INBOX added, or Trash/Spam left), or undefined for a label change. */
export function guardedAction(change: LabelChange): BulkMove | 'restore' | undefined {
  const out = moveOf(change);
  if (out !== undefined) return out;
  if (change.add.includes('INBOX') || change.remove.some((l) => l === 'TRASH' || l === 'SPAM'))
    return 'restore';
  return undefined;
}

/** The same for a change not yet materialised (labels to create cannot be system labels). */
export function bulkMoveOut(resolved: ResolvedChange): BulkMove | undefined {
  return moveOf({
    add: resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label.id] : [])),
    remove: resolved.remove.map((l) => l.id),
  });
}

/**
 * What the write policy judges a label change as, before any label is created: removing INBOX
 * is archiving, adding SPAM or TRASH is moving there, adding INBOX back is a restore; an IMAP user
 * folder added or removed is a move the label tools do not make (the gate refuses it); anything
 * else is a label change. Taking mail out of Trash or Spam without saying where it goes is
 * refused as input: Gmail would leave it in the archive and IMAP servers put it in the inbox.
 */
export function changeIntent(tool: string, resolved: ResolvedChange): GateIntent {
  const added = resolved.add.flatMap((w) => (w.kind === 'existing' ? [w.label] : []));
  const add = added.map((l) => l.id);
  const remove = resolved.remove.map((l) => l.id);
  const names = {
    addLabels: resolved.add.map((w) => (w.kind === 'existing' ? w.label.name : w.name)),
    removeLabels: resolved.remove.map((l) => l.name),
  };
  const folders = [...added, ...resolved.remove].filter((l) => l.folder === true).map((l) => l.name);
  if (folders.length > 0) return { tool, action: 'label', actor: 'agent', ...names, folders };
  const leaving = remove.filter((l) => l === 'TRASH' || l === 'SPAM');
  if (leaving.length > 0 && !add.some((l) => l === 'INBOX' || l === 'TRASH' || l === 'SPAM'))
    throw invalidInput(
      'remove',
      `removing ${leaving.join(' and ')} alone takes mail out of it without saying where it goes (Gmail leaves it in the archive, IMAP servers put it in the inbox): add INBOX as well, or use restore / untrash`,
    );
  const action = guardedAction({ add, remove });
  if (action !== undefined) return { tool, action, actor: 'agent' };
  return { tool, action: 'label', actor: 'agent', ...names };
}

export const bulkRefusedSchema = z
  .object({
    messages: z.number(),
    reasons: z.array(
      z.object({
        rule: z.string(),
        reason: z.string(),
        messages: z.number(),
        messageIds: z.array(z.string()).describe(`first ${ID_SAMPLE}`),
      }),
    ),
  })
  .describe('refused by the write policy (README "What the server enforces"), never sent');

export type BulkRefused = z.infer<typeof bulkRefusedSchema>;

/** A bulk call is an error only when nothing changed, as for threads (guarded.ts). */
export function refusedEverything(refused: BulkRefused): MailError {
  return new MailError(
    'forbidden_operation',
    `nothing was changed: the write policy refused every message — ${refused.reasons.map((r) => `${r.rule}: ${r.reason}`).join('; ')}`,
    { retryable: false },
  );
}

/**
 * The labels a change applies must be in allowedLabels (a move's own labels are judged as the
 * move), whether or not the change also moves mail. Judged once for the call, before any label
 * is created: the rule does not depend on the message. Throws
 * forbidden_operation with the policy's reason; nothing is written or created.
 */
export async function checkAppliedLabels(gate: Gate, resolved: ResolvedChange, tool: string): Promise<void> {
  const names = resolved.add.flatMap((w) =>
    w.kind === 'create' ? [w.name] : LOCATIONS.has(w.label.id) ? [] : [w.label.name],
  );
  if (names.length === 0) return;
  const call: GateItem = {
    id: tool,
    kind: 'message',
    messageCount: 1,
    sender: undefined,
    senderHeader: '',
    labelIds: [],
  };
  const [v] = await gate.judge([call], { tool, action: 'label', actor: 'agent', addLabels: names });
  if (v?.verdict === 'refused')
    throw new MailError(
      'forbidden_operation',
      `nothing was changed: ${v.rule ?? 'policy'}: ${v.reason ?? ''}`,
      {
        retryable: false,
      },
    );
}

/**
 * Refuses the whole call when the policy refuses its change whatever the message (a label change
 * that would move mail between IMAP folders): nothing is read, created or written.
 */
export async function checkChangeAllowed(gate: Gate, intent: GateIntent): Promise<void> {
  if (intent.action !== 'label' || (intent.folders ?? []).length === 0) return;
  const call: GateItem = {
    id: intent.tool,
    kind: 'message',
    messageCount: 1,
    sender: undefined,
    senderHeader: '',
    labelIds: [],
  };
  const [v] = await gate.judge([call], intent);
  if (v?.verdict === 'refused')
    throw new MailError(
      'forbidden_operation',
      `nothing was changed: ${v.rule ?? 'policy'}: ${v.reason ?? ''}`,
      {
        retryable: false,
      },
    );
}

/**
 * Holds a bulk move out to the day's remainder before anything is written or asked. Over it, a
 * human may lift the cap for this one call (elicitation, where the policy allows); `alsoAsk`
 * folds a confirmation the call asks anyway into the same question, since a call asks once.
 * Returns whether the cap was lifted and the confirmation outcome, when one was asked.
 */
export async function preflightMove(
  ctx: ToolContext,
  gate: Gate,
  tool: string,
  count: number,
  alsoAsk: { message: string; details: Record<string, string> } | undefined,
): Promise<{ capLifted: boolean; confirmation?: 'confirmed' | 'not_required' | 'unavailable' }> {
  const left = await gate.remaining();
  if (left === null || count <= left || !gate.canLiftCap) {
    await gate.preflightBulk(count);
    return { capLifted: false };
  }
  const over = `The daily limit on moving mail out of the inbox has ${left} left today; this change would move ${count} messages. Allow it for this one call?`;
  const ask = confirmChange(ctx, {
    message: alsoAsk === undefined ? over : `${alsoAsk.message} ${over}`,
    details: { ...alsoAsk?.details, tool, messages: count, leftToday: left },
  });
  // Asked only for the cap, a "no" leaves the cap standing and the refusal below says why; asked
  // for the whole change too, a "no" is a "no" to the change.
  const answer =
    alsoAsk === undefined
      ? await ask.catch((e: unknown) => {
          if (isMailError(e) && (e.code === 'declined_by_user' || e.code === 'forbidden_operation'))
            return 'declined' as const;
          throw e;
        })
      : await ask;
  const capLifted = answer === 'confirmed';
  await gate.preflightBulk(count, { capLifted });
  return { capLifted, ...(answer === 'declined' ? {} : { confirmation: answer }) };
}

export interface PolicyChunks {
  guard: ChunkGuard;
  /** What the gate refused so far, grouped by rule and reason. */
  refused(): BulkRefused | undefined;
  /** Agent moves left today after the last chunk; undefined before one ran or with the cap off. */
  remainingToday(): number | undefined;
}

/**
 * The chunk guard for bulk writes: a chunk whose change moves mail out of the inbox has each of
 * its messages judged and only the allowed ones written; any other chunk is written as it is.
 * `refs` tell each message's thread; one not among them is looked up first (an undo plan has
 * message ids only).
 */
export function policyChunks(
  ctx: ToolContext,
  gate: Gate,
  tool: string,
  refs: readonly MessageRef[],
  capLifted: boolean,
  /** Once, before the first write, when some message is allowed (labels the change needs). */
  prepare?: () => Promise<void>,
): PolicyChunks {
  let ready: Promise<void> | undefined;
  const threadOf = new Map(refs.map((r) => [r.id, r.threadId]));
  const needReads = gate.rules.inboxOnlyMoves || gate.rules.protectCorrespondents;
  const groups = new Map<string, { rule: string; reason: string; ids: string[] }>();
  let refusedTotal = 0;
  let remaining: number | undefined;

  /** The chunk's messages with live labels and From, from one metadata read per thread. */
  async function itemsOf(
    ids: readonly string[],
  ): Promise<{ items: GateItem[]; readError?: ChunkJudged['readError'] }> {
    if (!needReads)
      return {
        items: ids.map((id) => ({
          id,
          kind: 'message',
          messageCount: 1,
          sender: undefined,
          senderHeader: '',
          labelIds: [],
        })),
      };
    return readMessageItems(ctx, ids, threadOf);
  }

  const guard: ChunkGuard = async (ids, change, write) => {
    const action = guardedAction(change);
    if (action === undefined) {
      await write(ids);
      return { refused: 0, unjudged: 0 };
    }
    const { items, readError } = await itemsOf(ids);
    const run = await gate.run(
      items,
      { tool, action, actor: 'agent' },
      async (allowed): Promise<PerItemOutcome[]> => {
        try {
          if (allowed.length > 0 && prepare !== undefined) await (ready ??= prepare());
          await write(allowed.map((i) => i.id));
          return allowed.map((i) => ({ id: i.id, outcome: 'moved' }));
        } catch (e) {
          // As for threads (guarded.ts): a write whose answer was lost may have happened, and counts.
          const unknown = isMailError(e) && e.code === 'network_error' && !e.retryable;
          const error = String((e as Error).message ?? e);
          return allowed.map((i) => ({ id: i.id, outcome: unknown ? 'unknown' : 'failed', error }));
        }
      },
      { capLifted },
    );
    let refused = 0;
    for (const r of run.results) {
      if (r.outcome !== 'refused') continue;
      refused++;
      const rule = r.rule ?? 'policy';
      const reason = r.reason ?? '';
      const key = `${rule}\u0000${reason}`;
      const g = groups.get(key) ?? { rule, reason, ids: [] };
      g.ids.push(r.id);
      groups.set(key, g);
    }
    refusedTotal += refused;
    if (run.remainingToday !== null) remaining = run.remainingToday;
    return {
      refused,
      unjudged: ids.length - items.length,
      ...(readError === undefined ? {} : { readError }),
    };
  };

  return {
    guard,
    refused: () =>
      refusedTotal === 0
        ? undefined
        : {
            messages: refusedTotal,
            reasons: [...groups.values()].map((g) => ({
              rule: g.rule,
              reason: g.reason,
              messages: g.ids.length,
              messageIds: g.ids.slice(0, ID_SAMPLE),
            })),
          },
    remainingToday: () => remaining,
  };
}
