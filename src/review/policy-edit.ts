import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MailError, invalidInput } from '../mail/errors.js';
import type { ActionLog } from '../policy/action-log.js';
import { effectivePolicy, normalizeSenderRule, parsePolicy, policyPath } from '../policy/write-policy.js';
import type { Env } from '../store/config.js';
import { writeFileAtomic } from '../store/atomic.js';

/*
 * A person adds a sender to one of policy.json's sender lists from the review page: the archive
 * or spam rules, or the never-move list. The account's section gets the account's effective lists
 * (so a default section's entries are kept, not shadowed) with the sender in the chosen list and
 * out of the others, and the whole file is validated before it replaces the old one atomically.
 * The change is a line in the action log, as a person's action.
 */

export const SENDER_LISTS = ['archive', 'spam', 'neverMove'] as const;
export type SenderList = (typeof SENDER_LISTS)[number];

export interface SenderListChange {
  account: string;
  list: SenderList;
  /** The entry as policy.json now holds it (normalised). */
  rule: string;
  /** False when it was already there: nothing was written. */
  changed: boolean;
  path: string;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new MailError('internal_error', `cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  const json: unknown = JSON.parse(text);
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new MailError('invalid_input', `${path} is not a JSON object; fix it first`, {
      field: 'policy.json',
    });
  return json as Record<string, unknown>;
}

export async function addSenderToList(
  env: Env,
  log: ActionLog,
  account: string,
  list: string,
  sender: string,
): Promise<SenderListChange> {
  if (!(SENDER_LISTS as readonly string[]).includes(list))
    throw invalidInput('list', `must be one of ${SENDER_LISTS.join(', ')}`);
  const which = list as SenderList;
  const rule = normalizeSenderRule(sender);
  if (rule === undefined)
    throw invalidInput(
      'sender',
      'must be an address (local@domain) or a domain name that is not a public suffix',
    );
  const path = policyPath(env);
  const json = await readJson(path);
  const current = effectivePolicy({ ...parsePolicy(json, path), path }, account).rules;
  const before = {
    archive: current.senderRules.archive,
    spam: current.senderRules.spam,
    neverMove: current.neverMove,
  };
  const inOthers = SENDER_LISTS.some((l) => l !== which && before[l].includes(rule));
  if (before[which].includes(rule) && !inOthers) return { account, list: which, rule, changed: false, path };
  const lists = {
    archive: before.archive.filter((r) => r !== rule),
    spam: before.spam.filter((r) => r !== rule),
    neverMove: before.neverMove.filter((r) => r !== rule),
  };
  lists[which].push(rule);
  const accounts = (json['accounts'] ?? {}) as Record<string, Record<string, unknown>>;
  const section = { ...(accounts[account] ?? {}) };
  section['senderRules'] = { archive: lists.archive, spam: lists.spam };
  section['neverMove'] = lists.neverMove;
  const next = { ...json, accounts: { ...accounts, [account]: section } };
  // The file as written must load: a person's click never leaves a policy the server refuses.
  parsePolicy(next, path);
  const call = randomUUID();
  const record = {
    account,
    tool: 'review',
    op: 'policyChange',
    call,
    detail: { actor: 'human', list: which, rule },
  };
  await log.append({ ...record, outcome: 'pending' });
  await writeFileAtomic(path, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  await log.append({ ...record, outcome: 'ok' });
  return { account, list: which, rule, changed: true, path };
}
