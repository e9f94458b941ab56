import { invalidInput } from '../errors.js';
import type { QueryNode, TermNode } from './ast.js';
import { OPERATORS, isOperator } from './ast.js';

/**
 * Where a node is written decides its brackets: at the top an AND needs none, as an item of an
 * AND an OR-chain needs none (OR binds tighter), and as an operand of '-', OR or '{ }' both do.
 */
type Place = 'top' | 'andItem' | 'operand';

function unwritable(problem: string): Error {
  return invalidInput('query', `cannot write this query: ${problem}`);
}

/** A value the lexer would read back as one word, unchanged. */
function isBareWord(value: string): boolean {
  return value !== '' && !/[\s(){}"]/u.test(value);
}

function formatTerm(t: TermNode): string {
  if (t.quoted) {
    if (t.value.includes('"') || t.value.trim() === '') {
      throw unwritable(`the quoted value ${JSON.stringify(t.value)} is empty or contains '"'`);
    }
  } else if (!isBareWord(t.value)) {
    throw unwritable(`the unquoted value ${JSON.stringify(t.value)} is not a single word`);
  }
  const value = t.quoted ? `"${t.value}"` : t.value;
  if (t.field !== null) {
    if (!OPERATORS.has(t.field)) throw unwritable(`"${t.field}" is not a lower-case search operator`);
    return `${t.field}:${value}`;
  }
  if (!t.quoted) {
    const colon = t.value.indexOf(':');
    const readsAsSyntax =
      t.value.startsWith('-') ||
      t.value === 'OR' ||
      t.value === 'AND' ||
      (colon > 0 && isOperator(t.value.slice(0, colon)));
    if (readsAsSyntax) throw unwritable(`the free-text word ${JSON.stringify(t.value)} would read as syntax`);
  }
  return value;
}

function format(node: QueryNode, place: Place): string {
  switch (node.type) {
    case 'term':
      return formatTerm(node);
    case 'not':
      return `-${format(node.child, 'operand')}`;
    case 'and':
    case 'or': {
      const [only, ...rest] = node.children;
      if (only === undefined) throw unwritable(`an empty ${node.type.toUpperCase()} group inside a query`);
      // The parser drops brackets around a single term, so a one-child group is written as its child.
      if (rest.length === 0) return format(only, place);
      if (node.type === 'and') {
        const inner = node.children.map((c) => format(c, 'andItem')).join(' ');
        return place === 'top' ? inner : `(${inner})`;
      }
      const members = node.children.map((c) => format(c, 'operand'));
      return place === 'operand' ? `{${members.join(' ')}}` : members.join(' OR ');
    }
  }
}

/**
 * Writes a query back as text. parseQuery(formatQuery(n)) deep-equals n for every tree parseQuery
 * returns; other trees come back with the same meaning. Throws invalid_input for a tree no text
 * can express (a nested empty group, an unquoted value with spaces, a quoted value containing '"').
 */
export function formatQuery(node: QueryNode): string {
  if (node.type === 'and' && node.children.length === 0) return '';
  return format(node, 'top');
}
