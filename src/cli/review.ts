import { invalidInput } from '../mail/errors.js';
import { parseCommand } from './commands.js';
import { serverTimeZone } from '../policy/move-cap.js';
import { dayStart } from '../policy/move-counts.js';
import { localDay } from '../policy/move-log.js';
import { effectivePolicy, loadPolicy } from '../policy/write-policy.js';
import { lastDays, readLogView } from '../review/log-view.js';
import type { LogRange } from '../review/log-view.js';
import { formatLog, formatUndo } from '../review/terminal.js';
import type { TodayLine } from '../review/terminal.js';
import { pickForUndo, restoreItems } from '../review/undo.js';
import type { UndoSelection } from '../review/undo.js';
import { findAccount, readAccounts } from '../store/accounts.js';
import { accountName } from '../store/config.js';
import type { Env } from '../store/config.js';
import { openInBrowser } from './auth.js';
import { clockFromEnv } from './clock.js';
import { buildRuntime } from './runtime.js';
import { openState } from './state.js';
import { contextOutsideCall } from './sweep.js';

/*
 * The person's side from the shell: `mailwarden log`, `mailwarden undo`, `mailwarden review`.
 * Each parses its arguments with the CLI's command table (src/cli/commands.ts). The work is in
 * src/review/, loaded only when one of these runs.
 */

/** Days `log` shows when --since is not given. */
const LOG_DAYS = 7;
/** Days `undo --call` and `--item` look back. */
const UNDO_DAYS = 30;

/** --account, --since, --until, --json (the CLI's command table: src/cli/commands.ts). */
export function parseLogArgs(argv: string[]) {
  return parseCommand(['log', ...argv]).values as {
    account?: string;
    since?: string;
    until?: string;
    json?: boolean;
  };
}

export function parseUndoArgs(argv: string[]) {
  return parseCommand(['undo', ...argv]).values as {
    account?: string;
    call?: string;
    since?: string;
    item?: string[];
    'dry-run'?: boolean;
  };
}

export function parseReviewArgs(argv: string[]) {
  return parseCommand(['review', ...argv]).values as {
    account?: string;
    port?: string;
    demo?: boolean;
    'no-browser'?: boolean;
  };
}

function day(v: string, field: string): string {
  if (dayStart(v) === undefined) throw invalidInput(field, `"${v}" is not a day (YYYY-MM-DD)`);
  return v;
}

/** TIME for undo --since: a day (its local midnight), an ISO instant with a zone, or 30m / 2h / 3d ago. */
export function parseSince(v: string, now: number): number {
  const rel = /^(\d{1,5})([mhd])$/.exec(v.trim());
  if (rel)
    return now - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 'm' | 'h' | 'd'];
  if (/^\d{4}-\d{2}-\d{2}$/.test(v) && dayStart(v) !== undefined) {
    // Local midnight of that day in the server's zone (the zone the log's days are counted in).
    const at = Date.parse(`${v}T00:00:00`);
    if (!Number.isNaN(at)) return at;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(v)) return Date.parse(v);
  throw invalidInput(
    'since',
    `"${v}" is not a time: give YYYY-MM-DD, an ISO instant with a zone, or 30m / 2h / 3d`,
  );
}

/** The account a flag names (an alias resolves to its name), or undefined for all. */
async function accountOf(env: Env, flag: string | undefined): Promise<string | undefined> {
  if (flag === undefined) return undefined;
  const entry = findAccount(await readAccounts(env), flag);
  return entry?.name ?? accountName(env, flag);
}

