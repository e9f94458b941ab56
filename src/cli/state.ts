import { join } from 'node:path';
import { ActionLog } from '../policy/action-log.js';
import type { PolicyStore } from '../policy/gate.js';
import { stateDir } from '../store/config.js';
import type { Env } from '../store/config.js';
import type { PgState } from '../store/pg/index.js';
import { stateSetting } from '../store/state.js';

/*
 * The one place that decides where the state lives (MAILWARDEN_STATE, src/store/state.ts): the
 * server (runtime.ts) and the commands that read the action log without serving (`mailwarden
 * log`, `mailwarden policy`) open it here, so a reader and the writers always agree on the log.
 */

export interface OpenedState {
  /** Every record is appended here and read back through `actionLog.source()`. */
  actionLog: ActionLog;
  /** PostgreSQL only: the database and its stores (the write policy's, the marks, the timer slots). */
  pg?: PgState;
  /** The write policy's store: the day's count of agent moves as the gate counts it. */
  policyStore(): Promise<PolicyStore>;
  close(): Promise<void>;
}

/**
 * Files: the log in the state dir. PostgreSQL: the database, opened and migrated now (a bad one
 * stops the caller), its module and driver loaded only then.
 */
export async function openState(env: Env): Promise<OpenedState> {
  const setting = stateSetting(env);
  if (setting.kind === 'postgres') {
    const pg = await import('../store/pg/index.js').then((m) => m.openPgState(setting.url));
    return {
      actionLog: pg.actionLog,
      pg,
      policyStore: () => Promise.resolve(pg.policyStore),
      close: () => pg.db.close(),
    };
  }
  const actionLog = new ActionLog(join(stateDir(env), 'action-log.jsonl'));
  return {
    actionLog,
    // Loaded when asked (the file-lock stack is not on the server's start-up path).
    policyStore: async () => (await import('../policy/gate.js')).filePolicyStore(env, actionLog),
    close: () => Promise.resolve(),
  };
}
