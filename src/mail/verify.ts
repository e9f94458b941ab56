import type { QueryNode } from './query/index.js';
import { evaluateLabelState, labelStatePredicates, mentionsSpamOrTrash } from './query/index.js';
import type { MailThread } from './types.js';

/**
 * Search indexes can be stale: Gmail's threads.list was measured answering `is:unread` from
 * thread-level state that no longer matched any message (docs/facts.md). A hit is dropped only when
 * its live labels prove the query false for every message (Kleene logic: predicates other than
 * label state count as unknown, so they never cause a drop).
 */
export interface VerifyOutcome {
  /** The label-state predicates that were re-checked against live labels. */
  predicates: string[];
  kept: MailThread[];
  dropped: MailThread[];
}

export function threadSatisfiesLabelState(node: QueryNode, thread: MailThread): boolean {
  for (const m of thread.messages) {
    if (evaluateLabelState(node, new Set(m.labelIds)) !== false) return true;
  }
  return thread.messages.length === 0;
}

/**
 * Gmail leaves spam and trash out unless the query names them, so that exclusion is a live-label
 * predicate too: a thread trashed since the index saw it is dropped like any other stale hit.
 */
export function withImplicitExclusions(node: QueryNode): QueryNode {
  if (mentionsSpamOrTrash(node)) return node;
  const not = (value: string): QueryNode => ({
    type: 'not',
    child: { type: 'term', field: 'in', value, quoted: false },
  });
  return { type: 'and', children: [node, not('spam'), not('trash')] };
}

export function verifyThreads(query: QueryNode, threads: MailThread[]): VerifyOutcome {
  const node = withImplicitExclusions(query);
  const predicates = labelStatePredicates(node);
  const kept: MailThread[] = [];
  const dropped: MailThread[] = [];
  for (const t of threads) (threadSatisfiesLabelState(node, t) ? kept : dropped).push(t);
  return { predicates, kept, dropped };
}
