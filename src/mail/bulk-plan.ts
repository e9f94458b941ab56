import { invalidInput } from './errors.js';
import type { QueryNode } from './query/index.js';
import { evaluateLabelState, interpretTerm } from './query/index.js';

/**
 * The pure half of bulk label changes: chunking, which label ids a query's label-state predicates
 * stand for, cross-check verdicts, undo plans and their validation, and reading back whether a
 * change took. No I/O: callers hand in label membership they listed.
 */

/** Gmail messages.batchModify accepts at most 1,000 ids per call. */
export const BATCH_LIMIT = 1000;

export interface LabelIdChange {
  add: string[];
  remove: string[];
}

/** Label id → the ids (of the set being worked on) that carry it. */
export type Membership = ReadonlyMap<string, ReadonlySet<string>>;

export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('chunk size must be a positive integer');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The label ids behind the query's label-state predicates (is:unread → UNREAD, -in:inbox → INBOX). */
export function queryLabelIds(node: QueryNode): string[] {
  const ids = new Set<string>();
  const visit = (n: QueryNode): void => {
    if (n.type === 'term') {
      if (n.field === null) return;
      const p = interpretTerm(n);
      if (p.kind === 'labelId') ids.add(p.id);
    } else if (n.type === 'not') visit(n.child);
    else n.children.forEach(visit);
  };
  visit(node);
  return [...ids];
}

/**
 * Ids whose live labels prove the query false: each is evaluated with exactly the label ids the
 * query asks about, as `membership` reports them. Kleene logic, so a message is only set aside
 * when its labels decide the query against it (a predicate the labels cannot answer never does).
 * A negated predicate is therefore contradicted by messages that DO carry the label.
 */
export function contradicted(ids: readonly string[], node: QueryNode, membership: Membership): string[] {
  const asked = queryLabelIds(node);
  return ids.filter((id) => {
    const labels = new Set(asked.filter((l) => membership.get(l)?.has(id) === true));
    return evaluateLabelState(node, labels) === false;
  });
}

/** One batch of the inverse: these messages get `add` back and lose `remove`. */
export interface UndoGroup {
  add: string[];
  remove: string[];
  messageIds: string[];
}

export interface UndoPlan {
  kind: 'mailwarden.undo';
  version: 1;
  account: string;
  /** ISO 8601; informational. */
  createdAt: string;
  /** The query of the run being undone; informational. */
  query: string;
  /** Label id → name when the plan was made; informational (undo checks ids against the mailbox). */
  labels: Record<string, string>;
  groups: UndoGroup[];
}

export interface PlanInput {
  account: string;
  createdAt: string;
  query: string;
  /** The change the run applies, as label ids. */
  change: LabelIdChange;
  /** Every message the run will send to Gmail. */
  messageIds: readonly string[];
  /** For each label of the change: which of those messages carried it before the run. */
  before: Membership;
  labelNames: ReadonlyMap<string, string>;
}

/**
 * The exact inverse of applying `change` to `messageIds`: a message regains the removed labels
 * it had and loses the added labels it lacked. A message that already had the target state gets
 * an empty inverse and is left out, so undo leaves it as it was. Messages with the same inverse
 * share a group, so undo costs one batchModify per 1,000 of them.
 */
export function buildUndoPlan(input: PlanInput): UndoPlan {
  const groups = new Map<string, UndoGroup>();
  const had = (label: string, id: string): boolean => input.before.get(label)?.has(id) === true;
  for (const id of new Set(input.messageIds)) {
    const add = input.change.remove.filter((l) => had(l, id));
    const remove = input.change.add.filter((l) => !had(l, id));
    if (add.length === 0 && remove.length === 0) continue;
    const key = `${add.join(',')}|${remove.join(',')}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { add, remove, messageIds: [] };
      groups.set(key, group);
    }
    group.messageIds.push(id);
  }
  const involved = [...input.change.add, ...input.change.remove];
  return {
    kind: 'mailwarden.undo',
    version: 1,
    account: input.account,
    createdAt: input.createdAt,
    query: input.query,
    labels: Object.fromEntries(involved.map((l) => [l, input.labelNames.get(l) ?? l])),
    groups: [...groups.values()],
  };
}

/** A plan keeps only the messages that were actually sent to Gmail (a cancelled tail is not). */
export function restrictPlan(plan: UndoPlan, sent: ReadonlySet<string>): UndoPlan {
  const groups = plan.groups
    .map((g) => ({ ...g, messageIds: g.messageIds.filter((id) => sent.has(id)) }))
    .filter((g) => g.messageIds.length > 0);
  return { ...plan, groups };
}

export const MAX_PLAN_MESSAGES = 100_000;

/**
 * What a structurally valid plan must also satisfy before anything is written: its own account,
 * a real change per group, no label both added and removed, no message in two groups (its
 * inverse would be ambiguous), and label ids the mailbox still has.
 */
export function checkUndoPlan(plan: UndoPlan, account: string, existingLabelIds: ReadonlySet<string>): void {
  if (plan.account !== account) {
    throw invalidInput('plan.account', `the plan is for account "${plan.account}", this is "${account}"`);
  }
  const seen = new Set<string>();
  const missing = new Set<string>();
  let total = 0;
  plan.groups.forEach((g, i) => {
    const where = `plan.groups.${i}`;
    if (g.add.length === 0 && g.remove.length === 0) throw invalidInput(where, 'adds and removes nothing');
    const removing = new Set(g.remove);
    const both = g.add.filter((l) => removing.has(l));
    if (both.length > 0) throw invalidInput(where, `${both.join(', ')} is both added and removed`);
    for (const l of [...g.add, ...g.remove]) if (!existingLabelIds.has(l)) missing.add(l);
    for (const id of g.messageIds) {
      if (seen.has(id)) throw invalidInput(`${where}.messageIds`, `message ${id} appears in two groups`);
      seen.add(id);
    }
    total += g.messageIds.length;
  });
  if (total > MAX_PLAN_MESSAGES) {
    throw invalidInput('plan.groups', `${total} messages; at most ${MAX_PLAN_MESSAGES} per plan`);
  }
  if (missing.size > 0) {
    throw invalidInput(
      'plan.groups',
      `label ids that no longer exist in this mailbox: ${[...missing].join(', ')}; the plan is stale and nothing was changed`,
    );
  }
}

export interface VerifyCounts {
  applied: string[];
  notApplied: string[];
}

/**
 * Whether each id now shows the change, from `after` (label → ids carrying it, read after the
 * write): every added label present and every removed label absent.
 */
export function classifyApplied(
  ids: readonly string[],
  change: LabelIdChange,
  after: Membership,
): VerifyCounts {
  const out: VerifyCounts = { applied: [], notApplied: [] };
  for (const id of ids) {
    const ok =
      change.add.every((l) => after.get(l)?.has(id) === true) &&
      change.remove.every((l) => after.get(l)?.has(id) !== true);
    (ok ? out.applied : out.notApplied).push(id);
  }
  return out;
}

/** A change as the caller wrote it, normalised so two spellings of the same list compare equal. */
export function changeKey(add: readonly string[], remove: readonly string[]): string {
  const norm = (xs: readonly string[]): string[] => [...new Set(xs.map((x) => x.trim()))].sort();
  return JSON.stringify({ add: norm(add), remove: norm(remove) });
}
