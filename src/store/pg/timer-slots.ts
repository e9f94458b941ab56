import type { TimerSlots } from '../../policy/timer-slots.js';
import { stateDbError } from './db.js';
import type { StateDb } from './db.js';

/**
 * Timer slots in PostgreSQL (src/policy/timer-slots.ts): one statement claims the slot when no
 * claim of the same timer for the account is younger than the interval, on the database's clock,
 * so replicas on several machines with drifting clocks still run each account's timer once per
 * interval. A claim more than a minute in the future (the database's clock set back) does not
 * block it; a smaller lead is normal, since now() is each transaction's start and a racing
 * claimant may have started a moment before the one that won.
 */
export function pgTimerSlots(db: StateDb): TimerSlots {
  return {
    async claim(timer, account, everyMs) {
      try {
        const r = await db.pool.query(
          `INSERT INTO mailwarden_timer_slots AS s (account, timer, claimed_at) VALUES ($1, $2, now())
           ON CONFLICT (account, timer) DO UPDATE SET claimed_at = now()
            WHERE s.claimed_at <= now() - make_interval(secs => $3::double precision / 1000)
               OR s.claimed_at > now() + interval '1 minute'
           RETURNING 1`,
          [account, timer, everyMs],
        );
        return (r.rowCount ?? 0) > 0;
      } catch (e) {
        throw stateDbError(db.name, e, `claiming the ${timer} timer of account ${account}`);
      }
    },
  };
}
