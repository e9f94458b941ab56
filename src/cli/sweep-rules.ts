import { MailError, isMailError } from '../mail/errors.js';
import type { ServerRuntime } from '../mcp/server.js';
import { sweepSenderRules } from '../tools/sender-rules.js';
import type { RuleSweepReport } from '../tools/sender-rules.js';
import { contextOutsideCall, cronCommand, servedAccounts } from './sweep.js';

/*
 * Sender rules outside a tool call: `mailwarden sweep-rules` for cron, and a serving server's own
 * sweeps (at start, then every sweepRulesEveryMinutes of each account's policy). Both build the
 * context a tool call would get (logged mailbox, write policy), so a rule move is judged and
 * logged the same wherever it runs.
 */

export type AccountRuleSweep =
  | { account: string; report: RuleSweepReport }
  | { account: string; skipped: string }
  | { account: string; error: { code: string; message: string } };

export interface RuleSweepSummary {
  /** No account failed, and every account's sweep was ok. */
  ok: boolean;
  dryRun: boolean;
  accounts: AccountRuleSweep[];
}

function errorOf(e: unknown): { code: string; message: string } {
  return isMailError(e)
    ? { code: e.code, message: e.message }
    : { code: 'internal_error', message: String(e) };
}

/** One account's sweep, or why it did not run. Needs the manage tier to move anything. */
async function sweepAccount(
  runtime: ServerRuntime,
  account: { name: string; tiers: ReadonlySet<string> },
  options: { dryRun: boolean; logAs: string; signal?: AbortSignal },
): Promise<AccountRuleSweep> {
  try {
    if (!options.dryRun && !account.tiers.has('manage'))
      throw new MailError(
        'forbidden_operation',
        `account "${account.name}" is not allowed the manage tier, so its sender rules cannot move mail`,
      );
    const ctx = await contextOutsideCall(runtime, account.name, options);
    return { account: account.name, report: await sweepSenderRules(ctx, { dryRun: options.dryRun }) };
  } catch (e) {
    // One account failing (a revoked token, a broken policy) must not stop the others.
    return { account: account.name, error: errorOf(e) };
  }
}

/** Every served account (or the pinned one), once. */
export async function sweepRulesOnce(
  runtime: ServerRuntime,
  options: { dryRun: boolean; logAs: string; signal?: AbortSignal },
): Promise<RuleSweepSummary> {
  const out: AccountRuleSweep[] = [];
  for (const a of await servedAccounts(runtime)) out.push(await sweepAccount(runtime, a, options));
  return {
    ok: out.every((a) => !('error' in a) && !('report' in a && !a.report.ok)),
    dryRun: options.dryRun,
    accounts: out,
  };
}

/** `mailwarden sweep-rules` for cron: the summary as JSON on stdout; exit 1 when anything failed. */
export function sweepRulesCommand(options: {
  demo: boolean;
  account?: string;
  dryRun: boolean;
}): Promise<number> {
  return cronCommand(options, (runtime) =>
    sweepRulesOnce(runtime, { dryRun: options.dryRun, logAs: 'cli sweep-rules' }),
  );
}

/** How often the scheduler looks whether an account's sweep is due (the smallest interval is 1). */
const TICK_MS = 60_000;

/**
 * A serving server's own sweeps: at start, then every sweepRulesEveryMinutes (read from
 * policy.json at each tick, so an edit takes effect without a restart; 0: none), for each served
 * account that has the manage tier and at least one rule. An account without rules costs no
 * mailbox connection. Failures go to the server log; the next due tick tries again. The timer is
 * unref'd. stop() ends it and cancels a sweep under way between its steps; it resolves once that
 * sweep has ended, so a batch already sent gets its outcome line before the process exits.
 */
export function startRuleSweeps(runtime: ServerRuntime): { stop(): Promise<void> } {
  const policy = runtime.policy;
  if (policy === undefined) return { stop: () => Promise.resolve() };
  const last = new Map<string, number>();
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  const tick = (): Promise<void> => {
    if (running !== undefined || abort.signal.aborted) return running ?? Promise.resolve();
    running = sweepDue().finally(() => (running = undefined));
    return running;
  };
  const sweepDue = async (): Promise<void> => {
    try {
      for (const a of await servedAccounts(runtime)) {
        if (abort.signal.aborted) break;
        if (!a.tiers.has('manage')) continue;
        const { rules } = await policy.effective(a.name).catch((e: unknown) => {
          runtime.log.warn('sender rules: policy.json cannot be read; not sweeping', {
            account: a.name,
            error: errorOf(e).message,
          });
          return { rules: undefined };
        });
        if (rules === undefined || rules.sweepRulesEveryMinutes === 0) continue;
        if (rules.senderRules.archive.length + rules.senderRules.spam.length === 0) continue;
        const every = rules.sweepRulesEveryMinutes * 60_000 - TICK_MS / 2;
        const now = performance.now();
        const prev = last.get(a.name);
        if (prev !== undefined && now - prev < every) continue;
        last.set(a.name, now);
        // Replicas on one state: the one that claims the account's slot sweeps it.
        if (
          runtime.timerSlots !== undefined &&
          !(await runtime.timerSlots.claim('sender-rules', a.name, every))
        )
          continue;
        const r = await sweepAccount(runtime, a, {
          dryRun: false,
          logAs: 'rule sweep',
          signal: abort.signal,
        });
        if ('error' in r)
          runtime.log.warn('sender rules: sweep failed', {
            account: a.name,
            error: `${r.error.code}: ${r.error.message}`,
          });
        else if ('report' in r) {
          const { counts, ok, more } = r.report;
          const fields = { account: a.name, ...counts, more };
          if (ok) runtime.log.info('sender rules: sweep done', fields);
          else runtime.log.warn('sender rules: sweep done, some moves failed or are unknown', fields);
        }
      }
    } catch (e) {
      runtime.log.warn('sender rules: sweep failed', { error: `${errorOf(e).code}: ${errorOf(e).message}` });
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), TICK_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      abort.abort();
      await running;
    },
  };
}
