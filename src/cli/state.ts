import type { Env } from '../store/config.js';
import type { ParsedCommand } from './commands.js';

/**
 * `mailwarden state migrate --from files --to postgres://… [--dry-run] [--json]`: the files'
 * state into the database (src/store/migrate.ts), and what moved, per kind and per account, on
 * stdout. A refusal (the database already holds those accounts' records, a damaged log line…)
 * exits 2 with the reason on stderr and nothing written; a database that cannot be reached exits 1.
 * The URL is only ever shown without its password.
 */
export async function stateCommand(p: ParsedCommand, env: Env): Promise<number> {
  const url = p.values['to'] as string;
  const { MigrationRefused, formatReport, migrateState } = await import('../store/migrate.js');
  let report;
  try {
    report = await migrateState({ env, url, dryRun: p.values['dry-run'] === true });
  } catch (e) {
    if (e instanceof MigrationRefused) {
      console.error(`mailwarden state migrate: ${e.message}`);
      return 2;
    }
    throw e;
  }
  console.log(p.values['json'] === true ? JSON.stringify(report, null, 2) : formatReport(report));
  return 0;
}
