import { COMMANDS, commandUsage, parseCommand, UsageError } from './commands.js';
import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import type { AccountRouting, ServedAccount } from '../mcp/accounts.js';
import { TIERS } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { revokeRefreshToken } from '../providers/gmail/auth.js';
import { googleTransport } from '../providers/gmail/transport.js';
import { Wire } from '../providers/gmail/wire.js';
import type { Mailbox } from '../providers/mailbox.js';
import {
  addAccount,
  checkName,
  findAccount,
  readAccounts,
  removeAccount,
  setDefaultAccount,
} from '../store/accounts.js';
import type {
  AccountEntry,
  AccountRegistry,
  NewAccount,
  RemovedAccount,
  Revoker,
} from '../store/accounts.js';
import { readToken } from '../store/config.js';
import { accountsStore } from '../store/accounts-store.js';
import { tiersGrantedFor } from '../store/tokens.js';
import { accountSignIns } from './account-sign-in.js';
import type { Env } from '../store/config.js';

export interface RouterOptions {
  env: Env;
  /** What the server lists (MAILWARDEN_TOOLS); an account's own tiers can only narrow it. */
  serverTiers: ReadonlySet<Tier>;
  /** --account / MAILWARDEN_ACCOUNT: this server serves that one account and no other. */
  pinned?: string | undefined;
  /** The demo: one fixed account on the sandbox, nothing read from the config dir. */
  demo?: { name: string; address: string } | undefined;
  open(name: string, tiers: ReadonlySet<Tier>): Promise<Mailbox>;
}

export interface AccountRouter extends AccountRouting {
  registry: AccountRegistry;
  close(): Promise<void>;
}

/**
 * Which accounts a server serves, and their mailboxes. The registry is re-read on every call
 * (one small file, or one query of the state database), so `mailwarden accounts …` in another terminal takes effect without a
 * restart; mailboxes open on first use, never at start-up.
 */
