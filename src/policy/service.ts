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
  /**
   * `client`: the HTTP client (clients.json) whose call this is; the gate's move records carry
   * its name, as the mailbox's own records do (ClientActionLog).
   */
  gateFor(account: string, mailbox: Mailbox, client?: string): Promise<Gate>;
  /** Messages the account's agent moved out of the inbox on the local day of `now`, as the gate counts them. */
  movesToday(account: string, now: number, timeZone: string): Promise<number>;
  /** The account's effective rules, read from policy.json now (no mailbox needed). */
  effective(account: string): Promise<EffectivePolicy>;
}

/** `store`: where the log and the lock live (MAILWARDEN_STATE); the files in the config dir by default. */
export function policyService(env: Env, log: ActionLog, clock: Clock, store?: PolicyStore): PolicyService {
  const policyStore = store ?? filePolicyStore(env, log);
  const sets = new Map<string, { set: CorrespondentSet; mailbox: { current: Mailbox } }>();
  return {
    effective: async (account) => effectivePolicy(await loadPolicy(env), account),
    movesToday: (account, now, tz) => policyStore.movesToday(account, now, tz),
    async gateFor(account, mailbox, client) {
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
      const store = client === undefined ? policyStore : stampedWith(policyStore, client);
      return createGate({ policy, store, correspondents: entry.set, clock });
    },
  };
}

/** The same store, every move record it appends stamped with the client's name. */
function stampedWith(store: PolicyStore, client: string): PolicyStore {
  return { ...store, append: (records) => store.append(records.map((r) => ({ ...r, client }))) };
}
