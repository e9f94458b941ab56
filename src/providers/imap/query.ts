import type { SearchObject } from 'imapflow';
import type { Predicate, QueryNode, TermNode, Tri } from '../../mail/query/index.js';
import { interpretTerm, normalizeLabelName } from '../../mail/query/index.js';
import { fold, isUserLabelId } from '../../mail/query/interpret.js';
import { withImplicitExclusions } from '../../mail/verify.js';
import { folderByRole } from './folders.js';

export type FolderRole = 'inbox' | 'sent' | 'drafts' | 'junk' | 'trash' | 'archive' | 'all' | 'flagged';

export interface Folder {
  /** IMAP path, e.g. "INBOX", "Sent", "Folders/Work", "Labels/Receipts", "All Mail". */
  path: string;
  /** From SPECIAL-USE (RFC 6154) or known names. */
  role?: FolderRole;
  /**
   * The label id every message in this folder carries: INBOX, SENT, DRAFT, SPAM, TRASH for those
   * roles; the path for a user folder or a label folder; absent for archive, all and flagged.
   */
  labelId?: string;
  /**
   * 'location': a real place a message lives (one per message); 'label': a label folder whose
   * messages are copies also living elsewhere (Proton Bridge Labels/X); 'virtual': All Mail /
   * Starred, views of other folders.
   */
  kind: 'location' | 'label' | 'virtual';
  /** Display name: the path without Proton's "Folders/" or "Labels/" prefix. */
  name: string;
}

export interface FolderModel {
  folders: Folder[];
  /** User labels that are IMAP keywords: label id ("#" + keyword) → display name. */
  keywordLabels: ReadonlyMap<string, string>;
  /** Proton Bridge's layout (Folders/ and Labels/ parents): new folders go under Folders/. */
  proton?: boolean;
}

export interface SearchCheck {
  /** Canonical text, '-' when negated: "from:ann", "-in:inbox", "category:updates". */
  predicate: string;
  /** server: IMAP answered it (SEARCH or folder choice); local: only the local check; none: nothing can. */
  by: 'server' | 'local' | 'none';
  /**
   * 'limited': the server's SEARCH narrowed on this predicate but matches raw bytes (Proton
   * Bridge), so mail whose matching text is encoded (RFC 2047 words, base64 or quoted-printable
   * bodies) is never among its hits, and no local check can bring it back.
   */
  recall?: 'limited';
}

export interface SearchPlan {
  /** Folders to search, in the model's order; [] exactly when `empty`. */
  folders: string[];
  empty: boolean;
  /** Narrows each folder's search; a superset of the true answer; {} when nothing can be asked. */
  criteria: SearchObject;
  checks: SearchCheck[];
  /**
   * Folders to search too, with the same criteria, only because the local check reads whether a
   * hit also sits there (membership of a label folder or a location is learnt by finding the
   * copy): e.g. Spam and Trash for `label:Receipts`, whose hits' location is otherwise unknown.
   */
  observe: string[];
  /** True when `folders` + `criteria` give exactly the query's answer: no hit needs the local check. */
  exact: boolean;
}

/**
 * Label id → display name of every user label the model shows (user folders, label folders,
 * keywords). The planner and the local check must read names from the same map, or label:x
 * would pick folders by one rule and confirm hits by another.
 */
export function labelNamesOf(model: FolderModel): Map<string, string> {
  const names = new Map<string, string>();
  for (const f of model.folders)
    if (f.labelId !== undefined && isUserLabelId(f.labelId)) names.set(f.labelId, f.name);
  for (const [id, name] of model.keywordLabels) names.set(id, name);
  return names;
}

/** IMAP flags that stand for Gmail system labels (docs/architecture.md, "The Mailbox contract"). */
const FLAG_LABELS: ReadonlyMap<string, { key: 'seen' | 'flagged' | 'draft'; whenPresent: boolean }> = new Map(
  [
    ['UNREAD', { key: 'seen', whenPresent: false }],
    ['STARRED', { key: 'flagged', whenPresent: true }],
    ['DRAFT', { key: 'draft', whenPresent: true }],
  ] as const,
);