export async function logCommand(argv: string[], env: Env): Promise<number> {
  const args = parseLogArgs(argv);
  const now = clockFromEnv(env).now();
  const tz = serverTimeZone();
  const def = lastDays(now, LOG_DAYS, tz);
  const range: LogRange = {
    from: args.since === undefined ? def.from : day(args.since, 'since'),
    to: args.until === undefined ? def.to : day(args.until, 'until'),
    timeZone: tz,
  };
  if (range.from > range.to)
    throw invalidInput('since', `--since ${range.from} is after --until ${range.to}`);
  const account = await accountOf(env, args.account);
  // The log the server writes, file or database (MAILWARDEN_STATE), and its count of the day.
  const state = await openState(env);
  try {
    const view = await readLogView(
      state.actionLog.source(),
      range,
      account === undefined ? undefined : new Set([account]),
    );
    const names =
      account !== undefined
        ? [account]
        : [...new Set([accountName(env), ...view.calls.map((c) => c.account)])].sort();
    const policy = await loadPolicy(env);
    const store = await state.policyStore();
    const today: TodayLine[] = [];
    for (const a of names) {
      const cap = effectivePolicy(policy, a).rules.dailyMoveCap;
      try {
        const used = await store.movesToday(a, now, tz);
        today.push({ account: a, day: localDay(now, tz), used, cap });
      } catch (e) {
        today.push({ account: a, day: localDay(now, tz), used: 0, cap, error: (e as Error).message });
      }
    }
    if (args.json) console.log(JSON.stringify({ ...view, today }, null, 2));
    else console.log(formatLog(view, today));
    return 0;
  } finally {
    await state.close();
  }
}

export async function undoCommand(argv: string[], env: Env): Promise<number> {
  const args = parseUndoArgs(argv);
  const built = await buildRuntime({
    demo: false,
    env,
    ...(args.account === undefined ? {} : { account: args.account }),
  });
  try {
    const runtime = built.runtime;
    const account = runtime.accounts
      ? (await runtime.accounts.resolve(args.account)).name
      : (await runtime.mailbox()).account;
    const now = runtime.clock.now();
    const tz = serverTimeZone();
    const sel: UndoSelection = {};
    let range = lastDays(now, UNDO_DAYS, tz);
    if (args.call !== undefined) sel.call = args.call;
    if (args.item !== undefined) sel.items = args.item;
    if (args.since !== undefined) {
      sel.since = parseSince(args.since, now);
      range = { from: localDay(Math.min(sel.since, now), tz), to: localDay(now, tz), timeZone: tz };
    }
    const view = await readLogView(runtime.actionLog.source(), range, new Set([account]));
    const pick = pickForUndo(view, sel);
    const dryRun = args['dry-run'] === true;
    const ctx = await contextOutsideCall(runtime, account, { logAs: 'undo' });
    const results = await restoreItems(ctx, pick.chosen, { dryRun, tool: 'undo' });
    if (results.length === 0 && pick.unmatched.length === 0)
      console.log('nothing to undo: no move out of the inbox by the agent or a rule matches');
    else console.log(formatUndo(results, dryRun, pick.unmatched));
    return results.some((r) => r.status === 'not restored') || pick.unmatched.length > 0 ? 1 : 0;
  } finally {
    await built.close();
  }
}

export async function reviewCommand(argv: string[], env: Env): Promise<number | undefined> {
  const args = parseReviewArgs(argv);
  const port = Number(args.port ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw invalidInput('port', `must be 0..65535, not "${args.port}"`);
  let runEnv = env;
  let seed: ((built: Awaited<ReturnType<typeof buildRuntime>>) => Promise<void>) | undefined;
  if (args.demo === true) {
    const demo = await import('../demo/review.js');
    ({ env: runEnv, seed } = demo.demoReviewSetup(env));
  }
  const built = await buildRuntime({
    demo: args.demo === true,
    env: runEnv,
    ...(args.account === undefined ? {} : { account: args.account }),
  });
  try {
    if (seed !== undefined) await seed(built);
    const { serveReview } = await import('../review/server.js');
    const runtime = built.runtime;
    const server = await serveReview(
      {
        runtime,
        env: runEnv,
        demo: args.demo === true,
        contextFor: (account, logAs) => contextOutsideCall(runtime, account, { logAs }),
      },
      { host: '127.0.0.1', port },
    );
    const url = server.app.loginUrl(server.origin);
    console.log(`mailwarden review: ${server.origin}/ (loopback only)`);
    console.log(`open this link to sign in (it works once): ${url}`);
    console.log('Ctrl-C stops the page.');
    if (args['no-browser'] !== true) openInBrowser(url, env);
    const stop = (): void => {
      void server
        .close()
        .then(() => built.close())
        .finally(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    return undefined;
  } catch (e) {
    await built.close();
    throw e;
  }
}
