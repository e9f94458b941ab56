import type { PolicyStore } from '../../policy/gate.js';
import type { InboxMarkStore } from '../inbox-mark.js';
import { PgActionLog } from './action-log.js';
import { openStateDb } from './db.js';
import type { StateDb } from './db.js';
import { pgInboxMarkStore, pgPolicyStore } from './policy-store.js';
import { pgTimerSlots } from './timer-slots.js';
import { pgPreviewStore } from './preview-tokens.js';
import { pgSentLedger } from './sent-ledger.js';
import type { PreviewStore } from '../preview-tokens.js';
import type { SentLedger } from '../../net/ledger.js';
import type { TimerSlots } from '../../policy/timer-slots.js';

export {
  MIGRATE_LOCK,
  MIGRATIONS,
  SCHEMA_VERSION,
  migrateIn,
  openPool,
  openStateDb,
  schemaVersion,
  stateDbError,
} from './db.js';
export type { StateDb } from './db.js';
export { accountLockKey, pgInboxMarkStore, pgPolicyStore } from './policy-store.js';
export { pgTimerSlots } from './timer-slots.js';
export { pgPreviewStore } from './preview-tokens.js';
export { CLAIM_LEASE_MS, pgSentLedger } from './sent-ledger.js';
export { PgActionLog, pgLogSource } from './action-log.js';

/** The state a server keeps in PostgreSQL: opened (and migrated) once at start. */
export interface PgState {
  db: StateDb;
  policyStore: PolicyStore;
  inboxMarks: InboxMarkStore;
  timerSlots: TimerSlots;
  previews: PreviewStore;
  sentLedger: SentLedger;
  /** Every record of the action log: what writers append and readers read. */
  actionLog: PgActionLog;
}

export async function openPgState(url: string): Promise<PgState> {
  const db = await openStateDb(url);
  return {
    db,
    policyStore: pgPolicyStore(db),
    inboxMarks: pgInboxMarkStore(db),
    timerSlots: pgTimerSlots(db),
    previews: pgPreviewStore(db),
    sentLedger: pgSentLedger(db),
    actionLog: new PgActionLog(db),
  };
}
