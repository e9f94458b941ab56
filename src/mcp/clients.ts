import { MailError } from '../mail/errors.js';
import { ClientActionLog } from '../policy/action-log.js';
import { clientTiersOn } from '../policy/clients.js';
import type { ClientEntry } from '../policy/clients.js';
import type { Tier } from '../policy/tiers.js';
import { findAccount } from '../store/accounts.js';
import type { AccountEntry, AccountRegistry } from '../store/accounts.js';
import type { AccountRouting, ServedAccount } from './accounts.js';
import type { ServerRuntime } from './server.js';

/*
 * One HTTP client's view of the server (clients.json, src/policy/clients.ts): the same tools,
 * mailboxes and policy, but only the client's accounts, with the client's tiers there, and every
 * action log record stamped with its name. Everything that names, lists or probes accounts goes
 * through the runtime's routing (src/mcp/accounts.ts: resolve, `account: "all"`, the not_found
 * hint that looks for an id in the other accounts), so scoping the routing scopes all of them.
 */

export type ClientScope = Pick<ClientEntry, 'name' | 'accounts' | 'tiers'>;

/** The answer for an account this client may not use, the same whether or not it exists. */
function notHere(ref: string | undefined, mine: readonly { name: string }[]): MailError {
  const names = mine.map((a) => a.name).join(', ');
  return new MailError(
    'not_found',
    ref === undefined
      ? 'no account to use: this client has none on this server'
      : `no account "${ref}" among this client's accounts (${names === '' ? 'none' : names}); see list_accounts`,
    { retryable: false },
  );
}

function scopedRouting(base: AccountRouting, client: ClientScope): AccountRouting {
  const allowed = new Set(client.accounts);
  /** The client's accounts as the registry lists them now, one of them the default. */
  async function mine(): Promise<AccountEntry[]> {
    const list: AccountEntry[] =
      base.registry !== undefined
        ? await base.registry.list()
        : (await base.all()).map((a, i) => ({
            name: a.name,
            provider: 'gmail',
            tiers: [...a.tiers],
            default: i === 0,
          }));
    const kept = list.filter((a) => allowed.has(a.name));
    const def = Math.max(
      0,
      kept.findIndex((a) => a.default),
    );
    return kept.map((a, i) => ({ ...a, default: i === def }));
  }
  const served = async (name: string): Promise<ServedAccount> => {
    const s = await base.resolve(name);
    return { name: s.name, tiers: clientTiersOn(client, s.tiers) };
  };
  async function resolve(ref?: string): Promise<ServedAccount> {
    const list = await mine();
    const found = ref === undefined ? list.find((a) => a.default) : findAccount(list, ref);
    if (found === undefined) throw notHere(ref, list);
    return served(found.name);
  }
  const refuse = (): never => {
    throw new MailError(
      'forbidden_operation',
      `HTTP client "${client.name}" cannot change the accounts; the operator does, with \`mailwarden accounts\``,
      { retryable: false },
    );
  };
  const registry: AccountRegistry = {
    list: async () =>
      (await mine()).map((a) => ({ ...a, tiers: [...clientTiersOn(client, new Set<Tier>(a.tiers))] })),
    add: async () => refuse(),
    signIn: async () => refuse(),
    remove: async () => refuse(),
  };
  return {
    resolve,
    all: async () => Promise.all((await mine()).map((a) => served(a.name))),
    mailboxFor: async (account) => base.mailboxFor((await resolve(account)).name),
    registry,
  };
}

/** The runtime as one client sees it. `base.accounts` must be the server's routing. */
export function scopedRuntime(base: ServerRuntime, client: ClientScope): ServerRuntime {
  if (base.accounts === undefined) throw new Error('a client scope needs the server account routing');
  const accounts = scopedRouting(base.accounts, client);
  const policy = base.policy;
  return {
    ...base,
    // tools/list: the server's tiers within the client's.
    tiers: new Set([...base.tiers].filter((t) => t === 'read' || client.tiers.includes(t))),
    accounts,
    mailbox: () => accounts.mailboxFor(),
    actionLog: new ClientActionLog(base.actionLog, client.name),
    // The write policy's move records carry the client's name too.
    ...(policy === undefined
      ? {}
      : { policy: { ...policy, gateFor: (a, mb) => policy.gateFor(a, mb, client.name) } }),
  };
}
