import { mapBounded } from '../mail/async.js';
import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import { snoozeLabelsOf } from '../mail/snooze-labels.js';
import type { GateIntent, GateItem, PerItemOutcome } from '../policy/gate.js';
import { serverTimeZone } from '../policy/move-cap.js';
import type { MoveAction } from '../policy/move-log.js';
import type { LabelChange } from '../providers/mailbox.js';
import { messageItem } from '../tools/common/message-items.js';
import { readConcurrency } from '../tools/common/define.js';
import type { ToolContext } from '../tools/common/define.js';
import { readOne } from '../tools/common/guarded-messages.js';
import { gateItem, isOutcomeUnknown, runThroughGate } from '../tools/common/guarded.js';
import type { LogItem, LogView } from './log-view.js';
import { undoable } from './log-view.js';

/*
 * A person puts back what agent or rule moves took out of the inbox (`mailwarden undo`, the
 * review page). Each restore is a write like any other: judged by the write policy's gate as
 * actor "human" (never capped), logged intent and outcome, on the same logged mailbox a tool call
 * gets. Only what is still where the move put it comes back: mail the person has moved since, or
 * that a later move took elsewhere, stays where it is, and the report says so item by item.
 */

export interface UndoSelection {
  /** A call id, or its first 8 or more characters (as `mailwarden log` prints it). */
  call?: string;
  /** Items first written at or after this instant (ms). */
  since?: number;
  /** Log ids (message or thread ids) or Message-ID headers. */
  items?: readonly string[];
}

export interface UndoPick {
  chosen: LogItem[];
  /** --item values that name no undoable item in the log. */
  unmatched: string[];
}

/** Picks the undoable items of a view that a selection names (exactly one way of naming). */
export function pickForUndo(view: LogView, sel: UndoSelection): UndoPick {
  const given = [sel.call, sel.since, sel.items].filter((x) => x !== undefined).length;
  if (given !== 1)
    throw invalidInput('call', 'give exactly one of --call ID, --since TIME or --item ID (one or more)');
  const all = view.calls.flatMap((c) => c.items).filter(undoable);
  if (sel.call !== undefined) {
    const want = sel.call.trim().toLowerCase();
    if (want.length < 8) throw invalidInput('call', 'give at least the first 8 characters of the call id');
    const calls = new Set(all.filter((i) => i.call?.startsWith(want)).map((i) => i.call));
    if (calls.size > 1)
      throw invalidInput('call', `"${want}" starts ${calls.size} call ids; give more of it`);
    return { chosen: all.filter((i) => i.call !== undefined && calls.has(i.call)), unmatched: [] };
  }
  if (sel.since !== undefined) {
    const since = sel.since;
    return { chosen: all.filter((i) => i.at >= since), unmatched: [] };
  }
  const chosen: LogItem[] = [];
  const unmatched: string[] = [];
  for (const raw of sel.items ?? []) {
    const want = raw.trim();
    const header = cleanMessageIdText(want);
    const hits = all.filter(
      (i) => i.ids.includes(want) || (header !== undefined && cleanMessageIdText(i.messageId) === header),
    );
    if (hits.length === 0) unmatched.push(raw);
    chosen.push(...hits);
  }
  return { chosen: [...new Set(chosen)], unmatched };
}

/** A Message-ID header as people paste it, with or without <>; undefined when it is not one. */
function cleanMessageIdText(v: string | undefined): string | undefined {
  const m = /^\s*<?([^<>\s]+@[^<>\s]+)>?\s*$/.exec(v ?? '');
  return m?.[1];
}

export type UndoStatus = 'restored' | 'would restore' | 'not restored';

export interface UndoOutcome {
  id: string;
  unit: 'message' | 'thread';
  /** The move being undone. */
  action: MoveAction;
  call?: string;
  sender?: string;
  subject?: string;
  status: UndoStatus;
  /** Why it was not restored (or what a dry run found). */
  why?: string;
}

