import { contradicted, queryLabelIds } from '../../mail/bulk-plan.js';
import { MailError } from '../../mail/errors.js';
import type { QueryNode } from '../../mail/query/index.js';
import type { MessageRef } from '../../mail/types.js';
import type { Mailbox } from '../../providers/mailbox.js';
import { PAGE_SIZE, labelMembership, listMessages } from './listing.js';

export interface ReadsRequest {
  /** Re-ask the query's label-state predicates as labelIds filters and set aside contradictions. */
  crossCheck: boolean;
  /** Labels whose current presence an undo plan needs (existing labels of the change). */
  undoLabels: readonly string[];
}

export interface ReadsOutcome {
  /** What remains to be written, in listing order. */
  target: MessageRef[];
  /** Label id → which target messages carry it now. */
  membership: Map<string, Set<string>>;
  /** Ids the crossCheck set aside: the index matched them, their live labels say no. */
  contradicted: string[];
  /** Ids that stopped matching while their labels were read (undo only); left unchanged. */
  changedWhileReading: string[];
}

/**
 * The reads a bulk write makes before it writes. Both cross-check and undo need "which matched
 * messages carry label L now", and both get it the same cheap way (labelMembership: one listing
 * per label, restricted by q to the matched set). The listings can merge: one read of INBOX
 * serves `-in:inbox` and an archive's undo alike.
 *
 * Undo needs more than that. A message missing from the L listing either lacks L or stopped
 * matching q in the meantime (someone read it, newer_than: crossed its boundary); a plan that
 * guessed "lacks L" would strip a label on undo that the message had. So the matched set is
 * listed once more afterwards, and a message that is no longer in it is left unchanged rather
 * than written on a guess.
 */
export async function preWriteReads(
  mailbox: Mailbox,
  query: string,
  node: QueryNode,
  matched: readonly MessageRef[],
  req: ReadsRequest,
  signal?: AbortSignal,
): Promise<ReadsOutcome> {
  const asked = req.crossCheck ? queryLabelIds(node) : [];
  const labels = [...new Set([...asked, ...req.undoLabels])];
  const within = new Set(matched.map((r) => r.id));
  const membership =
    labels.length === 0 || within.size === 0
      ? new Map<string, Set<string>>()
      : await labelMembership(mailbox, query, labels, within, signal);
  const setAside = req.crossCheck ? new Set(contradicted([...within], node, membership)) : new Set<string>();
  let target = matched.filter((r) => !setAside.has(r.id));
  const changedWhileReading: string[] = [];
  if (req.undoLabels.length > 0 && target.length > 0) {
    const limit = matched.length * 2 + PAGE_SIZE;
    const again = await listMessages(mailbox, query, { limit, ...(signal === undefined ? {} : { signal }) });
    // A listing cut short proves nothing about absence; no plan is better than a guessed one.
    if (again.overLimit) {
      throw new MailError(
        'upstream_unavailable',
        `more than ${limit} messages matched on a second listing; the mailbox is changing fast, nothing was changed, try again`,
      );
    }
    const still = new Set(again.refs.map((r) => r.id));
    for (const r of target) if (!still.has(r.id)) changedWhileReading.push(r.id);
    const gone = new Set(changedWhileReading);
    target = target.filter((r) => !gone.has(r.id));
  }
  return { target, membership, contradicted: [...setAside], changedWhileReading };
}
