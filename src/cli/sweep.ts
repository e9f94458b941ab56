import { MailError, isMailError } from '../mail/errors.js';
import type { ServerRuntime } from '../mcp/server.js';
import { Fence } from '../mcp/untrusted.js';
import { loggedMailbox } from '../policy/logged-mailbox.js';
import type { Gate } from '../policy/gate.js';
import type { ToolContext } from '../tools/common/define.js';
import type { Tier } from '../policy/tiers.js';
import { runSweep } from '../tools/snooze-sweep.js';
import type { SweepReport } from '../tools/snooze-sweep.js';
import { buildRuntime } from './runtime.js';

/** Often enough that a snooze due "at 9:00" is back within the hour, rare enough to cost nothing. */
export const AUTO_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** One account's sweep: its report, or why it could not run. */
export type AccountSweep =
  { account: string; report: SweepReport } | { account: string; error: { code: string; message: string } };

export interface SweepSummary {
  /** Every account swept and every batch landed. */
  ok: boolean;
  accounts: AccountSweep[];
}

/** The accounts this server serves, each with its tiers (one, when pinned or without accounts.json). */
export async function servedAccounts(
  runtime: ServerRuntime,
): Promise<Array<{ name: string; tiers: ReadonlySet<Tier> }>> {
  const routing = runtime.accounts;
  return routing ? routing.all() : [{ name: (await runtime.mailbox()).account, tiers: runtime.tiers }];
}

/**
 * A tool context for one account outside an MCP call (cron commands, the server's own timers):
 * the same logged mailbox a tool call gets, so every write lands in the action log under
 * `logAs`, and the same write policy (ctx.gate), so every move is judged as a tool's would be.
 * No human channel: confirmations answer "unavailable".
 */
export async function contextOutsideCall(
  runtime: ServerRuntime,
  account: string,
  options: { logAs: string; signal?: AbortSignal; tiers?: ReadonlySet<Tier> },
): Promise<ToolContext> {
  const routing = runtime.accounts;
  const mailbox = routing ? await routing.mailboxFor(account) : await runtime.mailbox();
  const policy = runtime.policy;
  let gate: Promise<Gate> | undefined;
  return {
    mailbox: loggedMailbox(mailbox, runtime.actionLog, options.logAs),
    clock: runtime.clock,
    fence: new Fence(),
    progress: () => Promise.resolve(),
    signal: options.signal ?? new AbortController().signal,
    log: runtime.log,
    serverVersion: runtime.version,
    ...(policy ? { gate: () => (gate ??= policy.gateFor(mailbox.account, mailbox)) } : {}),
    ...(runtime.inboxMarks ? { inboxMarks: runtime.inboxMarks } : {}),
    ...(options.tiers ? { tiers: options.tiers } : {}),
  };
}

/**
 * One sweep outside an MCP call, over every account this server serves (or the one pinned with
 * --account / MAILWARDEN_ACCOUNT). It goes through the same logged mailbox a tool call gets, so
 * every write lands in the action log under `logAs`, and obeys the tiers: a read-only server or
 * account (MAILWARDEN_READONLY, an account's tiers) never writes, whoever asks.
 */
export async function sweepOnce(
  runtime: ServerRuntime,
  options: {
    dryRun: boolean;
    logAs: string;
    signal?: AbortSignal;
    /** A timer's run: an account whose slot another process holds is left to it (timer-slots.ts). */
    claim?: (account: string) => Promise<boolean>;
  },
): Promise<SweepSummary> {
  if (!options.dryRun && !runtime.tiers.has('manage')) {
    throw new MailError(
      'forbidden_operation',
      'sweeping changes labels and needs the manage tier, which MAILWARDEN_READONLY / MAILWARDEN_TOOLS leave out',
    );
  }
  const accounts = await servedAccounts(runtime);
  const out: AccountSweep[] = [];
  for (const a of accounts) {
    try {
      if (options.claim !== undefined && !(await options.claim(a.name))) continue;
      if (!options.dryRun && !a.tiers.has('manage')) {
        throw new MailError('forbidden_operation', `account "${a.name}" is not allowed the manage tier`);
      }
      const ctx = await contextOutsideCall(runtime, a.name, options);
      out.push({ account: a.name, report: await runSweep(ctx, options.dryRun) });
    } catch (e) {
      // One account failing (a revoked token) must not keep the others' mail snoozed.
      const error = isMailError(e)
        ? { code: e.code, message: e.message }
        : { code: 'internal_error', message: String(e) };
      out.push({ account: a.name, error });
    }
  }
  return { ok: out.every((a) => 'report' in a && a.report.ok), accounts: out };
}

/**
 * A cron command (`sweep`, `sweep-rules`): one run over the served accounts, the summary as JSON
 * on stdout, exit 1 when anything failed.
 */
export async function cronCommand(
  options: { demo: boolean; account?: string },
  run: (runtime: ServerRuntime) => Promise<{ ok: boolean }>,
): Promise<number> {
  const built = await buildRuntime({
    demo: options.demo,
    env: process.env,
    ...(options.account === undefined ? {} : { account: options.account }),
  });
  try {
    const summary = await run(built.runtime);
    console.log(JSON.stringify(summary, null, 2));
    return summary.ok ? 0 : 1;
  } finally {
    await built.close();
  }
}

/** `mailwarden sweep` for cron: the summary as JSON on stdout; exit 1 when anything failed. */
export function sweepCommand(options: { demo: boolean; account?: string; dryRun: boolean }): Promise<number> {
  return cronCommand(options, (runtime) =>
    sweepOnce(runtime, { dryRun: options.dryRun, logAs: 'cli sweep' }),
  );
}

/**
 * MAILWARDEN_AUTO_SWEEP=1: sweep when the server starts and hourly while it serves. The timer
 * is unref'd so it never keeps a finished server alive; failures go to stderr and the next tick
 * tries again (a sweep is safe to repeat).
 */
export function startAutoSweep(runtime: ServerRuntime): { stop(): void } {
  if (!runtime.tiers.has('manage')) {
    runtime.log.warn('MAILWARDEN_AUTO_SWEEP is set but the manage tier is off: not sweeping');
    return { stop: () => undefined };
  }
  let running = false;
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      const slots = runtime.timerSlots;
      const summary = await sweepOnce(runtime, {
        dryRun: false,
        logAs: 'auto sweep',
        // Replicas on one state: each account is swept by the one that claims its slot.
        ...(slots === undefined
          ? {}
          : {
              claim: (account: string) => slots.claim('auto-sweep', account, AUTO_SWEEP_INTERVAL_MS - 60_000),
            }),
      });
      for (const a of summary.accounts) {
        if ('error' in a) {
          runtime.log.warn('auto-sweep failed', {
            account: a.account,
            error: `${a.error.code}: ${a.error.message}`,
          });
          continue;
        }
        const r = a.report;
        const fields = {
          account: a.account,
          returned: r.returned.length,
          pending: r.pending.length,
          labelsDeleted: r.labelsDeleted.length,
        };
        if (r.ok) runtime.log.info('auto-sweep done', fields);
        else
          runtime.log.warn('auto-sweep: some batches failed; the next sweep retries them', {
            ...fields,
            errors: r.batches.flatMap((b) => (b.error ? [`${b.label}: ${b.error.code}`] : [])),
          });
      }
    } catch (e) {
      runtime.log.warn('auto-sweep failed', {
        error: isMailError(e) ? `${e.code}: ${e.message}` : String(e),
      });
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), AUTO_SWEEP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