export function accountRouter(opts: RouterOptions): AccountRouter {
  const serverList = TIERS.filter((t) => t !== 'accounts' && opts.serverTiers.has(t));
  const implicit = (name: string, address?: string): AccountEntry => ({
    name,
    provider: 'gmail',
    tiers: serverList,
    default: true,
    ...(address === undefined ? {} : { address }),
  });

  async function served(): Promise<AccountEntry[]> {
    if (opts.demo) return [implicit(opts.demo.name, opts.demo.address)];
    const list = await readAccounts(opts.env);
    if (opts.pinned !== undefined) {
      const entry = list.find((a) => a.name === opts.pinned);
      return [entry ? { ...entry, default: true } : implicit(opts.pinned)];
    }
    // Without accounts.json the server is the single account it always was: tokens/default.json.
    return list.length > 0 ? list : [implicit('default')];
  }

  /**
   * An account's tiers: its own, within the server's, and within what its token was granted
   * (read from the clear part of the token file; the demo's sandbox token has every scope).
   */
  const toServed = async (a: AccountEntry): Promise<ServedAccount> => {
    // read is always on: every account can at least be read if the server lists anything.
    const own = new Set<Tier>(['read', ...a.tiers.filter((t) => opts.serverTiers.has(t))]);
    if (opts.demo) return { name: a.name, tiers: own };
    const granted = await tiersGrantedFor(await accountsStore(opts.env), a.name, own);
    return { name: a.name, tiers: granted.tiers };
  };

  async function resolve(ref?: string): Promise<ServedAccount> {
    const list = await served();
    const found = ref === undefined ? (list.find((a) => a.default) ?? list[0]) : findAccount(list, ref);
    if (found !== undefined) return await toServed(found);
    const names = list.map((a) => a.name).join(', ');
    const why =
      opts.pinned !== undefined
        ? `this server is pinned to account "${opts.pinned}" (--account / MAILWARDEN_ACCOUNT)`
        : `this server's accounts are: ${names}`;
    throw invalidInput('account', `"${ref ?? ''}" is not an account here; ${why} (see list_accounts)`);
  }

  const cache = new Map<string, { key: string; mailbox: Promise<Mailbox> }>();
  function open(a: ServedAccount): Promise<Mailbox> {
    const key = [...a.tiers].sort().join(',');
    const hit = cache.get(a.name);
    // Tiers edited in accounts.json mean a mailbox with another egress policy; the old one is
    // dropped, not closed, so a call still running on it can finish.
    if (hit !== undefined && hit.key === key) return hit.mailbox;
    const entry = { key, mailbox: opts.open(a.name, a.tiers) };
    cache.set(a.name, entry);
    // A failed open (no token yet) is retried on the next call rather than cached.
    entry.mailbox.catch(() => {
      if (cache.get(a.name) === entry) cache.delete(a.name);
    });
    return entry.mailbox;
  }

  async function forget(name: string): Promise<void> {
    const hit = cache.get(name);
    cache.delete(name);
    await (await hit?.mailbox.catch(() => undefined))?.close();
  }

  function refuseChanges(what: string): void {
    if (opts.demo)
      throw new MailError('unsupported', `the demo serves one sandbox account; it cannot ${what} accounts`);
    if (opts.pinned !== undefined)
      throw new MailError(
        'unsupported',
        `this server is pinned to account "${opts.pinned}" (--account / MAILWARDEN_ACCOUNT); run it without the pin to ${what} accounts, or use \`mailwarden accounts\``,
      );
  }

  const registry: AccountRegistry = {
    list: served,
    async add(input: NewAccount): Promise<AccountEntry> {
      refuseChanges('add');
      const name = checkName(input.name, 'name');
      let address: string | undefined;
      try {
        address = (await readToken(opts.env, name)).address;
      } catch (e) {
        const why = isMailError(e) ? e.message : String(e);
        throw new MailError(
          'not_authorized',
          `account "${name}" is not signed in (${why}). Run \`mailwarden auth --account ${name}\` first: only an account whose token already exists can be added. An IMAP mailbox is added in a terminal, where its password can be typed: \`mailwarden accounts add ${name} --imap …\`.`,
        );
      }
      if (
        input.address !== undefined &&
        address !== undefined &&
        input.address.toLowerCase() !== address.toLowerCase()
      )
        throw invalidInput('address', `the token for "${name}" belongs to ${address}, not ${input.address}`);
      address ??= input.address;
      if (address === undefined) {
        // An old token file without the address: ask the mailbox itself (one getProfile call).
        const mailbox = await opts.open(name, new Set<Tier>(['read']));
        try {
          address = (await mailbox.getProfile()).emailAddress;
        } finally {
          await mailbox.close();
        }
      }
      return addAccount(opts.env, { ...input, name, address });
    },
    async signIn(input) {
      refuseChanges('add');
      return signIns(input);
    },
    async remove(ref: string): Promise<RemovedAccount> {
      refuseChanges('remove');
      const out = await removeAccount(opts.env, ref, googleRevoker(opts.env));
      await forget(out.removed?.name ?? ref.trim().toLowerCase());
      return out;
    },
  };

  const signIns = accountSignIns({ env: opts.env, register: (input) => registry.add(input), forget });

  return {
    resolve,
    all: async () => Promise.all((await served()).map(toServed)),
    mailboxFor: async (ref?: string) => open(await resolve(ref)),
    registry,
    async close() {
      await Promise.all([...cache.keys()].map(forget));
    },
  };
}

// ---- `mailwarden accounts list | default NAME | remove NAME | add NAME` ----

const ACCOUNTS_USAGE = COMMANDS.filter((c) => c.words[0] === 'accounts')
  .map(commandUsage)
  .join('\n');

/** The command table's parse (src/cli/commands.ts), as the flags map the add paths read. */
function parse(argv: readonly string[]): { sub: string; name?: string; flags: Map<string, string | true> } {
  const p = parseCommand(['accounts', ...argv]);
  const flags = new Map<string, string | true>(
    Object.entries(p.values).flatMap(([k, v]) => (typeof v === 'string' || v === true ? [[k, v]] : [])),
  );
  const [name] = p.positionals;
  return { sub: p.spec.words[1] as string, ...(name === undefined ? {} : { name }), flags };
}

