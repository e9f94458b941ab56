import type { CorrespondentCheck } from './correspondents.js';
import { normalizeSenderRule } from './write-policy.js';
import type { EffectivePolicy } from './write-policy.js';

/*
 * A server-side filter whose action keeps mail out of the inbox (removes INBOX, adds SPAM or
 * TRASH) moves every future message it matches with no cap charged, no log line and no
 * correspondent check: a standing move (docs/architecture.md, "The write policy"). Under inboxOnlyMoves the agent may
 * create one only when a person confirms it, and only for senders that are not correspondents.
 */

export const STANDING_MOVE_RULE = 'standing-move';

/** Whether a filter's label action keeps matching mail out of the inbox. */
export function keepsOutOfInbox(add: readonly string[], remove: readonly string[]): boolean {
  return remove.includes('INBOX') || add.includes('SPAM') || add.includes('TRASH');
}

/**
 * The senders a filter's `from` criterion names, each an address or a domain (normalised), or
 * undefined when some part of it is neither (a bare word, a negation, a wildcard): then nobody
 * can tell whose mail it matches. Gmail reads `from` as search syntax: "a@x.org OR b.org",
 * "{a@x.org b@y.org}", commas and spaces separate alternatives.
 */
export function filterSenders(from: string | undefined): string[] | undefined {
  if (from === undefined) return undefined;
  const tokens = from.split(/[\s,{}()"]+/).filter((t) => t !== '' && t !== 'OR' && t !== '|');
  if (tokens.length === 0) return undefined;
  const out: string[] = [];
  for (const t of tokens) {
    const rule = normalizeSenderRule(t.replace(/^from:/i, ''));
    // A wildcard ("*@x.org") matches more than the address it looks like: whom it covers is unsaid.
    if (rule === undefined || t.startsWith('-') || /[*?]/.test(t)) return undefined;
    out.push(rule);
  }
  return [...new Set(out)];
}

/**
 * Why the agent may not create this standing move, or undefined when it may (with a person's
 * confirmation, asked by the caller). Only server-made text: the criteria are the model's input.
 */
export async function standingMoveRefusal(
  policy: EffectivePolicy,
  from: string | undefined,
  correspondents: CorrespondentCheck | undefined,
): Promise<string | undefined> {
  if (!policy.rules.protectCorrespondents) return undefined;
  const senders = filterSenders(from);
  if (senders === undefined)
    return `a filter that keeps mail out of the inbox must name its senders in criteria.from (addresses or domains only), so the policy can check that none is a protected correspondent (protectCorrespondents in ${policy.path})`;
  if (correspondents?.covers === undefined)
    return 'the write policy has no list of correspondents to check the filter against';
  for (const s of senders)
    if (await correspondents.covers(s))
      return `criteria.from ${JSON.stringify(s)} covers a protected correspondent (in To or Cc of mail sent from this account in the last ${policy.rules.correspondentsDays} days): a filter may not keep their mail out of the inbox; the user can make it in the mail client, or set protectCorrespondents to false in ${policy.path}`;
  return undefined;
}
