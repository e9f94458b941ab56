import { MailError, isMailError } from '../mail/errors.js';
import type { ServerRuntime } from '../mcp/server.js';
import { Fence } from '../mcp/untrusted.js';
import { loggedMailbox } from '../policy/logged-mailbox.js';
import type { ToolContext } from '../tools/define.js';
import { runSweep } from '../tools/snooze-sweep.js';
import type { SweepReport } from '../tools/snooze-sweep.js';
import { buildRuntime } from './runtime.js';

/** Often enough that a snooze due "at 9:00" is back within the hour, rare enough to cost nothing. */
export const AUTO_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * One sweep outside an MCP call. It goes through the same logged mailbox a tool call gets, so
 * every write lands in the action log under `logAs`, and obeys the tiers: a read-only server
 * (MAILWARDEN_READONLY) never writes, whoever asks.
 */
export async function sweepOnce(
  runtime: ServerRuntime,
  options: { dryRun: boolean; logAs: string; signal?: AbortSignal },
): Promise<SweepReport> {
  if (!options.dryRun && !runtime.tiers.has('manage')) {
    throw new MailError(
      'forbidden_operation',
      'sweeping changes labels and needs the manage tier, which MAILWARDEN_READONLY / MAILWARDEN_TOOLS leave out',
    );
  }
  const ctx: ToolContext = {
    mailbox: loggedMailbox(await runtime.mailbox(), runtime.actionLog, options.logAs),
    clock: runtime.clock,
    fence: new Fence(),
    progress: () => Promise.resolve(),
    signal: options.signal ?? new AbortController().signal,
    log: runtime.log,
    serverVersion: runtime.version,
  };
  return runSweep(ctx, options.dryRun);
}

/** `mailwarden sweep` for cron: the report as JSON on stdout; exit 1 when any batch failed. */
export async function sweepCommand(options: {
  demo: boolean;
  account?: string;
  dryRun: boolean;
}): Promise<number> {
  const built = await buildRuntime({
    demo: options.demo,
    env: process.env,
    ...(options.account === undefined ? {} : { account: options.account }),
  });
  try {
    const report = await sweepOnce(built.runtime, { dryRun: options.dryRun, logAs: 'cli sweep' });
    console.log(JSON.stringify(report, null, 2));
    return report.ok ? 0 : 1;
  } finally {
    await built.close();
  }
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
      const r = await sweepOnce(runtime, { dryRun: false, logAs: 'auto sweep' });
      const fields = {
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
