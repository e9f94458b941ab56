import { z } from 'zod';
import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import type { Mailbox } from '../providers/mailbox.js';
import { loggedMailbox } from '../policy/logged-mailbox.js';
import type { Tier } from '../policy/tiers.js';
import type { AccountRegistry } from '../store/accounts.js';
import type { AnyTool, FanOutPart, ToolContext } from '../tools/common/define.js';
import { toEnvelope } from './errors.js';
import type { ServerRuntime } from './server.js';

/*
 * Which account a tool call works (docs/architecture.md: one tool surface over several mailboxes): the
 * `account` argument every tool advertises, per-account tiers, and the "all" fan-out.
 */

/** An account a call may name, with the tiers its calls may use (already within the server's). */
export interface ServedAccount {
  name: string;
  tiers: ReadonlySet<Tier>;
}

export interface AccountRouting {
  /** Name, alias or address (case-insensitive); undefined: the default. Unknown: invalid_input. */
  resolve(account?: string): Promise<ServedAccount>;
  /** Every account `account: "all"` fans out over. */
  all(): Promise<ServedAccount[]>;
  /** The account's mailbox, opened on first use and shared by every connection. */
  mailboxFor(account?: string): Promise<Mailbox>;
  registry?: AccountRegistry;
}

/** The input schema clients see: each tool's own plus `account`, added here for every tool. */
export function advertisedInput(tool: AnyTool): z.ZodObject {
  if (tool.registry || 'account' in tool.input.shape) return tool.input;
  // list_accounts says what an account reference is; only "all" needs saying where it is taken.
  const account = z.string().max(320).optional();
  return tool.input.extend({ account: tool.fanOut ? account.describe('"all": every account') : account });
}

/** Splits the routing argument from the tool's own, which its zod schema then checks. */
export function takeAccount(tool: AnyTool, raw: unknown): { account: string | undefined; args: unknown } {
  if (tool.registry || raw === null || typeof raw !== 'object' || 'account' in tool.input.shape)
    return { account: undefined, args: raw };
  const { account, ...args } = raw as Record<string, unknown>;
  if (account === undefined) return { account: undefined, args };
  if (typeof account !== 'string' || account.trim() === '' || account.length > 320)
    throw invalidInput('account', 'must be an account name, alias or address (see list_accounts)');
  return { account: account.trim(), args };
}

/** Without an accounts seam the one mailbox is the only account, named as it names itself. */
function singleAccount(runtime: ServerRuntime): AccountRouting {
  const served = async (): Promise<ServedAccount> => ({
    name: (await runtime.mailbox()).account,
    tiers: runtime.tiers,
  });
  return {
    async resolve(account) {
      const only = await served();
      if (account !== undefined && account.toLowerCase() !== only.name)
        throw invalidInput('account', `this server serves one account, "${only.name}"`);
      return only;
    },
    all: async () => [await served()],
    mailboxFor: () => runtime.mailbox(),
  };
}

/** Per-account policy (docs/architecture.md, promise 4): each account's own tiers bound what its calls may do. */
function checkAccountTiers(tool: AnyTool, account: ServedAccount): void {
  const readOnly = [...account.tiers].every((t) => t === 'read');
  if (account.tiers.has(tool.tier) && (tool.access === 'read' || !readOnly)) return;
  throw new MailError(
    'forbidden_operation',
    `account "${account.name}" allows tiers ${[...account.tiers].join(', ')}; ${tool.name} needs tier ${tool.tier}. ` +
      "Change the account's tiers in accounts.json to allow it.",
    { retryable: false },
  );
}

/** Which mailbox a call works: one account's, every account's (fan-out), or none (the registry). */
export async function routeCall(
  runtime: ServerRuntime,
  tool: AnyTool,
  account: string | undefined,
  args: Record<string, unknown>,
): Promise<{ mailbox: Mailbox; all?: ServedAccount[]; tiers?: ReadonlySet<Tier> }> {
  if (tool.registry) return { mailbox: noMailbox(tool.name) };
  const routing = runtime.accounts ?? singleAccount(runtime);
  if (account?.toLowerCase() === ALL) {
    if (!tool.fanOut) {
      const scanners = runtime.tools.filter((t) => t.fanOut && runtime.tiers.has(t.tier)).map((t) => t.name);
      throw invalidInput(
        'account',
        `"all" works only with ${scanners.join(', ') || 'read tools that scan'}; name one account`,
      );
    }
    if (args['pageToken'] !== undefined)
      throw invalidInput(
        'pageToken',
        'cannot be combined with account "all"; page one account at a time (accounts[].nextPageToken)',
      );
    return { mailbox: noMailbox(tool.name), all: await routing.all() };
  }
  const served = await routing.resolve(account);
  checkAccountTiers(tool, served);
  const mailbox = await routing.mailboxFor(served.name);
  return { mailbox: loggedMailbox(mailbox, runtime.actionLog, tool.name), tiers: served.tiers };
}

