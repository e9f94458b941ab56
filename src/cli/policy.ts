import { isMailError } from '../mail/errors.js';
import { clockFromEnv } from './clock.js';
import { COMMANDS, commandUsage, parseCommand, UsageError } from './commands.js';
import type { CommandSpec } from './commands.js';
import { localDay, serverTimeZone } from '../policy/move-cap.js';
import { RULE_KEYS, effectivePolicy, loadPolicy } from '../policy/write-policy.js';
import type { EffectivePolicy, LoadedPolicy, PolicyRules, RuleKey } from '../policy/write-policy.js';
import { checkName, findAccount, readAccounts } from '../store/accounts.js';
import type { Env } from '../store/config.js';
import { openState } from './state.js';
import type { OpenedState } from './state.js';

const POLICY_USAGE = commandUsage(COMMANDS.find((c) => c.words.join(' ') === 'policy show') as CommandSpec);

interface Shown {
  account: string;
  /** False when accounts.json lists accounts and this is not one of them. */
  registered: boolean;
  rules: PolicyRules;
  sources: Record<RuleKey, string>;
  /** Today's agent moves out of the inbox, from the action log (or why they cannot be counted). */
  today: { used: number; day: string; timeZone: string } | { error: string };
}

function value(v: unknown): string {
  if (v === null) return 'any';
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.join(', ');
  return String(v);
}

/** One value per row; senderRules has two lists, shown as two rows. */
function rows(p: Shown): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const key of RULE_KEYS) {
    const source = p.sources[key];
    if (key === 'senderRules') {
      out.push(['senderRules.archive', value(p.rules.senderRules.archive), source]);
      out.push(['senderRules.spam', value(p.rules.senderRules.spam), source]);
    } else out.push([key, value(p.rules[key]), source]);
  }
  return out;
}

function text(policy: LoadedPolicy, shown: readonly Shown[]): string {
  const lines = [
    policy.exists
      ? `policy.json: ${policy.path}`
      : `policy.json: ${policy.path} (not present: every value is the built-in default)`,
  ];
  for (const p of shown) {
    lines.push('', `account ${p.account}${p.registered ? '' : ' (not in accounts.json)'}`);
    const r = rows(p);
    const w0 = Math.max(...r.map(([k]) => k.length));
    const w1 = Math.min(40, Math.max(...r.map(([, v]) => v.length)));
    for (const [k, v, s] of r) lines.push(`  ${k.padEnd(w0)}  ${v.padEnd(w1)}  ${s}`);
    if ('error' in p.today) lines.push(`  today: ${p.today.error}`);
    else if (p.rules.dailyMoveCap === 0)
      lines.push(`  today: ${p.today.used} agent moves out of the inbox (no cap)`);
    else
      lines.push(
        `  today: ${p.today.used} of ${p.rules.dailyMoveCap} agent moves out of the inbox used (${p.today.day}, ${p.today.timeZone})`,
      );
  }
  return lines.join('\n');
}

/** Today's agent moves of an account, as the gate counts them (or why they cannot be counted). */
type TodayCount = (account: string) => Promise<Shown['today']>;

/**
 * Counts from the store the server writes (MAILWARDEN_STATE: the file log in the state dir, or
 * the state database), on the server's clock (MAILWARDEN_NOW included) and zone.
 */
async function todayCounter(env: Env): Promise<{ count: TodayCount; close(): Promise<void> }> {
  const why = (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) });
  let state: OpenedState;
  try {
    state = await openState(env);
  } catch (err) {
    return { count: async () => why(err), close: () => Promise.resolve() };
  }
  const count: TodayCount = async (account) => {
    const now = clockFromEnv(env).now();
    const timeZone = serverTimeZone();
    try {
      const used = await (await state.policyStore()).movesToday(account, now, timeZone);
      return { used, day: localDay(now, timeZone), timeZone };
    } catch (err) {
      return why(err);
    }
  };
  return { count, close: () => state.close() };
}

async function show(e: EffectivePolicy, registered: boolean, count: TodayCount): Promise<Shown> {
  const sources = {} as Record<RuleKey, string>;
  for (const key of RULE_KEYS) {
    const s = e.sources[key];
    sources[key] = s === 'policy.json account section' ? `policy.json accounts.${e.account}` : s;
  }
  return { account: e.account, registered, rules: e.rules, sources, today: await count(e.account) };
}

/** `argv` is everything after `policy`. Prints for a person; --json for programs. */
export async function policyCommand(argv: readonly string[], env: Env): Promise<number> {
  let values: ReturnType<typeof parseCommand>['values'];
  try {
    values = parseCommand(['policy', ...argv]).values;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\n${POLICY_USAGE}`);
    return 2;
  }
  const flags = new Map(
    Object.entries(values).flatMap(([k, v]) => (typeof v === 'string' || v === true ? [[k, v]] : [])),
  );
  try {
    const policy = await loadPolicy(env);
    const accounts = await readAccounts(env);
    const wanted = flags.get('account');
    let names: Array<{ name: string; registered: boolean }>;
    if (typeof wanted === 'string') {
      const found = findAccount(accounts, wanted);
      names = [
        {
          name: found?.name ?? checkName(wanted, 'account'),
          registered: found !== undefined || accounts.length === 0,
        },
      ];
    } else if (accounts.length > 0) names = accounts.map((a) => ({ name: a.name, registered: true }));
    else names = [{ name: 'default', registered: true }];
    const counter = await todayCounter(env);
    let shown: Shown[];
    try {
      shown = await Promise.all(
        names.map((n) => show(effectivePolicy(policy, n.name), n.registered, counter.count)),
      );
    } finally {
      await counter.close();
    }
    // A section for an account nobody has is most likely a typo that leaves the real one unguarded.
    const known = new Set(accounts.length > 0 ? accounts.map((a) => a.name) : ['default']);
    const strays = Object.keys(policy.accounts).filter((n) => !known.has(n));
    if (flags.has('json'))
      console.log(
        JSON.stringify(
          { path: policy.path, exists: policy.exists, accounts: shown, unknownAccounts: strays },
          null,
          2,
        ),
      );
    else console.log(text(policy, shown));
    for (const n of strays)
      console.error(
        `warning: policy.json has a section for account "${n}", which accounts.json does not list`,
      );
    return 0;
  } catch (e) {
    console.error(isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));
    return 1;
  }
}