/** What the planner knows about the mailbox, derived once per plan. */
interface Ctx {
  readonly now: number;
  /** Label id → normalised display name. */
  readonly names: ReadonlyMap<string, string>;
  /** Label id → the location or label folder that carries it. */
  readonly byId: ReadonlyMap<string, Folder>;
}

const predicates = new WeakMap<TermNode, Predicate>();
function predicateOf(term: TermNode): Predicate {
  let p = predicates.get(term);
  if (p === undefined) predicates.set(term, (p = interpretTerm(term)));
  return p;
}

/** Label ids whose display name is `name` (label:x compares normalised names, as evaluate does). */
function idsNamed(name: string, ctx: Ctx): string[] {
  return [...ctx.names].filter(([, n]) => n === name).map(([id]) => id);
}

/** A location id (INBOX, a user folder…) is decided by the folder a message sits in, never by SEARCH. */
function isLocationId(id: string, ctx: Ctx): boolean {
  return ctx.byId.get(id)?.kind === 'location';
}

/**
 * Where a message is assumed to sit while the query is read: `location` undefined means a label
 * folder's copy, whose own location is unknown; `labels` gives label folders' labels known here.
 */
interface Place {
  location: Folder | undefined;
  labels: ReadonlyMap<string, boolean>;
}

/** A pseudo-location with no label id: where an All Mail hit appears to be when nothing else is known. */
const NOWHERE: Folder = { path: '', kind: 'location', name: '' };

function carries(id: string, place: Place, ctx: Ctx): Tri {
  const f = ctx.byId.get(id);
  if (f === undefined) return undefined; // a keyword: SEARCH asks it
  if (f.kind === 'location') return place.location === undefined ? undefined : place.location.labelId === id;
  return place.labels.get(id);
}

/** Kleene value of one term for a message sitting at `place`; undefined: the folder cannot tell. */
function decide(p: Predicate, place: Place, ctx: Ctx): Tri {
  switch (p.kind) {
    case 'anywhere':
      return true;
    case 'never':
      return false;
    case 'labelId': {
      if (isLocationId(p.id, ctx)) {
        return place.location === undefined ? undefined : (place.location.labelId === p.id) === p.present;
      }
      if (FLAG_LABELS.has(p.id)) return undefined;
      // IMAP keeps no importance, chat or category state, and a server with no Junk folder has
      // no spam: no IMAP message carries such a label, just as interpretTerm's 'never' matches none.
      return !p.present;
    }
    case 'userLabel': {
      const values = idsNamed(p.name, ctx).map((id) => carries(id, place, ctx));
      return values.includes(true) ? true : values.includes(undefined) ? undefined : false;
    }
    case 'userLabels': {
      const here = place.location?.labelId;
      const some = (here !== undefined && isUserLabelId(here)) || [...place.labels.values()].includes(true);
      return some ? p.present : undefined;
    }
    default:
      return undefined;
  }
}

type Residual = boolean | QueryNode;

