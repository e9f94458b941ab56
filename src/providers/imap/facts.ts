import { staticFactsOf } from '../../mail/message-facts.js';
import type { MessageFacts, QueryNode } from '../../mail/query/index.js';
import { evaluate } from '../../mail/query/index.js';
import type { Header, MimeNode } from '../../mail/types.js';
import { withImplicitExclusions } from '../../mail/verify.js';

/** What the IMAP provider holds for one fetched message (all its copies merged). */
export interface ImapMessageInput {
  /** Top-level headers, as parseRawMessage returns them (encoded-words not yet decoded). */
  headers: readonly Header[];
  root: MimeNode;
  /** INTERNALDATE, milliseconds since the epoch. */
  internalDate: number;
  /** RFC822.SIZE: the size LARGER/SMALLER compare, so the local check agrees with SEARCH. */
  size: number;
  /**
   * Every label the message carries: the labelId of each folder holding a copy, UNREAD without
   * \Seen, STARRED with \Flagged, DRAFT with \Draft, "#" + keyword for each user keyword.
   */
  labelIds: readonly string[];
  /** Label id → display name (labelNamesOf in query.ts), the same map the planner read. */
  labelNames: ReadonlyMap<string, string>;
}

/**
 * The facts evaluate() reads, derived by the same function the sandbox's Gmail simulation uses
 * (src/mail/message-facts.ts), so a message gets the same answer from the local check as from
 * the simulator, whichever provider it came through.
 */
export function imapMessageFacts(input: ImapMessageInput): MessageFacts {
  return {
    labelIds: new Set(input.labelIds),
    labelNames: input.labelNames,
    ...staticFactsOf(input.headers, input.root, input.internalDate, input.size),
  };
}

/**
 * Gmail's answer for one fetched message: the query with spam and trash left out unless it
 * names them. Every IMAP hit passes through this, because SEARCH only narrows (substrings,
 * whole days) and cannot see attachments, words or Gmail-only state at all.
 */
export function matchesLocally(node: QueryNode, facts: MessageFacts, now: number): boolean {
  return evaluate(withImplicitExclusions(node), facts, now);
}
