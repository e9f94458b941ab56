import { invalidInput } from './errors.js';
import { parseQuery } from './query/index.js';
import { isUserLabelId } from './query/interpret.js';

/**
 * Server-side filter rules, provider-neutral (Gmail settings.filters; ManageSieve later). Pure:
 * criteria → the Gmail query that finds the mail a rule matches today, comparison with existing
 * rules, and what a rule's actions mean for mail that arrives later.
 */

/** Gmail's FilterCriteria. Every string field is itself search syntax (Gmail's own reading). */
export interface FilterCriteria {
  from?: string;
  to?: string;
  subject?: string;
  query?: string;
  negatedQuery?: string;
  hasAttachment?: boolean;
  excludeChats?: boolean;
  /** Bytes, with sizeComparison. */
  size?: number;
  sizeComparison?: 'larger' | 'smaller';
}

/** Criteria as callers hold them (zod output: absent fields may be present as undefined). */
export type CriteriaInput = { [K in keyof FilterCriteria]?: FilterCriteria[K] | undefined };

/** Label actions only: mailwarden's model of a filter has no forward field to fill in. */
export interface FilterLabelAction {
  addLabelIds: string[];
  removeLabelIds: string[];
}

export const TEXT_FIELDS = ['from', 'to', 'subject', 'query', 'negatedQuery'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** Fields whose values overlap detection compares (negatedQuery excludes, so sharing it is not overlap). */
const OVERLAP_FIELDS = ['from', 'to', 'subject', 'query'] as const;

function clean(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value.replace(/\s+/g, ' ').trim();
  return v === '' ? undefined : v;
}

/** The criteria with blank strings dropped and whitespace collapsed (what Gmail stores). */
export function normaliseCriteria(c: CriteriaInput): FilterCriteria {
  const out: FilterCriteria = {};
  for (const f of TEXT_FIELDS) {
    const v = clean(c[f]);
    if (v !== undefined) out[f] = v;
  }
  if (c.hasAttachment === true) out.hasAttachment = true;
  if (c.excludeChats === true) out.excludeChats = true;
  if (c.size !== undefined) {
    out.size = c.size;
    out.sizeComparison = c.sizeComparison ?? 'larger';
  }
  return out;
}

/**
 * Whether the criteria select mail by something it has. A rule with only negatedQuery (or only
 * excludeChats) matches nearly everything; Gmail refuses a rule without criteria at all, and
 * applying such a rule to existing mail would relabel the whole mailbox.
 */
export function hasPositiveCriterion(c: CriteriaInput): boolean {
  const n = normaliseCriteria(c);
  return (
    n.from !== undefined ||
    n.to !== undefined ||
    n.subject !== undefined ||
    n.query !== undefined ||
    n.hasAttachment === true ||
    n.size !== undefined
  );
}

/** Throws invalid_input naming the field when a criterion is not valid search syntax. */
export function validateCriteria(c: CriteriaInput): void {
  const n = normaliseCriteria(c);
  if (!hasPositiveCriterion(n) && n.negatedQuery === undefined) {
    throw invalidInput(
      'criteria',
      'give at least one of from, to, subject, query, negatedQuery, hasAttachment, size',
    );
  }
  if (c.size !== undefined && c.sizeComparison === undefined) {
    throw invalidInput('criteria.sizeComparison', "is required with size: 'larger' or 'smaller'");
  }
  if (c.sizeComparison !== undefined && c.size === undefined) {
    throw invalidInput('criteria.size', 'is required with sizeComparison (bytes)');
  }
  for (const f of TEXT_FIELDS) {
    const part = termFor(f, n[f]);
    if (part === undefined) continue;
    try {
      parseQuery(part);
    } catch (e) {
      const why = e instanceof Error ? e.message.replace(/^query: /, '') : String(e);
      throw invalidInput(`criteria.${f}`, `is not valid search syntax (${why})`);
    }
  }
}

/**
 * One criterion as a query term. from/to/subject become `field:( … )` so a value holding
 * several words or an OR keeps Gmail's meaning (the same field, any of them); query is grouped
 * as written; negatedQuery is excluded as a group.
 */
function termFor(field: TextField, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  switch (field) {
    case 'query':
      return `(${value})`;
    case 'negatedQuery':
      return `-(${value})`;
    default:
      return `${field}:(${value})`;
  }
}

/**
 * The Gmail search that finds the mail these criteria match now. It is what preview counts and
 * what applyToExisting relabels, so both read the same index. excludeChats has no query
 * equivalent and needs none: messages.list leaves chats out unless asked.
 */
export function criteriaToQuery(c: FilterCriteria): string {
  const n = normaliseCriteria(c);
  const parts: string[] = [];
  for (const f of TEXT_FIELDS) {
    const t = termFor(f, n[f]);
    if (t !== undefined) parts.push(t);
  }
  if (n.hasAttachment) parts.push('has:attachment');
  if (n.size !== undefined) parts.push(`${n.sizeComparison === 'smaller' ? 'smaller' : 'larger'}:${n.size}`);
  return parts.join(' ');
}

/** Gmail search is case-insensitive, so two rules differing only in case match the same mail. */
function key(c: FilterCriteria): string {
  const n = normaliseCriteria(c);
  const lower = (v: string | undefined) => v?.toLowerCase() ?? null;
  return JSON.stringify([
    lower(n.from),
    lower(n.to),
    lower(n.subject),
    lower(n.query),
    lower(n.negatedQuery),
    n.hasAttachment === true,
    n.excludeChats === true,
    n.size ?? null,
    n.size === undefined ? null : n.sizeComparison,
  ]);
}

export function sameCriteria(a: FilterCriteria, b: FilterCriteria): boolean {
  return key(a) === key(b);
}

/**
 * The values of one criterion as separate tokens: addresses, domains and words, lower-cased,
 * without the OR / { } ( ) " , | that join them.
 */
export function criterionTokens(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out = new Set<string>();
  for (const raw of value.split(/[\s,|(){}"]+/)) {
    const t = raw.toLowerCase();
    if (t === '' || t === 'or' || t === 'and' || t === '-') continue;
    out.add(t.replace(/^-/, ''));
  }
  return [...out];
}

export interface Overlap {
  field: (typeof OVERLAP_FIELDS)[number];
  shared: string[];
}

/**
 * Where two rules name the same sender, recipient, subject word or query term. Two rules that
 * share a value can both act on one message (Gmail runs every matching filter), which is what
 * a user adding a rule wants to know about.
 */
export function criteriaOverlap(a: FilterCriteria, b: FilterCriteria): Overlap[] {
  const out: Overlap[] = [];
  const na = normaliseCriteria(a);
  const nb = normaliseCriteria(b);
  for (const f of OVERLAP_FIELDS) {
    const theirs = new Set(criterionTokens(nb[f]));
    const shared = criterionTokens(na[f]).filter((t) => theirs.has(t));
    if (shared.length > 0) out.push({ field: f, shared });
  }
  return out;
}

/** Labels a filter can put on mail that still leave it findable where a person looks. */
const VISIBLE_SYSTEM = new Set(['INBOX', 'STARRED', 'IMPORTANT']);

export type DiscardReason = 'trash' | 'skips_inbox_without_label';

/**
 * Whether future matches vanish from every place a person looks: moved to Trash (Gmail deletes
 * it after 30 days), or taken out of the inbox with no user label, star or importance added, so
 * it only shows in All Mail. Undefined when the rule keeps mail visible.
 */
export function discardsFutureMatches(action: FilterLabelAction): DiscardReason | undefined {
  if (action.addLabelIds.includes('TRASH')) return 'trash';
  if (!action.removeLabelIds.includes('INBOX')) return undefined;
  const keeps = action.addLabelIds.some((id) => VISIBLE_SYSTEM.has(id) || isUserLabelId(id));
  return keeps ? undefined : 'skips_inbox_without_label';
}

// ---- label actions by name -------------------------------------------------------------------

/** System labels a Gmail filter can add (star, importance, "Delete it", a category tab). */
const ADDABLE_SYSTEM = new Set(['STARRED', 'IMPORTANT', 'TRASH']);
/** ...and remove ("Skip the inbox", "Mark as read", "Never send it to Spam", "Never mark as important"). */
const REMOVABLE_SYSTEM = new Set(['INBOX', 'UNREAD', 'SPAM', 'IMPORTANT', 'STARRED']);

export interface LabelRef {
  id: string;
  name: string;
  type: 'system' | 'user';
}

export interface ResolvedLabels {
  add: LabelRef[];
  remove: LabelRef[];
  /** addLabels names no label has yet: created before the filter. */
  create: string[];
}

function findLabel(labels: readonly LabelRef[], wanted: string): LabelRef | undefined {
  const byId = labels.find((l) => l.id === wanted);
  if (byId) return byId;
  const folded = wanted.trim().toLowerCase();
  return labels.find((l) => l.name.toLowerCase() === folded);
}

function allowed(label: LabelRef, system: ReadonlySet<string>): boolean {
  return label.type === 'user' || system.has(label.id) || label.id.startsWith('CATEGORY_');
}

/**
 * Filter actions given as label names or ids, as a person would write them ("Receipts",
 * "INBOX", "Label_12"). Ids win over names; names match case-insensitively, as Gmail's label
 * names do. A new name in addLabels is created; an unknown one in removeLabels is an error.
 */
export function resolveFilterLabels(
  labels: readonly LabelRef[],
  addLabels: readonly string[],
  removeLabels: readonly string[],
): ResolvedLabels {
  const out: ResolvedLabels = { add: [], remove: [], create: [] };
  addLabels.forEach((raw, i) => {
    const field = `addLabels.${i}`;
    const name = raw.trim();
    if (name === '') throw invalidInput(field, 'must not be blank');
    const found = findLabel(labels, name);
    if (found === undefined) {
      if (name.length > 225) throw invalidInput(field, 'a label name has at most 225 characters');
      if (!out.create.some((n) => n.toLowerCase() === name.toLowerCase())) out.create.push(name);
      return;
    }
    if (!allowed(found, ADDABLE_SYSTEM)) {
      throw invalidInput(
        field,
        `a filter cannot add ${found.id}; system labels it can add: STARRED, IMPORTANT, TRASH, CATEGORY_*`,
      );
    }
    if (!out.add.some((l) => l.id === found.id)) out.add.push(found);
  });
  removeLabels.forEach((raw, i) => {
    const field = `removeLabels.${i}`;
    const found = findLabel(labels, raw);
    if (found === undefined) throw invalidInput(field, `no label is named "${raw.trim()}"`);
    if (!allowed(found, REMOVABLE_SYSTEM)) {
      throw invalidInput(
        field,
        `a filter cannot remove ${found.id}; system labels it can remove: INBOX, UNREAD, SPAM, IMPORTANT, STARRED, CATEGORY_*`,
      );
    }
    if (out.add.some((l) => l.id === found.id))
      throw invalidInput(field, `${found.name} is both added and removed`);
    if (!out.remove.some((l) => l.id === found.id)) out.remove.push(found);
  });
  if (out.add.length + out.remove.length + out.create.length === 0) {
    throw invalidInput('addLabels', 'a filter needs at least one label to add or remove');
  }
  return out;
}
