import { createHash } from 'node:crypto';
import type { gmail_v1 } from '@googleapis/gmail';
import { evaluate } from '../mail/query/index.js';
import { invalidArgument, notFound } from './errors.js';
import type { StoredMessage, UserMailbox } from './model.js';
import { compileQuery, factsFor } from './search.js';

type Criteria = gmail_v1.Schema$FilterCriteria;
type Action = gmail_v1.Schema$FilterAction;

export interface FilterRecord {
  id: string;
  criteria: Criteria;
  action: Action;
}

const STRING_CRITERIA = ['from', 'to', 'subject', 'query', 'negatedQuery'] as const;

function readCriteria(raw: unknown): Criteria {
  const c = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const out: Criteria = {};
  for (const key of STRING_CRITERIA) {
    const v = c[key];
    if (v === undefined || v === '') continue;
    if (typeof v !== 'string') throw invalidArgument(`Invalid criteria.${key}`);
    out[key] = v;
  }
  if (c['hasAttachment'] === true) out.hasAttachment = true;
  if (c['excludeChats'] === true) out.excludeChats = true;
  if (c['size'] !== undefined) {
    const size = c['size'];
    const cmp = c['sizeComparison'];
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0)
      throw invalidArgument('Invalid criteria.size');
    if (cmp !== 'larger' && cmp !== 'smaller') throw invalidArgument('Invalid criteria.sizeComparison');
    out.size = size;
    out.sizeComparison = cmp;
  }
  if (Object.keys(out).filter((k) => k !== 'excludeChats').length === 0) {
    throw invalidArgument("Filter doesn't have any criteria");
  }
  return out;
}

function readAction(raw: unknown, mailbox: UserMailbox): Action {
  const a = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const out: Action = {};
  for (const key of ['addLabelIds', 'removeLabelIds'] as const) {
    const v = a[key];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((x): x is string => typeof x === 'string')) {
      throw invalidArgument(`Invalid action.${key}`);
    }
    for (const id of v) if (!mailbox.labels.has(id)) throw invalidArgument(`Invalid label: ${id}`);
    if (v.length > 0) out[key] = [...v];
  }
  // Gmail only forwards to verified addresses and the sandbox has none; mailwarden never forwards.
  if (a['forward'] !== undefined) throw invalidArgument('Forwarding address is not verified');
  if (!out.addLabelIds && !out.removeLabelIds) throw invalidArgument("Filter doesn't have any actions");
  return out;
}

/** A criteria value as one query term: quoted when it holds spaces so it stays one phrase. */
const term = (field: string, value: string): string => {
  const clean = value.replace(/"/g, ' ');
  return `${field}:${/\s/.test(clean) ? `"${clean}"` : clean}`;
};

/** Gmail's filter criteria are themselves search terms; matching reuses the query evaluator. */
export function criteriaQuery(c: Criteria): string {
  const parts: string[] = [];
  if (c.from) parts.push(term('from', c.from));
  if (c.to) parts.push(term('to', c.to));
  if (c.subject) parts.push(term('subject', c.subject));
  if (c.query) parts.push(`(${c.query})`);
  if (c.negatedQuery) parts.push(`-(${c.negatedQuery})`);
  if (c.hasAttachment) parts.push('has:attachment');
  if (c.size !== undefined && c.size !== null)
    parts.push(`${c.sizeComparison === 'larger' ? 'larger' : 'smaller'}:${c.size}`);
  return parts.join(' ');
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** settings.filters for one user, plus their effect on newly delivered mail. */
export class FilterStore {
  private readonly filters = new Map<string, FilterRecord>();
  private seq = 0;

  constructor(private readonly mailbox: UserMailbox) {}

  list(): FilterRecord[] {
    return [...this.filters.values()];
  }

  get(id: string): FilterRecord {
    const f = this.filters.get(id);
    if (!f) throw notFound();
    return f;
  }

  create(body: unknown): FilterRecord {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const criteria = readCriteria(b['criteria']);
    const action = readAction(b['action'], this.mailbox);
    compileQuery(this.mailbox, criteriaQuery(criteria));
    for (const f of this.filters.values()) {
      if (sameJson(f.criteria, criteria) && sameJson(f.action, action))
        throw invalidArgument('Filter already exists');
    }
    // Gmail filter ids are opaque base64-ish strings; a hash keeps them stable across runs.
    const id = `ANe1Bm${createHash('sha256')
      .update(`${this.mailbox.email}#${++this.seq}`)
      .digest('base64url')
      .slice(0, 32)}`;
    const record: FilterRecord = { id, criteria, action };
    this.filters.set(id, record);
    return record;
  }

  delete(id: string): void {
    if (!this.filters.delete(id)) throw notFound();
  }

  /** Label changes the filters make to a message arriving now (Gmail runs filters on delivery). */
  actionsFor(msg: StoredMessage, now: number): { add: string[]; remove: string[] } {
    const add: string[] = [];
    const remove: string[] = [];
    for (const f of this.filters.values()) {
      const node = compileQuery(this.mailbox, criteriaQuery(f.criteria));
      if (node === undefined || !evaluate(node, factsFor(this.mailbox, msg, msg.labelIds), now)) continue;
      add.push(...(f.action.addLabelIds ?? []).filter((id) => this.mailbox.labels.has(id)));
      remove.push(...(f.action.removeLabelIds ?? []).filter((id) => this.mailbox.labels.has(id)));
    }
    return { add, remove };
  }
}

export function filterResource(f: FilterRecord): gmail_v1.Schema$Filter {
  return { id: f.id, criteria: { ...f.criteria }, action: { ...f.action } };
}