type Place = 'INBOX' | 'TRASH' | 'SPAM' | 'DRAFT' | 'SENT' | 'ARCHIVE';

const NAMES: Record<Place, string> = {
  INBOX: 'the inbox',
  TRASH: 'Trash',
  SPAM: 'Spam',
  DRAFT: 'Drafts',
  SENT: 'Sent',
  ARCHIVE: 'the archive',
};

/** Where the mail is now; Trash and Spam win over every other label. */
function placeOf(labels: readonly string[], kind: 'message' | 'thread'): Place {
  if (labels.includes('TRASH')) return 'TRASH';
  if (labels.includes('SPAM')) return 'SPAM';
  if (labels.includes('INBOX')) return 'INBOX';
  if (labels.includes('DRAFT')) return 'DRAFT';
  if (kind === 'message' && labels.includes('SENT')) return 'SENT';
  return 'ARCHIVE';
}

/** Where each move leaves mail (snoozed mail is out of the inbox, under a snooze label). */
const PUT: Partial<Record<MoveAction, Place>> = {
  archive: 'ARCHIVE',
  spam: 'SPAM',
  trash: 'TRASH',
  snooze: 'ARCHIVE',
};

interface Live {
  item: LogItem;
  id: string;
  gate: GateItem;
  labels: string[];
}

const READS = 8;

function errorText(e: unknown): string {
  return isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}

function outcome(item: LogItem, id: string, status: UndoStatus, why?: string): UndoOutcome {
  return {
    id,
    unit: item.unit,
    action: item.action,
    ...(item.call === undefined ? {} : { call: item.call }),
    ...(item.sender === undefined ? {} : { sender: item.sender }),
    ...(item.subject === undefined ? {} : { subject: item.subject }),
    status,
    ...(why === undefined ? {} : { why }),
  };
}

/**
 * Restores the chosen items (dryRun: says what would come back). One id named by several items
 * (moved, restored, moved again) is judged once, by its newest move.
 */
