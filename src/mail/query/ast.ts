/** The parsed form of a Gmail-style search query, shared by the sandbox, search and IMAP. */
export type QueryNode =
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode }
  /** `field` is lower-cased; null means free text. `value` keeps the case it was written in. */
  | { type: 'term'; field: string | null; value: string; quoted: boolean };

export type TermNode = Extract<QueryNode, { type: 'term' }>;

/** Gmail's documented operators (support.google.com/mail/answer/7190); any other `word:` is text. */
export const OPERATORS: ReadonlySet<string> = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'deliveredto',
  'subject',
  'label',
  'in',
  'is',
  'category',
  'has',
  'filename',
  'newer_than',
  'older_than',
  'after',
  'before',
  'older',
  'newer',
  'larger',
  'smaller',
  'size',
  'rfc822msgid',
  'list',
]);

export function isOperator(name: string): boolean {
  return OPERATORS.has(name.toLowerCase());
}
