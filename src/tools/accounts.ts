import { z } from 'zod';
import { MailError } from '../mail/errors.js';
import type { AccountEntry, AccountRegistry } from '../store/accounts.js';
import { defineTool } from './define.js';
import type { AnyTool, ToolContext } from './define.js';

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
    'The accounts this server serves: name, alias, address, provider, the tiers each allows, and which is the default. Pass a name, alias or address as `account` to any tool; search also takes "all".',
  input: z.strictObject({}),
  output: z.object({ accounts: z.array(account) }),
  async handle(ctx) {
    return { accounts: (await registryOf(ctx).list()).map(view) };
  },
});

export const addAccount = defineTool({
  name: 'add_account',
  title: 'Add account',
  tier: 'accounts',
  access: 'write',
  registry: true,
  description:
    'Register an account that is already signed in: its token must exist from `mailwarden auth --account NAME` (this tool cannot sign in). tiers defaults to read,manage.',
  input: z.strictObject({
    name: z.string().max(64).describe('the name used at `mailwarden auth --account NAME`'),
    alias: z.string().max(64).optional(),
    tiers: z
      .array(z.enum(['read', 'manage', 'filters', 'drafts']))
      .max(4)
      .optional(),
    makeDefault: z.boolean().default(false),
  }),
  output: z.object({ account }),
  async handle(ctx, args) {
    const added = await registryOf(ctx).add({
      name: args.name,
      makeDefault: args.makeDefault,
      ...(args.alias === undefined ? {} : { alias: args.alias }),
      ...(args.tiers === undefined ? {} : { tiers: args.tiers }),
    });
    return { account: view(added) };
  },
});

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
