import { invalidInput } from '../errors.js';
import type { MailError } from '../errors.js';
import type { QueryNode } from './ast.js';
import { isOperator } from './ast.js';
import { interpretTerm } from './interpret.js';

/** Positions in messages are 1-based character columns; tokens keep 0-based offsets. */
type Token =
  | { kind: '(' | ')' | '{' | '}' | '-' | 'OR' | 'AND' | 'eof'; start: number; end: number }
  | { kind: 'word' | 'quoted'; text: string; start: number; end: number }
  /** `from:` with what followed the colon in the same word ('' when a group or quote follows). */
  | { kind: 'field'; name: string; value: string; start: number; end: number };

function fail(problem: string): MailError {
  return invalidInput('query', problem);
}

function at(offset: number): string {
  return `position ${offset + 1}`;
}

const DELIMITERS = new Set(['(', ')', '{', '}', '"']);
const isSpace = (ch: string): boolean => /\s/u.test(ch);

function lex(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const ch = q[i] ?? '';
    if (isSpace(ch)) {
      i++;
    } else if (ch === '(' || ch === ')' || ch === '{' || ch === '}') {
      tokens.push({ kind: ch, start: i, end: i + 1 });
      i++;
    } else if (ch === '"') {
      const close = q.indexOf('"', i + 1);
      if (close < 0) throw fail(`unclosed quote: the '"' at ${at(i)} has no closing '"'`);
      const text = q.slice(i + 1, close);
      if (text.trim() === '') throw fail(`empty quotes at ${at(i)}`);
      tokens.push({ kind: 'quoted', text, start: i, end: close + 1 });
      i = close + 1;
    } else if (ch === '-') {
      // Gmail's negation only binds when glued to what it negates ("-movie", "-(a b)").
      const next = q[i + 1];
      if (next === undefined || isSpace(next) || next === ')' || next === '}') {
        throw fail(`'-' at ${at(i)} must be followed directly by the term it excludes`);
      }
      tokens.push({ kind: '-', start: i, end: i + 1 });
      i++;
    } else {
      let end = i;
      while (end < q.length && !isSpace(q[end] ?? '') && !DELIMITERS.has(q[end] ?? '')) end++;
      tokens.push(wordToken(q.slice(i, end), i, end));
      i = end;
    }
  }
  tokens.push({ kind: 'eof', start: q.length, end: q.length });
  return tokens;
}

function wordToken(text: string, start: number, end: number): Token {
  // Gmail only honours OR and AND in capitals; "or" is an ordinary word.
  if (text === 'OR' || text === 'AND') return { kind: text, start, end };
  const colon = text.indexOf(':');
  if (colon > 0 && isOperator(text.slice(0, colon))) {
    return {
      kind: 'field',
      name: text.slice(0, colon).toLowerCase(),
      value: text.slice(colon + 1),
      start,
      end,
    };
  }
  return { kind: 'word', text, start, end };
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'eof':
      return 'the end of the query';
    case 'word':
    case 'quoted':
      return `"${t.text}" at ${at(t.start)}`;
    case 'field':
      return `"${t.name}:" at ${at(t.start)}`;
    default:
      return `'${t.kind}' at ${at(t.start)}`;
  }
}

class Parser {
  private i = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    // lex() always ends with eof, and the parser never moves past it.
    return this.tokens[this.i] ?? { kind: 'eof', start: 0, end: 0 };
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  /** The whole query: implicit (or explicit AND) conjunction of OR-chains. */
  parseQuery(): QueryNode {
    const items = this.sequence(null, 'eof');
    if (items.length === 0) return { type: 'and', children: [] };
    return items.length === 1 && items[0] !== undefined ? items[0] : { type: 'and', children: items };
  }

  /** Terms up to `closer`, joined by AND; `field` is set inside `from:( … )`. */
  private sequence(field: string | null, closer: ')' | 'eof'): QueryNode[] {
    const items: QueryNode[] = [];
    let pendingAnd: Token | undefined;
    for (;;) {
      const t = this.peek();
      if (t.kind === closer) break;
      if (t.kind === 'eof') break; // the caller reports the unclosed group
      if (t.kind === ')' || t.kind === '}') throw fail(`unmatched '${t.kind}' at ${at(t.start)}`);
      if (t.kind === 'AND') {
        if (items.length === 0 || pendingAnd !== undefined) {
          throw fail(`AND at ${at(t.start)} needs a term before it`);
        }
        pendingAnd = this.next();
        continue;
      }
      items.push(this.orChain(field));
      pendingAnd = undefined;
    }
    if (pendingAnd !== undefined) throw fail(`AND at ${at(pendingAnd.start)} needs a term after it`);
    return items;
  }

