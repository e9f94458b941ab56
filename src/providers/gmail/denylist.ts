/**
 * The denylist in front of the allowlist (docs/architecture.md, promise 1): as wide as the Gmail API, matched
 * case-insensitively on the normalised path wherever `gmail/v1/users/{x}` appears in it (so
 * `/upload/…`, `/batch/…` and any other prefix are judged by what they would reach), ignoring
 * `;params` and `:verb` suffixes that some front ends strip. It is checked whatever tiers are
 * on: no tier, present or future, can reach these.
 */

interface Rule {
  readonly applies: (method: string, rest: readonly string[]) => boolean;
  readonly reason: string;
}

const NO_SEND = 'mailwarden has no send path';

const RULES: readonly Rule[] = [
  {
    applies: (_m, r) => r[0] === 'messages' && r[1] === 'send',
    reason: `messages.send is never allowed: ${NO_SEND}`,
  },
  {
    applies: (_m, r) => r[0] === 'drafts' && r[1] === 'send',
    reason: `drafts.send is never allowed: ${NO_SEND}; a saved draft is sent by a human in Gmail`,
  },
  {
    applies: (_m, r) => r[0] === 'messages' && r[1] === 'import',
    reason: 'messages.import is never allowed: it writes arbitrary mail into the mailbox',
  },
  {
    applies: (m, r) => r[0] === 'messages' && r.length === 1 && m === 'POST',
    reason: 'messages.insert is never allowed: it writes arbitrary mail into the mailbox',
  },
  {
    applies: (_m, r) => r[0] === 'messages' && r[1] === 'batchdelete',
    reason: 'messages.batchDelete is never allowed: it deletes permanently, bypassing Trash',
  },
  {
    applies: (m, r) => (r[0] === 'messages' || r[0] === 'threads') && m === 'DELETE',
    reason: 'deleting messages or threads is never allowed: it bypasses Trash; use trash instead',
  },
  {
    applies: (m, r) => r[0] === 'drafts' && !(m === 'POST' && r.length === 1),
    reason: 'only drafts.create is ever allowed among drafts methods',
  },
  {
    applies: (_m, r) => r[0] === 'settings' && r[1] !== 'filters',
    reason:
      'Gmail settings other than filters (forwarding, send-as, delegates, auto-forwarding, IMAP/POP, vacation, language, CSE) are never touched',
  },
  {
    applies: (_m, r) => r[0] === 'watch' || r[0] === 'stop',
    reason: 'users.watch/stop are never allowed: they push mailbox changes to an outside Pub/Sub topic',
  },
];

/** Lower-cased segment with any `;param` or `:verb` suffix removed. */
function base(segment: string): string {
  return (segment.split(/[;:]/)[0] ?? '').toLowerCase();
}

/** The segments after `gmail/v1/users/{userId}`, or undefined when the path has no such run. */
function gmailRest(segments: readonly string[]): string[] | undefined {
  for (let i = 0; i + 3 < segments.length; i++) {
    const [a, b, c] = [segments[i], segments[i + 1], segments[i + 2]].map((s) => base(s ?? ''));
    if (a === 'gmail' && b === 'v1' && c === 'users') return segments.slice(i + 4);
  }
  return undefined;
}

/** Why this request is denied outright, or undefined when the allowlist should decide. */
export function denyReason(method: string, segments: readonly string[]): string | undefined {
  const rest = gmailRest(segments);
  if (rest === undefined) return undefined;
  // A `:verb` suffix on the resource (`messages:send`) names the same method in Google's
  // custom-verb syntax, so split it into its own segment before the rules look.
  const parts = rest.flatMap((s) => s.split(':')).map(base);
  const verb = method.toUpperCase();
  return RULES.find((rule) => rule.applies(verb, parts))?.reason;
}