function line(a: AccountEntry): string {
  const parts = [
    `${a.default ? '*' : ' '} ${a.name}`,
    a.alias === undefined ? '' : `(alias ${a.alias})`,
    a.address ?? '(address unknown)',
    a.imap === undefined ? a.provider : `imap ${a.imap.host}:${a.imap.port}`,
    `tiers ${a.tiers.join(',')}`,
    a.added === undefined ? '' : `added ${a.added.slice(0, 10)}`,
  ];
  return parts.filter((p) => p !== '').join('  ');
}

/** `argv` is everything after `accounts`. Prints for a person; --json for programs. */
export async function accountsCommand(argv: readonly string[], env: Env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\n${ACCOUNTS_USAGE}`);
    return 2;
  }
  const { sub, name, flags } = parsed;
  const flag = (k: string): string | undefined => {
    const v = flags.get(k);
    return typeof v === 'string' ? v : undefined;
  };
  try {
    switch (sub) {
      case 'list': {
        const list = await readAccounts(env);
        if (flags.has('json')) console.log(JSON.stringify({ accounts: list }, null, 2));
        else if (list.length === 0)
          console.log(
            'No accounts registered: the server serves the single account in tokens/default.json (or --account NAME).',
          );
        else for (const a of list) console.log(line(a));
        return 0;
      }
      case 'default': {
        if (name === undefined) break;
        const a = await setDefaultAccount(env, name);
        console.log(`Default account: ${a.name}`);
        return 0;
      }
      case 'remove': {
        if (name === undefined) break;
        const out = await removeAccount(env, name, googleRevoker(env));
        const what = out.removed ? `Removed account "${out.removed.name}"` : `No entry for "${name}"`;
        const onFiles = (await accountsStore(env)).kind === 'files';
        const secret =
          out.removed?.provider === 'imap' ? 'stored password' : onFiles ? 'token file' : 'stored token';
        console.log(`${what}; ${secret} ${out.tokenDeleted ? 'deleted' : 'was already gone'}.`);
        if (out.newDefault !== undefined) console.log(`Default account is now "${out.newDefault}".`);
        if (out.revoked) console.log('The grant was revoked at Google.');
        else if (out.note !== undefined) console.log(out.note);
        return 0;
      }
      case 'add': {
        if (name === undefined) break;
        if (flags.has('imap')) {
          const { addImapAccount } = await import('./accounts-imap.js');
          const entry = await addImapAccount(name, flags, env, console.log, console.error);
          console.log(`Saved ${line(entry).trim()}`);
          return 0;
        }
        // The same path as the add_account tool, so both check the token the same way.
        const { buildRuntime } = await import('./runtime.js');
        const { MAILWARDEN_ACCOUNT: _pin, ...unpinned } = env;
        const built = await buildRuntime({ demo: false, env: unpinned });
        try {
          const input: NewAccount = { name, makeDefault: flags.has('default') };
          const alias = flag('alias');
          const tiers = flag('tiers');
          const address = flag('address');
          if (alias !== undefined) input.alias = alias;
          if (tiers !== undefined) input.tiers = tiers;
          if (address !== undefined) input.address = address;
          const registry = built.runtime.accounts?.registry;
          if (registry === undefined)
            throw new MailError('internal_error', 'this runtime has no account registry');
          console.log(`Added ${line(await registry.add(input)).trim()}`);
        } finally {
          await built.close();
        }
        return 0;
      }
      default:
        console.error(`unknown accounts command "${sub}"\n\n${ACCOUNTS_USAGE}`);
        return 2;
    }
  } catch (e) {
    console.error(isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));
    return 1;
  }
  console.error(`accounts ${sub}: NAME is required\n\n${ACCOUNTS_USAGE}`);
  return 2;
}

/** Revocation at Google through the egress checkpoint (read tier: it only needs the token). */
export function googleRevoker(env: Env): Revoker {
  const wire = new Wire(googleTransport(env['MAILWARDEN_SANDBOX_URL']), new Set<Tier>(['read']));
  return (refreshToken) => revokeRefreshToken(wire, refreshToken);
}