  /** Gmail binds OR tighter than the implicit AND: `a b OR c` is a AND (b OR c). */
  private orChain(field: string | null): QueryNode {
    const first = this.unary(field);
    const items = [first];
    while (this.peek().kind === 'OR') {
      const or = this.next();
      if (!this.startsTerm(this.peek())) throw fail(`OR at ${at(or.start)} needs a term after it`);
      items.push(this.unary(field));
    }
    return items.length === 1 ? first : { type: 'or', children: items };
  }

  private startsTerm(t: Token): boolean {
    return (
      t.kind === '(' ||
      t.kind === '{' ||
      t.kind === '-' ||
      t.kind === 'word' ||
      t.kind === 'quoted' ||
      t.kind === 'field'
    );
  }

  private unary(field: string | null): QueryNode {
    if (this.peek().kind === '-') {
      this.next();
      return { type: 'not', child: this.unary(field) };
    }
    return this.primary(field);
  }

  private primary(field: string | null): QueryNode {
    const t = this.next();
    switch (t.kind) {
      case '(':
        return this.andGroup(t, field);
      case '{':
        return this.orGroup(t, field);
      case 'quoted':
        return this.term(field, t.text, true, t.start);
      case 'word':
        return this.term(field, t.text, false, t.start);
      case 'field':
        return this.fieldTerm(t, field);
      case 'OR':
      case 'AND':
        throw fail(`${t.kind} at ${at(t.start)} needs a term before it`);
      default:
        throw fail(`expected a term but found ${describe(t)}`);
    }
  }

  private andGroup(open: Token, field: string | null): QueryNode {
    const items = this.sequence(field, ')');
    if (this.next().kind !== ')') throw fail(`unclosed '(' at ${at(open.start)}`);
    if (items.length === 0) throw fail(`empty '( )' at ${at(open.start)}`);
    // One term in parentheses means just that term; keeping a wrapper would only hide it.
    return items.length === 1 && items[0] !== undefined ? items[0] : { type: 'and', children: items };
  }

  /** `{a b c}` is Gmail's OR group; an OR between its members is redundant but allowed. */
  private orGroup(open: Token, field: string | null): QueryNode {
    const items: QueryNode[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === '}') break;
      if (t.kind === 'eof') throw fail(`unclosed '{' at ${at(open.start)}`);
      if (t.kind === 'AND')
        throw fail(`AND at ${at(t.start)} cannot join terms inside '{ }'; use '( )' for AND`);
      if (t.kind === 'OR') {
        this.next();
        if (items.length === 0 || !this.startsTerm(this.peek())) {
          throw fail(`OR at ${at(t.start)} needs a term on each side`);
        }
        continue;
      }
      if (t.kind === ')') throw fail(`unmatched ')' at ${at(t.start)}`);
      items.push(this.unary(field));
    }
    this.next();
    if (items.length === 0) throw fail(`empty '{ }' at ${at(open.start)}`);
    return items.length === 1 && items[0] !== undefined ? items[0] : { type: 'or', children: items };
  }

  private fieldTerm(t: Extract<Token, { kind: 'field' }>, outer: string | null): QueryNode {
    if (outer !== null) throw fail(`"${t.name}:" at ${at(t.start)} cannot be used inside "${outer}:( )"`);
    if (t.value !== '') return this.term(t.name, t.value, false, t.start);
    // The value must touch the colon: Gmail reads "from: ann" as the word "from:" and then "ann".
    const v = this.peek();
    if (v.start === t.end) {
      if (v.kind === 'quoted') {
        this.next();
        return this.term(t.name, v.text, true, t.start);
      }
      if (v.kind === '(' || v.kind === '{') {
        this.next();
        return v.kind === '(' ? this.andGroup(v, t.name) : this.orGroup(v, t.name);
      }
    }
    throw fail(`"${t.name}:" at ${at(t.start)} needs a value right after the colon, e.g. ${t.name}:value`);
  }

  private term(field: string | null, value: string, quoted: boolean, start: number): QueryNode {
    const node: QueryNode = { type: 'term', field, value, quoted };
    // Validating here means a bad value is reported with its position before anything runs.
    interpretTerm(node, start + 1);
    return node;
  }
}

/**
 * Parses Gmail's search language. '' (or only whitespace) is an empty AND, which matches
 * everything. Throws invalid_input naming the problem and its 1-based position.
 */
export function parseQuery(q: string): QueryNode {
  return new Parser(lex(q)).parseQuery();
}
