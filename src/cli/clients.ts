import { randomBytes } from 'node:crypto';
import { isMailError } from '../mail/errors.js';
import { clientNameProblem, parseClientTiers, tokenHash } from '../policy/clients.js';
import type { ClientEntry } from '../policy/clients.js';
import { findAccount, readAccounts } from '../store/accounts.js';
import { clientsPath, readClients, updateClients } from '../store/clients.js';
import type { Env } from '../store/config.js';
import { COMMANDS, commandUsage } from './commands.js';
import type { ParsedCommand } from './commands.js';

/*
 * `mailwarden clients list | add NAME --accounts A,B [--tiers T] | remove NAME`: the HTTP clients
 * of clients.json (src/policy/clients.ts). A refused request (bad name, unknown account or tier,
 * a name already taken, no such client) exits 2 and changes nothing.
 */

const CLIENTS_USAGE = COMMANDS.filter((c) => c.words[0] === 'clients')
  .map(commandUsage)
  .join('\n');

class Refused extends Error {}

function line(c: ClientEntry): string {
  return [
    c.name,
    `accounts ${c.accounts.join(',')}`,
    `tiers ${c.tiers.join(',')}`,
    c.added ? `added ${c.added.slice(0, 10)}` : '',
  ]
    .filter((p) => p !== '')
    .join('  ');
}

/** The account names `--accounts` means, each checked against the accounts this config serves. */
async function accountNames(env: Env, raw: string): Promise<string[]> {
  const registered = await readAccounts(env);
  // Without accounts.json the server serves one account, "default" (tokens/default.json).
  const known = registered.length > 0 ? registered : [{ name: 'default' }];
  const out: string[] = [];
  for (const ref of raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '')) {
    const found = findAccount(known, ref);
    if (found === undefined)
      throw new Refused(
        `--accounts: no account "${ref}"; the accounts are: ${known.map((a) => a.name).join(', ')} (see \`mailwarden accounts list\`)`,
      );
    if (!out.includes(found.name)) out.push(found.name);
  }
  if (out.length === 0) throw new Refused('--accounts: name one or more accounts');
  return out;
}

async function add(env: Env, name: string, values: ParsedCommand['values']): Promise<number> {
  const problem = clientNameProblem(name);
  if (problem !== undefined) throw new Refused(`NAME: "${name}" ${problem}`);
  const rawAccounts = values['accounts'];
  if (typeof rawAccounts !== 'string')
    throw new Refused('--accounts is required: the accounts this client may use');
  const accounts = await accountNames(env, rawAccounts);
  const rawTiers = values['tiers'];
  const tiers = parseClientTiers(
    typeof rawTiers === 'string' ? rawTiers.split(',').map((t) => t.trim()) : [],
    '--tiers',
    (p) => new Refused(`${p}`),
  );
  const token = randomBytes(32).toString('base64url');
  const entry: ClientEntry = {
    name,
    tokenSha256: tokenHash(token),
    accounts,
    tiers,
    added: new Date().toISOString(),
  };
  await updateClients(env, (list) => {
    if (list.some((c) => c.name === name))
      throw new Refused(
        `a client named "${name}" exists; remove it first (\`mailwarden clients remove ${name}\`) to give it a new token`,
      );
    return { list: [...list, entry], result: undefined };
  });
  console.error(`Added HTTP client ${line(entry)} to ${clientsPath(env)}.`);
  console.error('Its bearer token follows. It is shown this once and stored only as a hash:');
  console.log(token);
  return 0;
}

/** `p` is the command table's parse of the whole command line. */
export async function clientsCommand(p: ParsedCommand, env: Env): Promise<number> {
  const sub = p.spec.words[1];
  const name = p.positionals[0];
  try {
    switch (sub) {
      case 'list': {
        const list = await readClients(env);
        if (p.values['json'] === true)
          console.log(
            JSON.stringify(
              { clients: (list ?? []).map(({ tokenSha256: _hash, ...shown }) => shown) },
              null,
              2,
            ),
          );
        else if (list === undefined || list.length === 0)
          console.log(
            `No HTTP clients (${clientsPath(env)}): \`mailwarden http\` takes MAILWARDEN_TOKEN, which sees every account.`,
          );
        else for (const c of list) console.log(line(c));
        return 0;
      }
      case 'add':
        if (name === undefined) break;
        return await add(env, name, p.values);
      case 'remove': {
        if (name === undefined) break;
        await updateClients(env, (list) => {
          const kept = list.filter((c) => c.name !== name);
          if (kept.length === list.length)
            throw new Refused(
              `no client "${name}"${list.length === 0 ? '' : `; the clients are: ${list.map((c) => c.name).join(', ')}`}`,
            );
          return { list: kept, result: undefined };
        });
        console.log(`Removed HTTP client "${name}"; its token is refused from the next request on.`);
        return 0;
      }
      default:
        break;
    }
  } catch (e) {
    if (e instanceof Refused) {
      console.error(`clients ${sub ?? ''}: ${e.message}\n\n${CLIENTS_USAGE}`);
      return 2;
    }
    console.error(isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));
    return 1;
  }
  console.error(`clients ${sub ?? ''}: NAME is required\n\n${CLIENTS_USAGE}`);
  return 2;
}
