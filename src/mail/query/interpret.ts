import { invalidInput } from '../errors.js';
import type { TermNode } from './ast.js';
import { offsetAt } from '../zones.js';

/** A run of words that must appear next to each other; `raw` serves values with no word in them. */
export interface Phrase {
  words: string[];
  raw: string;
}

export type HeaderName = 'from' | 'to' | 'cc' | 'bcc' | 'deliveredTo';

/** What one term asks of a message, decided once from its field and value. */
export type Predicate =
  | { kind: 'header'; header: HeaderName; needle: string }
  | { kind: 'text'; where: 'subject' | 'anywhere'; phrases: Phrase[] }
  /** A label-state predicate: decidable from live label ids alone. */
  | { kind: 'labelId'; id: string; present: boolean }
  | { kind: 'userLabel'; name: string }
  | { kind: 'anywhere' }
  /** Gmail state the API never exposes as a label (muted, snoozed, some categories, superstars). */
  | { kind: 'never' }
  | { kind: 'userLabels'; present: boolean }
  | { kind: 'attachment' }
  | { kind: 'link'; pattern: RegExp }
  | { kind: 'filename'; needle: string }
  | { kind: 'age'; newer: boolean; ms: number }
  | { kind: 'date'; after: boolean; at: number }
  | { kind: 'size'; cmp: 'gt' | 'lt' | 'ge'; bytes: number }
  | { kind: 'msgid'; id: string }
  | { kind: 'list'; needle: string };

/** NFKC first so full-width and compatibility forms compare equal to what people type. */
export function fold(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}

