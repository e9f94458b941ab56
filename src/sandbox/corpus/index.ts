/**
 * The demo mailbox: a deterministic SeedUser of a few hundred threads covering what mailwarden
 * must survive (see "The sandbox" in docs/architecture.md), and the facts tests can assert about it.
 */
import type { SeedUser } from '../seed.js';
import { addAuthArrivalCases } from './auth-arrival.js';
import { addAuthCases } from './auth-cases.js';
import { addAutomated } from './automated.js';
import { CorpusBuilder } from './builder.js';
import { addCalendar } from './calendar.js';
import { addCharsets } from './charsets.js';
import { addColleagues } from './colleagues.js';
import { addCommerce } from './commerce.js';
import { addConversations } from './conversations.js';
import { addFriends } from './friends.js';
import type { DemoFacts } from './facts.js';
import { addFollowups } from './followups.js';
import { addHiddenText } from './hidden-text.js';
import { addIdentity } from './identity.js';
import { addNewsletters } from './newsletters.js';
import { addDmarcReports } from './reports.js';
import { addReaderCases } from './reader-cases.js';
import { addSocial } from './social.js';
import { addSpam } from './spam.js';
import { addUpdates } from './updates.js';

export { DEMO_ADDRESS, LABELS, USER_LABELS } from './people.js';
export type { DemoFacts, DemoKeys, UnsubscribeFact } from './facts.js';
export { LIST_KEYS, SINGLE_KEYS } from './facts.js';

/** 30 November 2026, 09:00 UTC. */
export const DEFAULT_NOW = Date.UTC(2026, 10, 30, 9, 0);

function build(now: number): { user: SeedUser; facts: DemoFacts } {
  const b = new CorpusBuilder(now);
  addNewsletters(b);
  addHiddenText(b);
  addIdentity(b);
  addAuthCases(b);
  addCalendar(b);
  addDmarcReports(b);
  addCharsets(b);
  addConversations(b);
  addFollowups(b);
  addSpam(b);
  addAutomated(b);
  addUpdates(b);
  addCommerce(b);
  addSocial(b);
  addColleagues(b);
  addFriends(b);
  addAuthArrivalCases(b);
  addReaderCases(b);
  return b.finish();
}

/**
 * The demo mailbox dated against `now` (default DEFAULT_NOW). Everything except dates is the
 * same for every `now`: every date is an offset back from it.
 */
export function demoCorpus(options: { now?: number } = {}): SeedUser {
  return build(options.now ?? DEFAULT_NOW).user;
}

/** Known answers for the corpus at DEFAULT_NOW; counts and keys hold for any `now`. */
export const DEMO_FACTS: DemoFacts = build(DEFAULT_NOW).facts;
