import type { QueryNode, TermNode } from './ast.js';
import type { Phrase, Predicate } from './interpret.js';
import { fold, interpretTerm, isUserLabelId, normalizeLabelName, stripAngles, words } from './interpret.js';

export interface MessageFacts {
  /** Gmail label ids: system ids (INBOX, UNREAD, CATEGORY_UPDATES, …) and user label ids. */
  labelIds: ReadonlySet<string>;
  /** Label id → display name for user labels, e.g. "Work/Projects". */
  labelNames: ReadonlyMap<string, string>;
  /** Decoded header text, e.g. 'Ann Lee <ann@x.com>, bob@y.org'. */
  from: string;
  to: string;
  cc: string;
  bcc: string;
  deliveredTo: string;
  subject: string;
  bodyText: string;
  attachmentNames: string[];
  /** Milliseconds since the epoch. */
  internalDate: number;
  /** Bytes. */
  sizeEstimate: number;
  /** With or without the surrounding <>. */
  rfc822MessageId: string;
  /** List-Id header value, '' when there is none. */
  listId: string;
}

/** Kleene truth value: undefined means the labels alone cannot tell. */
export type Tri = boolean | undefined;

const predicates = new WeakMap<TermNode, Predicate>();

/** Terms are immutable once parsed, so each is interpreted once however many messages it meets. */
function predicateOf(term: TermNode): Predicate {
  let p = predicates.get(term);
  if (p === undefined) {
    p = interpretTerm(term);
    predicates.set(term, p);
  }
  return p;
}

interface TextField {
  words: string[];
  folded: string;
}

interface TextFields {
  subject: TextField[];
  anywhere: TextField[];
}

const textCache = new WeakMap<MessageFacts, TextFields>();

function textFieldsOf(facts: MessageFacts): TextFields {
  let cached = textCache.get(facts);
  if (cached === undefined) {
    const field = (s: string): TextField => ({ words: words(s), folded: fold(s) });
    const subject = field(facts.subject);
    // A phrase must not run from one field into the next, so each stays its own word list.
    const others = [facts.bodyText, facts.from, facts.to, facts.cc, ...facts.attachmentNames].map(field);
    cached = { subject: [subject], anywhere: [subject, ...others] };
    textCache.set(facts, cached);
  }
  return cached;
}

function containsPhrase(field: TextField, phrase: Phrase): boolean {
  // A value made only of punctuation (":)", "+++") has no words to align, so fall back to a substring.
  if (phrase.words.length === 0) return field.folded.includes(phrase.raw);
  const last = field.words.length - phrase.words.length;
  for (let i = 0; i <= last; i++) {
    if (phrase.words.every((w, j) => field.words[i + j] === w)) return true;
  }
  return false;
}

function matches(p: Predicate, facts: MessageFacts, now: number): boolean {
  switch (p.kind) {
    case 'header':
      // Substring, so from:ann matches both the display name and the address.
      return fold(facts[p.header]).includes(p.needle);
    case 'text': {
      const fields = textFieldsOf(facts)[p.where];
      // Each word group may sit in a different field; a phrase must sit inside one.
      return p.phrases.every((ph) => fields.some((f) => containsPhrase(f, ph)));
    }
    case 'labelId':
      return facts.labelIds.has(p.id) === p.present;
    case 'userLabel':
      // Exact name only: Gmail does not match Work/Projects for label:work.
      return [...facts.labelIds].some((id) => {
        const name = facts.labelNames.get(id);
        return name !== undefined && normalizeLabelName(name) === p.name;
      });
    case 'anywhere':
      return true;
    case 'never':
      return false;
    case 'userLabels':
      return [...facts.labelIds].some(isUserLabelId) === p.present;
    case 'attachment':
      return facts.attachmentNames.length > 0;
    case 'link':
      return p.pattern.test(facts.bodyText);
    case 'filename':
      // Containment covers Gmail's exact-name and extension forms (filename:pdf) alike.
      return facts.attachmentNames.some((n) => fold(n).includes(p.needle));
    case 'age': {
      // Same boundary rule as after:/before:, so newer_than:N and older_than:N split time cleanly.
      const cutoff = now - p.ms;
      return p.newer ? facts.internalDate >= cutoff : facts.internalDate < cutoff;
    }
    case 'date':
      // after: includes its midnight and before: excludes it, so after:D before:D+1 is one day.
      return p.after ? facts.internalDate >= p.at : facts.internalDate < p.at;
    case 'size':
      return p.cmp === 'gt'
        ? facts.sizeEstimate > p.bytes
        : p.cmp === 'lt'
          ? facts.sizeEstimate < p.bytes
          : facts.sizeEstimate >= p.bytes;
    case 'msgid':
      // Whole id, not a substring: rfc822msgid: is how a client finds one exact message.
      return fold(stripAngles(facts.rfc822MessageId)) === p.id;
    case 'list':
      return fold(facts.listId).includes(p.needle);
  }
}