export async function restoreItems(
  ctx: ToolContext,
  items: readonly LogItem[],
  options: { dryRun: boolean; tool: string },
): Promise<UndoOutcome[]> {
  const newest = new Map<string, LogItem>();
  for (const item of [...items].sort((a, b) => a.at - b.at))
    for (const id of item.ids) newest.set(`${item.unit}\u0000${id}`, item);
  const wanted = [...newest.entries()].map(([key, item]) => ({ id: key.split('\u0000')[1] as string, item }));
  const out: UndoOutcome[] = [];
  const live: Live[] = [];
  const reads = await mapBounded(wanted, readConcurrency(ctx.mailbox, READS), async ({ id, item }) => {
    try {
      if (item.unit === 'thread') {
        const t = await ctx.mailbox.getThread(id, {
          format: 'metadata',
          metadataHeaders: ['From', 'Subject', 'Message-ID'],
          signal: ctx.signal,
        });
        const g = gateItem(t, 'restore');
        return { item, id, gate: g, labels: [...g.labelIds] } satisfies Live;
      }
      const m = await readOne(ctx, id);
      return { item, id, gate: messageItem(m), labels: [...m.labelIds] } satisfies Live;
    } catch (e) {
      const why =
        isMailError(e) && e.code === 'not_found'
          ? 'not found in the mailbox: deleted since, or (IMAP, mail without a Message-ID) its id was its place and it has moved'
          : `could not be read: ${errorText(e)}`;
      out.push(outcome(item, id, 'not restored', why));
      return undefined;
    }
  });
  for (const r of reads) {
    if (r === undefined) continue;
    const where = placeOf(r.labels, r.item.unit);
    const put = PUT[r.item.action] ?? 'ARCHIVE';
    if (where === 'INBOX') out.push(outcome(r.item, r.id, 'not restored', 'already in the inbox'));
    else if (where !== put)
      out.push(
        outcome(
          r.item,
          r.id,
          'not restored',
          `it is in ${NAMES[where]} now, not in ${NAMES[put]} where the ${r.item.actor === 'rule' ? 'rule' : 'agent'} put it; left where it is`,
        ),
      );
    else if (options.dryRun) out.push(outcome(r.item, r.id, 'would restore', `in ${NAMES[put]}`));
    else live.push(r);
  }
  if (live.length === 0) return out;
  if (ctx.gate === undefined)
    throw new MailError('internal_error', 'restoring needs the write policy, and this context has none');

  const snoozeIds = live.some((l) => l.item.action === 'snooze')
    ? new Set(snoozeLabelsOf(await ctx.mailbox.listLabels(ctx.signal), serverTimeZone()).map((l) => l.id))
    : new Set<string>();
  // One gate run per kind of item and place it comes back from, each one logged human call.
  const batches = new Map<string, Live[]>();
  for (const l of live) {
    const key = `${l.item.unit}:${PUT[l.item.action] ?? 'ARCHIVE'}`;
    batches.set(key, [...(batches.get(key) ?? []), l]);
  }
  for (const batch of batches.values()) {
    const first = batch[0] as Live;
    const from = PUT[first.item.action] ?? 'ARCHIVE';
    const byId = new Map(batch.map((l) => [l.id, l]));
    const intent: GateIntent = {
      tool: options.tool,
      action: 'restore',
      actor: 'human',
      fromLabelIds: [from],
    };
    const writeAll = (allowed: readonly GateItem[]): Promise<PerItemOutcome[]> =>
      mapBounded(allowed, readConcurrency(ctx.mailbox, 4), async (g) => {
        const l = byId.get(g.id) as Live;
        try {
          return { id: g.id, outcome: (await putBack(ctx, l, snoozeIds)) ? 'moved' : 'failed' };
        } catch (e) {
          return { id: g.id, outcome: isOutcomeUnknown(e) ? 'unknown' : 'failed', error: errorText(e) };
        }
      });
    const run = await runThroughGate(
      ctx,
      ctx.gate,
      batch.map((l) => l.gate),
      intent,
      first.item.unit,
      writeAll,
    );
    for (const r of run.results) {
      const l = byId.get(r.id) as Live;
      if (r.outcome === 'moved') out.push(outcome(l.item, l.id, 'restored'));
      else if (r.outcome === 'refused')
        out.push(
          outcome(
            l.item,
            l.id,
            'not restored',
            `refused by the write policy (${r.rule ?? 'policy'}): ${r.reason ?? ''}`,
          ),
        );
      else if (r.outcome === 'unknown')
        out.push(outcome(l.item, l.id, 'not restored', `outcome unknown: ${r.error ?? 'no answer'}`));
      else
        out.push(
          outcome(
            l.item,
            l.id,
            'not restored',
            r.error ?? 'the mailbox read back afterwards does not show it in the inbox',
          ),
        );
    }
  }
  return out;
}

/** One item back in the inbox; true when the mailbox, read back, shows it there. */
async function putBack(ctx: ToolContext, l: Live, snoozeIds: ReadonlySet<string>): Promise<boolean> {
  const labels = new Set(l.labels);
  const remove = [...labels].filter((x) => x === 'SPAM' || snoozeIds.has(x));
  if (l.item.unit === 'thread') {
    if (labels.has('TRASH')) await ctx.mailbox.untrashThread(l.id, ctx.signal);
    const after = await ctx.mailbox.modifyThread(l.id, { add: ['INBOX'], remove }, ctx.signal);
    return after.some((m) => m.labelIds.includes('INBOX'));
  }
  const change: LabelChange = { add: ['INBOX'], remove: labels.has('TRASH') ? [...remove, 'TRASH'] : remove };
  await ctx.mailbox.modifyMessages([l.id], change, ctx.signal);
  const now = await ctx.mailbox.getMessageLabels(l.id, ctx.signal);
  return now.labelIds.includes('INBOX');
}