/** The query with every term the place decides replaced by its value, simplified (Kleene logic). */
function residual(node: QueryNode, place: Place, ctx: Ctx): Residual {
  switch (node.type) {
    case 'term':
      return decide(predicateOf(node), place, ctx) ?? node;
    case 'not': {
      const r = residual(node.child, place, ctx);
      return typeof r === 'boolean' ? !r : { type: 'not', child: r };
    }
    case 'and':
    case 'or': {
      const absorbing = node.type === 'or';
      const kept: QueryNode[] = [];
      for (const c of node.children) {
        const r = residual(c, place, ctx);
        if (r === absorbing) return absorbing;
        if (r !== !absorbing) kept.push(r as QueryNode);
      }
      const [only] = kept;
      return kept.length === 0
        ? !absorbing
        : kept.length === 1 && only !== undefined
          ? only
          : { type: node.type, children: kept };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Criteria. IMAP SEARCH (RFC 3501 §6.4.4) matches substrings case-insensitively and compares
// dates by day, ignoring time and zone; Gmail matches words and instants. A translation is
// `exact` when the server's set is the query's set, else only a superset: a superset may be
// ANDed or ORed, but only an exact criterion may be negated (NOT of a superset loses matches).

type Tr =
  | { kind: 'none'; exact: true }
  | { kind: 'all'; exact: boolean }
  | { kind: 'some'; parts: SearchObject[]; exact: boolean; terms: TermNode[] };

const NONE: Tr = { kind: 'none', exact: true };
const ALL: Tr = { kind: 'all', exact: true };
const LOOSE: Tr = { kind: 'all', exact: false };
const DAY_MS = 86_400_000;

/** imapflow drops an empty value and cannot send NUL or line breaks inside a string. */
const sendable = (s: string): boolean => s !== '' && !/\p{Cc}/u.test(s);
/** A keyword is an atom (RFC 3501 §9); imapflow refuses the search otherwise. */
const isAtom = (s: string): boolean => /^[\x21-\x7e]+$/u.test(s) && !/[(){%*"\\\]]/u.test(s);

/**
 * INTERNALDATE's day is read in whatever zone the server stored it (−12:00 to +14:00), so the
 * day is widened to the safe side: for `after:` the UTC day of the instant 12 h earlier, for
 * `before:` the day after the one holding the instant 14 h later. Dates are UTC midnights, which
 * imapflow sends as that day (and, with WITHIN, as an age that is wider still).
 */
function dateCriteria(since: boolean, at: number, term: TermNode): Tr {
  const day = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;
  const d = new Date(since ? day(at - 12 * 3_600_000) : day(at + 14 * 3_600_000 - 1) + DAY_MS);
  const year = d.getUTCFullYear();
  if (!(year > 0 && year < 10_000)) return LOOSE;
  return { kind: 'some', parts: [since ? { since: d } : { before: d }], exact: false, terms: [term] };
}

function termCriteria(term: TermNode, ctx: Ctx): Tr {
  const p = predicateOf(term);
  const one = (o: SearchObject, exact: boolean): Tr => ({ kind: 'some', parts: [o], exact, terms: [term] });
  switch (p.kind) {
    case 'header': {
      if (!sendable(p.needle)) return LOOSE;
      if (p.header === 'deliveredTo') return one({ header: { 'Delivered-To': p.needle } }, true);
      const o: SearchObject = {};
      o[p.header] = p.needle;
      return one(o, true);
    }
    case 'list':
      return sendable(p.needle) ? one({ header: { 'List-Id': p.needle } }, true) : LOOSE;
    case 'msgid':
      // A substring of the header, where Gmail asks for the whole id.
      return sendable(p.id) ? one({ header: { 'Message-ID': p.id } }, false) : LOOSE;
    case 'text': {
      // Word by word: "hello world" in quotes matches "Hello, world" as words, not as a substring.
      const values = p.phrases.flatMap((ph) => (ph.words.length > 0 ? ph.words : [ph.raw])).filter(sendable);
      if (values.length === 0) return LOOSE;
      const parts = [...new Set(values)].map((v): SearchObject =>
        p.where === 'subject' ? { subject: v } : { text: v },
      );
      return { kind: 'some', parts, exact: false, terms: [term] };
    }
    case 'labelId': {
      const flag = FLAG_LABELS.get(p.id);
      if (flag === undefined || isLocationId(p.id, ctx)) return LOOSE;
      const o: SearchObject = {};
      o[flag.key] = flag.whenPresent === p.present;
      return one(o, true);
    }
    case 'userLabel': {
      const ids = idsNamed(p.name, ctx);
      const keywords = ids.map((id) => id.slice(1)).filter(isAtom);
      if (
        ids.length === 0 ||
        ids.some((id) => ctx.byId.has(id) || !id.startsWith('#')) ||
        keywords.length < ids.length
      ) {
        return LOOSE;
      }
      const [only] = keywords;
      return one(
        keywords.length === 1 && only !== undefined
          ? { keyword: only }
          : { or: keywords.map((keyword) => ({ keyword })) },
        true,
      );
    }
    case 'age':
      return dateCriteria(p.newer, ctx.now - p.ms, term);
    case 'date':
      return dateCriteria(p.after, p.at, term);
    case 'size': {
      // LARGER and SMALLER are strict; imapflow drops a 0 operand, so those are left to the local check.
      const n = p.cmp === 'ge' ? p.bytes - 1 : p.bytes;
      return n < 1 ? LOOSE : one(p.cmp === 'lt' ? { smaller: n } : { larger: n }, true);
    }
    default:
      return LOOSE;
  }
}

const dedupe = (objects: SearchObject[]): SearchObject[] => [
  ...new Map(objects.map((o) => [JSON.stringify(o), o])).values(),
];

function conj(ts: readonly Tr[]): Tr {
  if (ts.some((t) => t.kind === 'none')) return NONE;
  const exact = ts.every((t) => t.exact);
  const somes = ts.filter((t) => t.kind === 'some');
  if (somes.length === 0) return { kind: 'all', exact };
  return {
    kind: 'some',
    parts: dedupe(somes.flatMap((t) => t.parts)),
    exact,
    terms: somes.flatMap((t) => t.terms),
  };
}

function disj(ts: readonly Tr[]): Tr {
  const live = ts.filter((t) => t.kind !== 'none');
  if (live.length === 0) return NONE;
  // One member the server cannot narrow (a local-only term) leaves the whole OR unasked.
  if (live.some((t) => t.kind === 'all')) return live.some((t) => t.kind === 'all' && t.exact) ? ALL : LOOSE;
  const somes = live.filter((t) => t.kind === 'some');
  const options = dedupe(somes.map((t) => pack(t.parts)));
  const [only] = options;
  return {
    kind: 'some',
    parts: options.length === 1 && only !== undefined ? [only] : [{ or: options }],
    exact: somes.every((t) => t.exact),
    terms: somes.flatMap((t) => t.terms),
  };
}

function negate(t: Tr): Tr {
  if (t.kind === 'none') return ALL;
  if (t.kind === 'all') return t.exact ? NONE : LOOSE;
  return t.exact ? { kind: 'some', parts: [{ not: pack(t.parts) }], exact: true, terms: t.terms } : LOOSE;
}

/** The criteria for `node` (or for NOT node when `neg`), as a superset. */
function translate(node: QueryNode, neg: boolean, ctx: Ctx): Tr {
  if (node.type === 'not') return translate(node.child, !neg, ctx);
  const pos =
    node.type === 'term'
      ? termCriteria(node, ctx)
      : (node.type === 'and' ? conj : disj)(node.children.map((c) => translate(c, false, ctx)));
  if (!neg || pos.exact) return neg ? negate(pos) : pos;
  if (node.type === 'term') return LOOSE;
  // De Morgan keeps whichever members the server can test exactly: -(from:a OR subject:b) still asks NOT FROM a.
  const parts = node.children.map((c) => translate(c, true, ctx));
  return node.type === 'or' ? conj(parts) : disj(parts);
}

function fits(out: SearchObject, p: SearchObject): boolean {
  const taken = out as Record<string, unknown>;
  return Object.keys(p).every((k) =>
    k === 'header'
      ? Object.keys(p.header ?? {}).every((h) => out.header?.[h] === undefined)
      : taken[k] === undefined,
  );
}

/**
 * ANDs criteria into one SearchObject. A key can appear once, so a second TEXT (or OR, …) goes
 * into a nested group: a one-element `or`, which imapflow sends as its parenthesised operand
 * alone, or else a double NOT (NOT NOT x is x, RFC 3501 §6.4.4).
 */
function pack(parts: readonly SearchObject[]): SearchObject {
  const out: SearchObject = {};
  const rest: SearchObject[] = [];
  for (const p of parts) {
    if (!fits(out, p)) {
      rest.push(p);
      continue;
    }
    const { header, ...others } = p;
    Object.assign(out, others);
    if (header !== undefined) out.header = { ...out.header, ...header };
  }
  if (rest.length === 0) return out;
  if (out.or === undefined) out.or = [pack(rest)];
  else if (out.not === undefined) out.not = { not: pack(rest) };
  else {
    // Both slots hold real members: move the OR into the group, which is smaller than `parts`.
    rest.unshift({ or: out.or });
    out.or = [pack(rest)];
  }
  return out;
}

function visitTerms(node: QueryNode, visit: (t: TermNode, negated: boolean) => void, negated = false): void {
  if (node.type === 'term') visit(node, negated);
  else if (node.type === 'not') visitTerms(node.child, visit, !negated);
  else for (const c of node.children) visitTerms(c, visit, negated);
}

function canonical(t: TermNode, negated: boolean): string {
  const v = fold(t.value).trim();
  const value = /\s/u.test(v) ? `"${v}"` : v;
  return `${negated ? '-' : ''}${t.field === null ? '' : `${t.field}:`}${value}`;
}

/** Who answers a term the folder choice decided everywhere it mattered. */
function decidedBy(p: Predicate, ctx: Ctx): SearchCheck['by'] {
  if (p.kind === 'never') return 'none';
  if (p.kind === 'labelId' && !FLAG_LABELS.has(p.id) && !isLocationId(p.id, ctx)) {
    // INBOX, SENT, SPAM, TRASH, DRAFT with no such folder: the layout itself says no message has it.
    return ['INBOX', 'SENT', 'DRAFT', 'SPAM', 'TRASH'].includes(p.id) ? 'server' : 'none';
  }
  if (p.kind === 'userLabel' && idsNamed(p.name, ctx).length === 0) return 'none';
  return p.kind === 'anywhere' || p.kind === 'labelId' || p.kind === 'userLabel' ? 'server' : 'local';
}

/**
 * Whether a server that matches SEARCH keys on raw bytes (gluon, Proton Bridge's IMAP server:
 * internal/state/mailbox_search.go) can miss mail this predicate should find. Words of a subject
 * or body may sit in an encoded word or a base64/quoted-printable part; a header needle without
 * "@" may be part of an encoded display name. Addresses, list ids and Message-IDs are plain ASCII.
 */
function rawMatchMisses(p: Predicate): boolean {
  if (p.kind === 'text') return true;
  if (p.kind === 'header') return !p.needle.includes('@');
  return false;
}

/**
 * Plans an IMAP search for a Gmail-style query (`me` already substituted), with Gmail's implicit
 * exclusion of spam and trash.
 *
 * Folder choice: each location folder is kept when the query can be true for a message sitting
 * there (location terms are decided by the folder, others unknown), reading the label folders the
 * query names un-negated as false, because their copies are searched in their own folder: a label
 * folder is kept when the query names it un-negated and can be true for a copy in it. If All Mail
 * exists and every location folder it covers (all but Junk and Trash; every one on Proton) is kept, and the query reads
 * the same in each of them and in none (so an All Mail hit, whose location is unknown, needs none
 * to be checked), All Mail replaces them. On IMAP a message lives in one location, so
 * `in:inbox in:sent` is empty, unlike on Gmail, where a message may carry both labels.
 */
export function planSearch(node: QueryNode, model: FolderModel, now: number): SearchPlan {
  const byId = new Map<string, Folder>();
  for (const f of model.folders) if (f.kind !== 'virtual' && f.labelId !== undefined) byId.set(f.labelId, f);
  const names = new Map([...labelNamesOf(model)].map(([id, n]) => [id, normalizeLabelName(n)]));
  const ctx: Ctx = { now, names, byId };
  const query = withImplicitExclusions(node);

  const named = new Set<string>();
  visitTerms(query, (t, negated) => {
    const p = predicateOf(t);
    if (negated || p.kind !== 'userLabel') return;
    for (const id of idsNamed(p.name, ctx)) if (byId.get(id)?.kind === 'label') named.add(id);
  });
  const namedFalse = new Map([...named].map((id) => [id, false]));
  const kept = new Map<Folder, Residual>();
  for (const f of model.folders) {
    const place: Place | undefined =
      f.kind === 'location'
        ? { location: f, labels: namedFalse }
        : f.kind === 'label' && named.has(f.labelId ?? f.path)
          ? { location: undefined, labels: new Map([[f.labelId ?? f.path, true]]) }
          : undefined;
    const r = place === undefined ? false : residual(query, place, ctx);
    if (r !== false) kept.set(f, r);
  }

  const all = folderByRole(model, 'all');
  // Gmail's All Mail leaves out Spam and Trash; Proton's holds every message (a label all mail
  // carries), so there it stands in only where Spam and Trash are kept too.
  const covered = model.folders.filter(
    (f) => f.kind === 'location' && (model.proton === true || (f.role !== 'junk' && f.role !== 'trash')),
  );
  if (all !== undefined && covered.length > 0 && covered.every((f) => kept.has(f))) {
    const nowhere = residual(query, { location: NOWHERE, labels: namedFalse }, ctx);
    const key = JSON.stringify(nowhere);
    if (covered.every((f) => JSON.stringify(kept.get(f)) === key)) {
      for (const f of covered) kept.delete(f);
      kept.set(all, nowhere);
    }
  }

  const residuals = new Map<string, QueryNode | true>();
  for (const r of kept.values()) if (r !== false) residuals.set(JSON.stringify(r), r);
  const union = disj([...residuals.values()].map((r) => (r === true ? ALL : translate(r, false, ctx))));
  const folders = model.folders.filter((f) => kept.has(f)).map((f) => f.path);
  const empty = folders.length === 0 || union.kind === 'none';

  // Membership the local check reads but no kept folder reveals: search those folders too.
  const undecided = new Set<TermNode>();
  for (const r of residuals.values()) if (r !== true) visitTerms(r, (t) => undecided.add(t));
  const watched = new Set<string>();
  for (const t of undecided) {
    const p = predicateOf(t);
    if (p.kind === 'labelId' && isLocationId(p.id, ctx)) watched.add(p.id);
    if (p.kind === 'userLabel') for (const id of idsNamed(p.name, ctx)) watched.add(id);
    if (p.kind === 'userLabels') for (const id of byId.keys()) if (isUserLabelId(id)) watched.add(id);
  }
  const observe = empty
    ? []
    : model.folders
        .filter((f) => f.labelId !== undefined && watched.has(f.labelId) && !kept.has(f))
        .map((f) => f.path);

  const survived = new Set(union.kind === 'some' ? union.terms : []);
  const checks = new Map<string, SearchCheck['by']>();
  const limited = new Set<string>();
  visitTerms(query, (t, negated) => {
    const text = canonical(t, negated);
    const by = survived.has(t) ? 'server' : undecided.has(t) ? 'local' : decidedBy(predicateOf(t), ctx);
    // One occurrence left to the local check makes the predicate local.
    if (checks.get(text) !== 'local') checks.set(text, by);
    if (model.proton === true && survived.has(t) && !negated && rawMatchMisses(predicateOf(t)))
      limited.add(text);
  });
  return {
    folders: empty ? [] : folders,
    empty,
    criteria: union.kind === 'some' && !empty ? pack(union.parts) : {},
    checks: [...checks].map(([predicate, by]) =>
      limited.has(predicate) ? { predicate, by, recall: 'limited' as const } : { predicate, by },
    ),
    observe,
    exact: !empty && residuals.size === 1 && union.exact && observe.length === 0,
  };
}
