import { z } from 'zod';
import { MailError, isMailError } from '../mail/errors.js';
import type { AccountEntry, AccountRegistry, SignInOutcome } from '../store/accounts.js';
import { defineTool } from './common/define.js';
import type { AnyTool, ToolContext } from './common/define.js';

const account = z.object({
  name: z.string(),
  alias: z.string().optional(),
  address: z.string().optional().describe('absent while unknown'),
  provider: z.enum(['gmail', 'imap']),
  tiers: z.array(z.string()).describe('what calls against this account may do'),
  default: z.boolean().describe('used when a call names no account'),
  added: z.string().optional().describe('ISO 8601'),
});

/** Field by field, so nothing else a registry entry might one day carry reaches the model. */
function view(a: AccountEntry): z.input<typeof account> {
  return {
    name: a.name,
    ...(a.alias === undefined ? {} : { alias: a.alias }),
    ...(a.address === undefined ? {} : { address: a.address }),
    provider: a.provider,
    tiers: [...a.tiers],
    default: a.default,
    ...(a.added === undefined ? {} : { added: a.added }),
  };
}

function registryOf(ctx: ToolContext): AccountRegistry {
  if (ctx.accounts === undefined) throw new MailError('unsupported', 'this server has no account registry');
  return ctx.accounts;
}

export const listAccounts = defineTool({
  name: 'list_accounts',
  title: 'List accounts',
  tier: 'read',
  access: 'read',
  registry: true,
  description:
    'The accounts this server serves: name, alias, address, provider, the tiers each allows, and the default. Pass a name, alias or address as `account` to any tool.',
  input: z.strictObject({}),
  output: z.object({ accounts: z.array(account) }),
  async handle(ctx) {
    return { accounts: (await registryOf(ctx).list()).map(view) };
  },
});

const added = z.object({
  status: z.enum(['added', 'reauthenticated', 'pending']),
  account: account.optional(),
  signInUrl: z.string().optional().describe('pending: for the user to open in a browser on this machine'),
  note: z.string().optional(),
});

/** What add_account answers for IMAP: a password is typed on the machine, never given to the model. */
export function imapByTerminal(name: string): MailError {
  return new MailError(
    'unsupported',
    `IMAP accounts are added on the machine that runs mailwarden, where the password is typed and never passes through the assistant: \`mailwarden accounts add ${name.trim().toLowerCase()} --imap --host HOST --user USER\` (see \`mailwarden accounts\`).`,
    { retryable: false },
  );
}

export const addAccount = defineTool({
  name: 'add_account',
  title: 'Add account',
  tier: 'accounts',
  access: 'write',
  registry: true,
  description:
    'Add a Gmail account, or renew a registered one: the user approves on a Google page (waits up to 5 min). A client that cannot show it gets status "pending" and signInUrl for the user; call again for the result. Not for IMAP.',
  input: z.strictObject({
    name: z.string().max(64),
    alias: z.string().max(64).optional(),
    tiers: z
      .array(z.enum(['read', 'manage', 'filters', 'drafts']))
      .max(4)
      .optional()
      .describe('default read,manage; asks Google for these scopes only'),
    makeDefault: z.boolean().default(false),
    provider: z.enum(['gmail', 'imap']).default('gmail'),
    force: z.boolean().default(false).describe('accept a different mailbox than the one registered'),
  }),
  output: added,
  async handle(ctx, args) {
    if (args.provider === 'imap') throw imapByTerminal(args.name);
    const start = await registryOf(ctx).signIn({
      name: args.name,
      makeDefault: args.makeDefault,
      force: args.force,
      ...(args.alias === undefined ? {} : { alias: args.alias }),
      ...(args.tiers === undefined ? {} : { tiers: args.tiers }),
    });
    if (start.kind === 'done') return outcomeOf(start.outcome);
    const { flow } = start;
    const left = Math.max(0, flow.expiresAt - Date.now());
    const wait =
      left >= 60_000 ? `${Math.round(left / 60_000)} minute(s)` : `${Math.ceil(left / 1000)} second(s)`;
    const message = `Sign in with Google to ${flow.reauth ? 'renew' : 'add'} the mailwarden account "${args.name.trim().toLowerCase()}". Open the page in a browser on the machine mailwarden runs on; it waits ${wait}.`;
    let shown;
    try {
      shown = ctx.showUrl
        ? await ctx.showUrl({ id: flow.id, url: flow.url, message }, () => flow.wait(ctx.signal))
        : ({ shown: false } as const);
    } catch (e) {
      // Declined or failed: stop waiting. (The 2026-07-28 "ask and re-run" is not a MailError.)
      if (isMailError(e)) flow.cancel(e);
      throw e;
    }
    if (shown.shown) return outcomeOf(shown.value);
    return {
      status: 'pending' as const,
      signInUrl: flow.url,
      note: `A person must open signInUrl in a browser on the machine mailwarden runs on and approve, within ${wait}; then call add_account again with the same arguments for the result. Nothing is stored until then.`,
    };
  },
});

function outcomeOf(o: SignInOutcome): z.input<typeof added> {
  return { status: o.status, account: view(o.entry), ...(o.note === undefined ? {} : { note: o.note }) };
}

export const removeAccount = defineTool({
  name: 'remove_account',
  title: 'Remove account',
  tier: 'accounts',
  access: 'destructive',
  registry: true,
  description:
    'Forget an account: revokes its grant at Google (best effort; revoked says whether Google confirmed), then deletes its registry entry and its token file on this machine.',
  input: z.strictObject({ account: z.string().max(320).describe('name, alias or address') }),
  output: z.object({
    removed: z.string(),
    tokenDeleted: z.boolean(),
    newDefault: z.string().optional(),
    revoked: z.boolean(),
    note: z.string().optional(),
  }),
  async handle(ctx, args) {
    const out = await registryOf(ctx).remove(args.account);
    return {
      removed: out.removed?.name ?? args.account.trim().toLowerCase(),
      tokenDeleted: out.tokenDeleted,
      ...(out.newDefault === undefined ? {} : { newDefault: out.newDefault }),
      revoked: out.revoked,
      ...(out.note === undefined ? {} : { note: out.note }),
    };
  },
});

export const ACCOUNT_TOOLS: readonly AnyTool[] = [listAccounts, addAccount, removeAccount];
