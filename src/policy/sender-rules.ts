import { domainToASCII } from 'node:url';
import { matchSenderRule } from './write-policy.js';
import type { SenderRules } from './write-policy.js';

/*
 * The pure half of sender rules (policy.json senderRules): the coarse inbox search that finds
 * candidates, and the exact match that decides. The search is only a sieve: Gmail's from: and
 * IMAP's FROM (RFC 3501 §6.4.4, a substring of the header) both match more than a rule means
 * (`example.com` also finds `badexample.com`), so every hit is matched again, here, against the
 * message's real From address.
 */

/** Rules per search: keeps each query short for both providers. */
const TERMS_PER_QUERY = 20;

/** A local part a from: value can carry unquoted in the query language (no operators, no spaces). */
const PLAIN_LOCAL = /^[a-z0-9][a-z0-9._+-]*$/;
const PLAIN_DOMAIN = /^[\p{L}\p{N}][\p{L}\p{N}.-]*$/u;

/**
 * What to search for one rule: the address itself when its local part is plain text, else its
 * domain (a wider sieve, never a narrower one); each domain in its U-label and A-label forms,
 * since a From header carries the domain as the sender wrote it.
 */
function searchTerms(rule: string): string[] {
  const at = rule.lastIndexOf('@');
  const domain = at < 0 ? rule : rule.slice(at + 1);
  const forms = [...new Set([domain, domainToASCII(domain)])].filter((d) => PLAIN_DOMAIN.test(d));
  const local = at < 0 ? undefined : rule.slice(0, at);
  if (local !== undefined && PLAIN_LOCAL.test(local)) return forms.map((d) => `${local}@${d}`);
  return forms;
}

/** Queries (query language of src/mail/query) whose union covers every inbox message a rule may match. */
export function senderRuleQueries(rules: SenderRules): string[] {
  const terms = [...new Set([...rules.archive, ...rules.spam].flatMap(searchTerms))];
  const out: string[] = [];
  for (let i = 0; i < terms.length; i += TERMS_PER_QUERY)
    out.push(`in:inbox from:(${terms.slice(i, i + TERMS_PER_QUERY).join(' OR ')})`);
  return out;
}

export interface RuleMatch {
  action: 'archive' | 'spam';
  /** The rule as policy.json has it (normalised). */
  rule: string;
}

/** The rule for a message's sender address (undefined: no address, or no rule covers it). */
export function senderRuleFor(rules: SenderRules, sender: string | undefined): RuleMatch | undefined {
  if (sender === undefined || sender.trim() === '') return undefined;
  return matchSenderRule(rules, sender);
}