export function words(s: string): string[] {
  return fold(s)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** Gmail treats space, '/', '-' and '_' in label names as the same character. */
export function normalizeLabelName(name: string): string {
  return fold(name).replace(/[\s/_-]/gu, '-');
}

const DAY_MS = 86_400_000;

/** Gmail's own ids for the system labels the `label:` operator can name. */
const SYSTEM_LABELS: ReadonlyMap<string, string> = new Map([
  ['inbox', 'INBOX'],
  ['unread', 'UNREAD'],
  ['starred', 'STARRED'],
  ['important', 'IMPORTANT'],
  ['sent', 'SENT'],
  ['spam', 'SPAM'],
  ['trash', 'TRASH'],
  ['draft', 'DRAFT'],
  ['drafts', 'DRAFT'],
  ['chat', 'CHAT'],
  ['chats', 'CHAT'],
]);

const IN_VALUES: ReadonlyMap<string, string> = new Map([
  ['inbox', 'INBOX'],
  ['spam', 'SPAM'],
  ['trash', 'TRASH'],
  ['sent', 'SENT'],
  ['drafts', 'DRAFT'],
  ['draft', 'DRAFT'],
  ['starred', 'STARRED'],
  ['important', 'IMPORTANT'],
  ['chats', 'CHAT'],
  ['chat', 'CHAT'],
]);

const CATEGORY_IDS: ReadonlyMap<string, string> = new Map([
  ['primary', 'CATEGORY_PERSONAL'],
  ['personal', 'CATEGORY_PERSONAL'],
  ['social', 'CATEGORY_SOCIAL'],
  ['promotions', 'CATEGORY_PROMOTIONS'],
  ['updates', 'CATEGORY_UPDATES'],
  ['forums', 'CATEGORY_FORUMS'],
]);

/** Gmail has these categories but the API exposes no label id for them. */
const LABELLESS_CATEGORIES = new Set(['reservations', 'purchases']);

/** Gmail's has:drive & co. match Google links; the body text is where a link would show. */
const LINK_PATTERNS: ReadonlyMap<string, RegExp> = new Map([
  ['drive', /\b(?:drive|docs)\.google\.com\//iu],
  ['document', /\bdocs\.google\.com\/document\//iu],
  ['spreadsheet', /\bdocs\.google\.com\/spreadsheets\//iu],
  ['presentation', /\bdocs\.google\.com\/presentation\//iu],
  ['youtube', /\b(?:youtube\.com\/watch|youtu\.be\/)/iu],
]);

/** Superstars are per-user display state with no API label, so no message can be shown to carry one. */
const SUPERSTARS = new Set([
  'yellow-star',
  'orange-star',
  'red-star',
  'purple-star',
  'blue-star',
  'green-star',
  'red-bang',
  'orange-guillemet',
  'yellow-bang',
  'green-check',
  'blue-info',
  'purple-question',
]);

export const SYSTEM_LABEL_IDS: ReadonlySet<string> = new Set([
  'INBOX',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'SPAM',
  'TRASH',
  'CHAT',
]);

export function isUserLabelId(id: string): boolean {
  return !SYSTEM_LABEL_IDS.has(id) && !id.startsWith('CATEGORY_');
}

const HEADERS: Readonly<Record<string, HeaderName>> = {
  from: 'from',
  to: 'to',
  cc: 'cc',
  bcc: 'bcc',
  deliveredto: 'deliveredTo',
};

function phrasesOf(value: string, quoted: boolean): Phrase[] {
  const chunks = quoted ? [value] : value.split(/\s+/u).filter((c) => c !== '');
  return chunks.map((c) => ({ words: words(c), raw: fold(c) }));
}

function listOf(values: Iterable<string>): string {
  return [...values].join(', ');
}

const laOffsetMs = (t: number): number => offsetAt(t, 'America/Los_Angeles');

/** Gmail reads after:/before: dates as midnight Pacific time, whatever the user's own zone. */
export function laMidnight(year: number, month: number, day: number): number {
  const wall = Date.UTC(year, month - 1, day);
  const first = wall - laOffsetMs(wall);
  // Re-reading the offset at the instant found keeps this right even if a zone rule changed in between.
  return wall - laOffsetMs(first);
}

function parseDate(value: string): number | undefined {
  if (/^\d+$/u.test(value)) {
    const seconds = Number(value);
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : undefined;
  }
  const m = /^(\d{4})([/-])(\d{1,2})\2(\d{1,2})$/u.exec(value);
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[3]), Number(m[4])];
  if (year < 1000 || month < 1 || month > 12 || day < 1) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  return laMidnight(year, month, day);
}

const UNIT_MS: Readonly<Record<string, number>> = { d: DAY_MS, m: 30 * DAY_MS, y: 365 * DAY_MS };

function parseSize(value: string): number | undefined {
  const m = /^(\d+)([km]?)$/iu.exec(value);
  if (m === null) return undefined;
  const unit = m[2]?.toLowerCase();
  const bytes = Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * Turns one term into the check it stands for, or throws invalid_input naming the operator and
 * what it accepts. `at` is the 1-based position of the term in the query, for the message.
 */
export function interpretTerm(term: TermNode, at?: number): Predicate {
  const { field, value, quoted } = term;
  if (field === null) return { kind: 'text', where: 'anywhere', phrases: phrasesOf(value, quoted) };
  const v = fold(value).trim();
  const fail: (allowed: string) => never = (allowed) => {
    const where = at === undefined ? '' : ` at position ${at}`;
    throw invalidInput('query', `${field}:${value}${where} is not valid: ${field}: takes ${allowed}`);
  };
  if (v === '') fail('a non-empty value');
  const header = HEADERS[field];
  if (header !== undefined) return { kind: 'header', header, needle: v };
  switch (field) {
    case 'subject':
      return { kind: 'text', where: 'subject', phrases: phrasesOf(value, quoted) };
    case 'label': {
      const id = SYSTEM_LABELS.get(v);
      return id !== undefined
        ? { kind: 'labelId', id, present: true }
        : { kind: 'userLabel', name: normalizeLabelName(value) };
    }
    case 'in': {
      if (v === 'anywhere') return { kind: 'anywhere' };
      if (v === 'snoozed') return { kind: 'never' };
      const id = IN_VALUES.get(v);
      return id !== undefined
        ? { kind: 'labelId', id, present: true }
        : fail(`one of: anywhere, snoozed, ${listOf(IN_VALUES.keys())}`);
    }
    case 'is':
      switch (v) {
        case 'unread':
          return { kind: 'labelId', id: 'UNREAD', present: true };
        case 'read':
          return { kind: 'labelId', id: 'UNREAD', present: false };
        case 'starred':
          return { kind: 'labelId', id: 'STARRED', present: true };
        case 'important':
          return { kind: 'labelId', id: 'IMPORTANT', present: true };
        case 'muted':
        case 'snoozed':
          return { kind: 'never' };
        default:
          return fail('one of: unread, read, starred, important, muted, snoozed');
      }
    case 'category': {
      const id = CATEGORY_IDS.get(v);
      if (id !== undefined) return { kind: 'labelId', id, present: true };
      return LABELLESS_CATEGORIES.has(v)
        ? { kind: 'never' }
        : fail(`one of: ${listOf(CATEGORY_IDS.keys())}, ${listOf(LABELLESS_CATEGORIES)}`);
    }
    case 'has': {
      if (v === 'attachment') return { kind: 'attachment' };
      if (v === 'userlabels') return { kind: 'userLabels', present: true };
      if (v === 'nouserlabels') return { kind: 'userLabels', present: false };
      const pattern = LINK_PATTERNS.get(v);
      if (pattern !== undefined) return { kind: 'link', pattern };
      if (SUPERSTARS.has(v)) return { kind: 'never' };
      return fail(
        `one of: attachment, userlabels, nouserlabels, ${listOf(LINK_PATTERNS.keys())}, ${listOf(SUPERSTARS)}`,
      );
    }
    case 'filename':
      return { kind: 'filename', needle: v };
    case 'newer_than':
    case 'older_than': {
      const m = /^(\d+)([dmy])$/u.exec(v);
      const ms = m === null ? NaN : Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? NaN);
      if (!Number.isSafeInteger(ms)) fail('a whole number then d (days), m (months) or y (years), e.g. 7d');
      return { kind: 'age', newer: field === 'newer_than', ms };
    }
    case 'after':
    case 'before':
    case 'newer':
    case 'older': {
      const t = parseDate(v);
      return t === undefined
        ? fail('a real date as YYYY/MM/DD or YYYY-MM-DD, or seconds since the epoch')
        : { kind: 'date', after: field === 'after' || field === 'newer', at: t };
    }
    case 'larger':
    case 'smaller':
    case 'size': {
      const bytes = parseSize(v);
      return bytes === undefined
        ? fail('a whole number of bytes, optionally followed by K (×1024) or M (×1024²), e.g. 5M')
        : { kind: 'size', cmp: field === 'larger' ? 'gt' : field === 'smaller' ? 'lt' : 'ge', bytes };
    }
    case 'rfc822msgid':
      return { kind: 'msgid', id: stripAngles(v) };
    case 'list':
      return { kind: 'list', needle: v };
    default:
      throw invalidInput('query', `unknown operator "${field}:"`);
  }
}

export function stripAngles(id: string): string {
  return id.trim().replace(/^<(.*)>$/su, '$1');
}
