import { createHash, timingSafeEqual } from 'node:crypto';
import { MailError } from '../mail/errors.js';
import { TIERS } from './tiers.js';
import type { Tier } from './tiers.js';

/*
 * HTTP clients, each with its own bearer token (docs/reference.md, "clients.json"): who may call
 * the HTTP server, which accounts each one sees, and the tiers it gets there. This file is the
 * pure half (the format, its checks, the token hash, the scope); src/store/clients.ts reads and
 * writes the file, src/mcp/clients.ts applies a scope to a server runtime.
 *
 * The token is stored as its SHA-256, never as itself. A slow hash (scrypt) protects guessable
 * secrets such as passwords; these tokens are 32 random bytes, so no guess list exists to slow
 * down, and a slow hash would only make every HTTP request cost a key derivation.
 */

export interface ClientEntry {
  /** Lower-cased; shown in the action log (`client`) and in `mailwarden clients list`. */
  name: string;
  /** SHA-256 of the bearer token, 64 lower-case hex digits. */
  tokenSha256: string;
  /** Account names (accounts.json) this client may use; never empty. */
  accounts: string[];
  /** The tiers it gets on each of them, within the account's own (read is always in). */
  tiers: Tier[];
  /** ISO 8601. */
  added?: string;
}

/** Tiers a client may be given: those that work a mailbox (`accounts` changes the registry). */
export const CLIENT_TIERS: readonly Tier[] = TIERS.filter((t) => t !== 'accounts');

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const ENTRY_KEYS = new Set(['name', 'tokenSha256', 'accounts', 'tiers', 'added']);

/** The stored form of a bearer token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The client a presented token belongs to, comparing its SHA-256 with every stored hash in
 * constant time and without stopping at a match, so neither which client matched nor how much of
 * a guess was right shows in the time taken.
 */
export function clientForToken<T extends { tokenSha256: string }>(
  list: readonly T[],
  token: string,
): T | undefined {
  const presented = createHash('sha256').update(token, 'utf8').digest();
  let found: T | undefined;
  for (const c of list) {
    const same = timingSafeEqual(presented, Buffer.from(c.tokenSha256, 'hex'));
    if (same && found === undefined) found = c;
  }
  return found;
}

function bad(path: string, field: string, problem: string): MailError {
  return new MailError(
    'invalid_input',
    `${path}: ${field}${problem === '' ? '' : ` ${problem}`}. Fix the file, or manage it with \`mailwarden clients\`.`,
    { field: 'clients.json' },
  );
}

/** A client name: the rule account names follow (letters, digits, . _ -; up to 64). */
export function clientNameProblem(value: string): string | undefined {
  return NAME.test(value)
    ? undefined
    : 'must be 1 to 64 lower-case letters, digits, . _ - (not starting with . _ -)';
}

/** `read,manage` or a list: the tiers a client may get, read always among them. Throws naming `field`. */
export function parseClientTiers(
  value: readonly unknown[],
  field: string,
  onBad: (p: string) => Error,
): Tier[] {
  const out = new Set<Tier>(['read']);
  for (const [i, raw] of value.entries()) {
    if (typeof raw !== 'string' || !(CLIENT_TIERS as readonly string[]).includes(raw))
      throw onBad(`${field}[${i}] is ${JSON.stringify(raw)}; allowed: ${CLIENT_TIERS.join(', ')}`);
    out.add(raw as Tier);
  }
  return CLIENT_TIERS.filter((t) => out.has(t));
}

function parseEntry(path: string, raw: unknown, i: number): ClientEntry {
  const at = `clients[${i}]`;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(path, at, 'is not an object');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!ENTRY_KEYS.has(k))
      throw bad(path, `${at}.${k}`, `is not a field of a client (fields: ${[...ENTRY_KEYS].join(', ')})`);
  const name = o['name'];
  if (typeof name !== 'string') throw bad(path, `${at}.name`, 'is missing or not a string');
  const nameProblem = clientNameProblem(name);
  if (nameProblem !== undefined) throw bad(path, `${at}.name`, `"${name}" ${nameProblem}`);
  const hash = o['tokenSha256'];
  if (typeof hash !== 'string' || !HEX64.test(hash))
    throw bad(path, `${at}.tokenSha256`, 'must be the SHA-256 of the token as 64 lower-case hex digits');
  const accounts = o['accounts'];
  if (!Array.isArray(accounts) || accounts.length === 0)
    throw bad(path, `${at}.accounts`, 'must be a list of one or more account names');
  const seen = new Set<string>();
  for (const [j, a] of accounts.entries()) {
    if (typeof a !== 'string' || !NAME.test(a))
      throw bad(path, `${at}.accounts[${j}]`, `is ${JSON.stringify(a)}, not an account name`);
    if (seen.has(a)) throw bad(path, `${at}.accounts[${j}]`, `names "${a}" twice`);
    seen.add(a);
  }
  const tiers = o['tiers'];
  if (!Array.isArray(tiers)) throw bad(path, `${at}.tiers`, `must be a list of ${CLIENT_TIERS.join(', ')}`);
  const parsedTiers = parseClientTiers(tiers, `${at}.tiers`, (p) => bad(path, p, ''));
  const added = o['added'];
  if (added !== undefined && (typeof added !== 'string' || Number.isNaN(Date.parse(added))))
    throw bad(path, `${at}.added`, 'must be an ISO 8601 time');
  return {
    name,
    tokenSha256: hash,
    accounts: [...seen],
    tiers: parsedTiers,
    ...(added === undefined ? {} : { added: added as string }),
  };
}

/**
 * clients.json's text → its clients, or an error naming the field at fault: unknown fields,
 * a malformed hash, an unknown tier, an empty account list, two clients with one name or one
 * token are all refused, so a typo never quietly widens or narrows what a client may do.
 */
export function parseClients(text: string, path: string): ClientEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw bad(path, 'the file', 'is not valid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw bad(path, 'the file', 'must be an object {"clients": [...]}');
  for (const k of Object.keys(json))
    if (k !== 'clients') throw bad(path, k, 'is not a field of clients.json (only "clients")');
  const list = (json as { clients?: unknown }).clients;
  if (!Array.isArray(list)) throw bad(path, 'clients', 'must be a list');
  const entries = list.map((raw, i) => parseEntry(path, raw, i));
  const names = new Map<string, number>();
  const hashes = new Map<string, number>();
  for (const [i, c] of entries.entries()) {
    const n = names.get(c.name);
    if (n !== undefined) throw bad(path, `clients[${i}].name`, `"${c.name}" is also clients[${n}]'s name`);
    const h = hashes.get(c.tokenSha256);
    if (h !== undefined)
      throw bad(
        path,
        `clients[${i}].tokenSha256`,
        `is also clients[${h}]'s: each client needs its own token`,
      );
    names.set(c.name, i);
    hashes.set(c.tokenSha256, i);
  }
  return entries;
}

/** What a client gets on an account: the account's tiers within the client's (read stays). */
export function clientTiersOn(
  client: Pick<ClientEntry, 'tiers'>,
  accountTiers: ReadonlySet<Tier>,
): Set<Tier> {
  return new Set<Tier>([...accountTiers].filter((t) => t === 'read' || client.tiers.includes(t)));
}
