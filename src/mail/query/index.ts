/**
 * Gmail's search language (support.google.com/mail/answer/7190), parsed once and used three ways:
 * the sandbox simulator evaluates it against messages, the search tool re-checks its label-state
 * predicates against each hit's live labels, and the IMAP provider translates the tree to SEARCH.
 */
export type { QueryNode, TermNode } from './ast.js';
export { OPERATORS } from './ast.js';
export { parseQuery } from './parse.js';
export { formatQuery } from './format.js';
export type { MessageFacts, Tri } from './evaluate.js';
export {
  evaluate,
  evaluateLabelState,
  labelStatePredicates,
  mentionsSpamOrTrash,
  substituteMe,
} from './evaluate.js';
export type { Predicate, Phrase } from './interpret.js';
export { interpretTerm, laMidnight, normalizeLabelName } from './interpret.js';
