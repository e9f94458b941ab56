import type { Clock } from '../mail/clock.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { Env } from '../store/config.js';
import type { ActionLog } from './action-log.js';
import { CorrespondentSet } from './correspondents.js';
import { createGate, filePolicyStore } from './gate.js';
import type { Gate, PolicyStore } from './gate.js';
import { effectivePolicy, loadPolicy } from './write-policy.js';
import type { EffectivePolicy } from './write-policy.js';

/*
 * The write policy as a running server holds it: policy.json is read again for every write (a
 * small file: an edit takes effect without a restart, and a file broken since start stops writes,
 * never reads), and each account keeps one short-lived set of correspondents for the life of the
 * process (docs/architecture.md, promise 2: learnt from Sent, bounded, never a mirror).
 */

export interface PolicyService {
  gateFor(account: string, mailbox: Mailbox): Promise<Gate>;
  /** The account's effective rules, read from policy.json now (no mailbox needed). */
  effective(account: string): Promise<EffectivePolicy>;
}

/** `store`: where the log and the lock live (MAILWARDEN_STATE); the files in the config dir by default. */
export function policyService(env: Env, log: ActionLog, clock: Clock, store?: PolicyStore): PolicyService {
  const policyStore = store ?? filePolicyStore(env, log);
  const sets = new Map<string, { set: CorrespondentSet; mailbox: { current: Mailbox } }>();
  return {
    effective: async (account) => effectivePolicy(await loadPolicy(env), account),
    async gateFor(account, mailbox) {
      const policy = effectivePolicy(await loadPolicy(env), account);
      let entry = sets.get(account);
      if (entry === undefined) {
        const holder = { current: mailbox };
        entry = {
          mailbox: holder,
          set: new CorrespondentSet(() => Promise.resolve(holder.current), {
            days: policy.rules.correspondentsDays,
            refreshMinutes: policy.rules.correspondentsRefreshMinutes,
            clock,
          }),
        };
        sets.set(account, entry);
      }
      entry.mailbox.current = mailbox;
      entry.set.configure(policy.rules.correspondentsDays, policy.rules.correspondentsRefreshMinutes);
      return createGate({ policy, store: policyStore, correspondents: entry.set, clock });
    },
  };
}
