import { z } from 'zod';
import { mapBounded } from '../../mail/async.js';
import { classifyApplied } from '../../mail/bulk-plan.js';
import type { Mailbox, LabelChange } from '../../providers/mailbox.js';
import { PAGE_SIZE, listMessages } from './listing.js';

const LIST_PAGE_UNITS = 5;
const GET_UNITS = 5;
const LABEL_GET_UNITS = 1;
const READ_CONCURRENCY = 10;
/** Enough ids to act on a few stragglers without flooding the model's context. */
export const ID_SAMPLE = 100;

export const verifiedSchema = z.object({
  method: z
    .enum(['labelIds-list', 'per-message'])
    .describe('labelIds-list: one messages.list per label; per-message: messages.get format=minimal each'),
  applied: z.number(),
  notApplied: z.number(),
  unverifiable: z.number().describe('reads that failed; neither applied nor not'),
  notAppliedIds: z.array(z.string()).describe(`first ${ID_SAMPLE}`),
  quotaUnits: z.number(),
  error: z.string().optional().describe('why the read-back could not finish (the write itself stands)'),
});
export type Verified = z.infer<typeof verifiedSchema>;

/**
 * Re-reads the labels of `ids` after a write, choosing the cheaper of two exact reads by Gmail's
 * quota prices: listing each label of the change (labelIds filter, live labels, 5 units per 500
 * messages carrying the label, sized first with labels.get at 1 unit) or reading each message (5
 * units each). Archiving 10,000 messages and then listing the 3,000 left in INBOX costs 31 units;
 * reading the 10,000 would cost 50,000, over three minutes of a user's quota. Per-message reads
 * win only for a few messages under a large label. q is not used: after the write the query may no longer match (is:unread after marking
 * read), and includeSpamTrash keeps trashed and spam messages in view. A message deleted outright
 * in between carries no labels, so for a removal it reads as applied, which it literally is.
 */
export async function verifyChange(
  mailbox: Mailbox,
  ids: readonly string[],
  change: LabelChange,
  signal?: AbortSignal,
): Promise<Verified> {
  const before = mailbox.usage().quotaUnits;
  try {
    return await readBack(mailbox, ids, change, before, signal);
  } catch (e) {
    // The write already happened; a failed read-back must not hide its report. Nothing was
    // checked, so nothing is reported as applied (docs/architecture.md, promise 6).
    return {
      method: 'labelIds-list',
      applied: 0,
      notApplied: 0,
      unverifiable: ids.length,
      notAppliedIds: [],
      quotaUnits: mailbox.usage().quotaUnits - before,
      error: e instanceof Error ? e.message : String(e),
    };
  }
}

async function readBack(
  mailbox: Mailbox,
  ids: readonly string[],
  change: LabelChange,
  before: number,
  signal: AbortSignal | undefined,
): Promise<Verified> {
  const labels = [...change.add, ...change.remove];
  const totals = await Promise.all(
    labels.map(async (id) => (await mailbox.getLabel(id, signal)).messagesTotal ?? Number.POSITIVE_INFINITY),
  );
  const listUnits = totals.reduce(
    (sum, total) => sum + LABEL_GET_UNITS + LIST_PAGE_UNITS * Math.ceil(Math.max(total, 1) / PAGE_SIZE),
    0,
  );
  const wanted = new Set(ids);
  let out: Omit<Verified, 'quotaUnits'>;
  if (listUnits <= GET_UNITS * ids.length) {
    const after = new Map<string, Set<string>>();
    await Promise.all(
      labels.map(async (label) => {
        const listing = await listMessages(mailbox, '', {
          labelIds: [label],
          includeSpamTrash: true,
          limit: Number.POSITIVE_INFINITY,
          ...(signal === undefined ? {} : { signal }),
        });
        after.set(label, new Set(listing.refs.map((r) => r.id).filter((id) => wanted.has(id))));
      }),
    );
    const verdict = classifyApplied(ids, change, after);
    out = {
      method: 'labelIds-list',
      applied: verdict.applied.length,
      notApplied: verdict.notApplied.length,
      unverifiable: 0,
      notAppliedIds: verdict.notApplied.slice(0, ID_SAMPLE),
    };
  } else {
    const reads = await mapBounded(ids, READ_CONCURRENCY, async (id) => {
      try {
        return await mailbox.getMessageLabels(id, signal);
      } catch {
        return undefined;
      }
    });
    const after = new Map<string, Set<string>>(labels.map((l) => [l, new Set<string>()]));
    const readable: string[] = [];
    reads.forEach((m, i) => {
      const id = ids[i];
      if (m === undefined || id === undefined) return;
      readable.push(id);
      for (const l of m.labelIds) after.get(l)?.add(id);
    });
    const verdict = classifyApplied(readable, change, after);
    out = {
      method: 'per-message',
      applied: verdict.applied.length,
      notApplied: verdict.notApplied.length,
      unverifiable: ids.length - readable.length,
      notAppliedIds: verdict.notApplied.slice(0, ID_SAMPLE),
    };
  }
  return { ...out, quotaUnits: mailbox.usage().quotaUnits - before };
}