/** Two-valued evaluation of a query against everything known about one message. */
export function evaluate(node: QueryNode, facts: MessageFacts, now: number): boolean {
  switch (node.type) {
    case 'and':
      return node.children.every((c) => evaluate(c, facts, now));
    case 'or':
      return node.children.some((c) => evaluate(c, facts, now));
    case 'not':
      return !evaluate(node.child, facts, now);
    case 'term':
      return matches(predicateOf(node), facts, now);
  }
}

/**
 * Kleene 3-valued evaluation where ONLY label-state predicates (is:unread/read/starred/important,
 * in:inbox/spam/trash/sent/drafts/chats/starred/important, category:* that has a label id,
 * label:<system name>) are known from labelIds; in:anywhere is always true; every other term,
 * including is:muted, is:snoozed and category:purchases/reservations, is undefined.
 */
export function evaluateLabelState(node: QueryNode, labelIds: ReadonlySet<string>): Tri {
  switch (node.type) {
    case 'and': {
      let result: Tri = true;
      for (const c of node.children) {
        const r = evaluateLabelState(c, labelIds);
        if (r === false) return false;
        if (r === undefined) result = undefined;
      }
      return result;
    }
    case 'or': {
      let result: Tri = false;
      for (const c of node.children) {
        const r = evaluateLabelState(c, labelIds);
        if (r === true) return true;
        if (r === undefined) result = undefined;
      }
      return result;
    }
    case 'not': {
      const r = evaluateLabelState(node.child, labelIds);
      return r === undefined ? undefined : !r;
    }
    case 'term': {
      const p = predicateOf(node);
      if (p.kind === 'labelId') return labelIds.has(p.id) === p.present;
      if (p.kind === 'anywhere') return true;
      // Muted, snoozed and label-less categories are real Gmail state the labels cannot show.
      return undefined;
    }
  }
}

function visitTerms(
  node: QueryNode,
  visit: (term: TermNode, negated: boolean) => void,
  negated = false,
): void {
  switch (node.type) {
    case 'and':
    case 'or':
      for (const c of node.children) visitTerms(c, visit, negated);
      return;
    case 'not':
      visitTerms(node.child, visit, !negated);
      return;
    case 'term':
      visit(node, negated);
  }
}

/**
 * The label-state predicates the query uses, written canonically (lower case) with '-' when
 * negated an odd number of times, e.g. ['is:unread', '-in:inbox', 'category:updates'];
 * deduplicated, in order of appearance.
 */
export function labelStatePredicates(node: QueryNode): string[] {
  const seen = new Set<string>();
  visitTerms(node, (term, negated) => {
    if (term.field !== null && predicateOf(term).kind === 'labelId') {
      seen.add(`${negated ? '-' : ''}${term.field}:${fold(term.value).trim()}`);
    }
  });
  return [...seen];
}

/**
 * True when the query asks for spam or trash (in:spam, in:trash, in:anywhere, label:spam,
 * label:trash), so Gmail's default exclusion of both must not apply. Only un-negated mentions
 * count: `-in:trash` narrows further and leaves the default exclusion in force.
 */
export function mentionsSpamOrTrash(node: QueryNode): boolean {
  let found = false;
  visitTerms(node, (term, negated) => {
    if (negated) return;
    const p = predicateOf(term);
    if (
      p.kind === 'anywhere' ||
      (p.kind === 'labelId' && p.present && (p.id === 'SPAM' || p.id === 'TRASH'))
    ) {
      found = true;
    }
  });
  return found;
}

const ADDRESS_FIELDS: ReadonlySet<string> = new Set(['from', 'to', 'cc', 'bcc', 'deliveredto']);

/**
 * Replaces the unquoted value `me` in address operators with the mailbox's own address; Gmail
 * resolves `me` server-side, so a local evaluator must be told who "me" is. A quoted "me" is a
 * literal search for the text me.
 */
export function substituteMe(node: QueryNode, address: string): QueryNode {
  switch (node.type) {
    case 'and':
    case 'or':
      return { type: node.type, children: node.children.map((c) => substituteMe(c, address)) };
    case 'not':
      return { type: 'not', child: substituteMe(node.child, address) };
    case 'term':
      return node.field !== null &&
        ADDRESS_FIELDS.has(node.field) &&
        !node.quoted &&
        fold(node.value) === 'me'
        ? { ...node, value: address }
        : node;
  }
}