const ALL = 'all';

/** Stands in where a call has no single mailbox; touching it is a bug, reported as one. */
function noMailbox(tool: string): Mailbox {
  return new Proxy({} as Mailbox, {
    get() {
      throw new MailError('internal_error', `${tool}: this call has no single mailbox`);
    },
  });
}

/**
 * account "all": the tool once per account, concurrently. A failing account is reported in its
 * part, not as the call's error, unless every account failed.
 */
export async function fanOut(
  runtime: ServerRuntime,
  tool: AnyTool,
  base: ToolContext,
  accounts: readonly ServedAccount[],
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const routing = runtime.accounts ?? singleAccount(runtime);
  const parts = await Promise.all(
    accounts.map(async (a): Promise<FanOutPart<Record<string, unknown>>> => {
      try {
        checkAccountTiers(tool, a);
        const mailbox = loggedMailbox(await routing.mailboxFor(a.name), runtime.actionLog, tool.name);
        const result = (await tool.handle({ ...base, mailbox }, args)) as Record<string, unknown>;
        return { account: a.name, ok: true, result };
      } catch (e) {
        if (!isMailError(e))
          runtime.log.warn('tool failed', { tool: tool.name, account: a.name, error: String(e) });
        const { code, message, retryable } = toEnvelope(e);
        return { account: a.name, ok: false, error: { code, message, retryable } };
      }
    }),
  );
  const failed = parts.flatMap((p) => (p.ok ? [] : [p]));
  const first = failed[0];
  if (first !== undefined && failed.length === parts.length) {
    const why = failed.map((p) => `${p.account}: ${p.error.message}`).join('; ');
    throw new MailError(first.error.code, `every account failed. ${why}`, {
      retryable: first.error.retryable,
    });
  }
  return tool.fanOut?.(parts) as Record<string, unknown>;
}

/** The id arguments a not_found can be about, in the order they are probed (the first given wins). */
const ID_ARGS = [
  ['messageId', 'message'],
  ['messageIds', 'message'],
  ['threadId', 'thread'],
  ['threadIds', 'thread'],
] as const;

/** How long one probe of another account may take: a hint is not worth a slow error. */
const PROBE_MS = 5_000;

/**
 * A not_found on an id, when the server serves several accounts: ids belong to one account, so
 * say which accounts there are, and which other one holds the id (one read by id per other
 * account, at most PROBE_MS each). Any other error, or a call without an id, passes unchanged.
 */
export async function withAccountHint(
  runtime: ServerRuntime,
  tool: AnyTool,
  account: string | undefined,
  args: Record<string, unknown> | undefined,
  e: unknown,
): Promise<unknown> {
  const routing = runtime.accounts;
  if (
    !isMailError(e) ||
    e.code !== 'not_found' ||
    routing === undefined ||
    args === undefined ||
    tool.registry
  )
    return e;
  const found = ID_ARGS.map(([key, kind]) => {
    const v = args[key];
    return { kind, id: Array.isArray(v) ? (v[0] as unknown) : v };
  }).find((x) => typeof x.id === 'string');
  if (found === undefined) return e;
  const id = found.id as string;
  try {
    const all = await routing.all();
    if (all.length < 2) return e;
    const here = (await routing.resolve(account)).name;
    const holders = await Promise.all(
      all
        .filter((a) => a.name !== here)
        .map(async (a) => {
          const signal = AbortSignal.timeout(PROBE_MS);
          try {
            const mailbox = await routing.mailboxFor(a.name);
            if (found.kind === 'message') await mailbox.getMessageLabels(id, signal);
            else await mailbox.getThread(id, { format: 'metadata', metadataHeaders: [], signal });
            return a.name;
          } catch {
            return undefined;
          }
        }),
    );
    const holder = holders.find((h) => h !== undefined);
    const names = all.map((a) => `"${a.name}"`).join(', ');
    const where =
      holder === undefined
        ? `no other served account has this ${found.kind} id either`
        : `account "${holder}" has this ${found.kind}: call again with account: "${holder}"`;
    return new MailError(
      'not_found',
      `${e.message} (account "${here}"). This server serves accounts ${names}, and ids belong to one account; ${where}.`,
      { retryable: e.retryable },
    );
  } catch {
    return e;
  }
}
