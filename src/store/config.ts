import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MailError } from '../mail/errors.js';
import { readAccountToken } from './tokens.js';
import type { TokenDeps } from './tokens.js';

export type Env = Record<string, string | undefined>;

const ON = new Set(['1', 'true', 'yes', 'on']);
const OFF = new Set(['', '0', 'false', 'no', 'off']);

/**
 * A switch in the environment (MAILWARDEN_DEMO, MAILWARDEN_AUTO_SWEEP…): 1/true/yes/on, or
 * 0/false/no/off (any case); unset or empty is off. Anything else is refused with the variable
 * named, never guessed: a switch the operator thinks is on must not be silently off.
 */
export function envFlag(env: Env, name: string): boolean {
  const v = (env[name] ?? '').trim().toLowerCase();
  if (ON.has(v)) return true;
  if (OFF.has(v)) return false;
  throw new MailError(
    'invalid_input',
    `${name}: "${v}" is not a switch; use 1/true/yes/on or 0/false/no/off`,
  );
}

/**
 * MAILWARDEN_CONFIG_DIR (or MAILWARDEN_DIR, the reference server's spelling), else
 * $XDG_CONFIG_HOME/mailwarden, else ~/.config/mailwarden.
 */
export function configDir(env: Env): string {
  const explicit = env['MAILWARDEN_CONFIG_DIR'] || env['MAILWARDEN_DIR'];
  if (explicit) return explicit;
  const xdg = env['XDG_CONFIG_HOME'];
  return join(xdg && xdg !== '' ? xdg : join(homedir(), '.config'), 'mailwarden');
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export interface StoredToken {
  refreshToken: string;
  scopes?: string[];
  address?: string;
  issuedAt?: string;
}

async function readJson(path: string, what: string, fix: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new MailError('not_authorized', `No ${what} at ${path}. ${fix}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MailError('not_authorized', `${what} at ${path} is not valid JSON. ${fix}`);
  }
}

/**
 * Where the server keeps what it writes between calls (the action log, new-mail marks, write
 * locks): MAILWARDEN_STATE_DIR, else the config dir. `--demo` points it at a temp dir of its own.
 */
export function stateDir(env: Env): string {
  const explicit = env['MAILWARDEN_STATE_DIR'];
  return explicit !== undefined && explicit !== '' ? explicit : configDir(env);
}

/** Google's Desktop-app credentials.json: {"installed": {"client_id", "client_secret", …}}. */
export async function readOAuthClient(env: Env): Promise<OAuthClient> {
  const path = env['MAILWARDEN_CREDENTIALS'] ?? join(configDir(env), 'credentials.json');
  const fix = 'Download a Desktop-app OAuth client from Google Cloud Console and save it there.';
  const json = (await readJson(path, 'OAuth client credentials', fix)) as Record<string, unknown>;
  const inner = (json['installed'] ?? json['web'] ?? json) as Record<string, unknown>;
  const clientId = inner['client_id'];
  const clientSecret = inner['client_secret'];
  if (typeof clientId !== 'string' || typeof clientSecret !== 'string') {
    throw new MailError('not_authorized', `${path} has no installed.client_id / client_secret. ${fix}`);
  }
  return { clientId, clientSecret };
}

export function tokenPath(env: Env, account: string): string {
  return join(configDir(env), 'tokens', `${account}.json`);
}

/**
 * The account's refresh token from the accounts store (tokens/<account>.json, or the state
 * database with MAILWARDEN_STATE=postgres://…), decrypted (MAILWARDEN_TOKEN_PASSPHRASE or the OS keyring, as the
 * file records). Every failure is a MailError naming the fix.
 */
export async function readToken(env: Env, account: string, deps: TokenDeps = {}): Promise<StoredToken> {
  // Imported here, not at the top: the accounts store's modules import this one.
  const { accountsStore } = await import('./accounts-store.js');
  return readAccountToken(await accountsStore(env), account, env, deps);
}

/** Account names are lower-cased: one name, one token file. */
export function accountName(env: Env, flag?: string): string {
  // An empty MAILWARDEN_ACCOUNT is unset, as the server's pin reads it (a launcher may pass "").
  const name = (flag ?? (env['MAILWARDEN_ACCOUNT']?.trim() || undefined) ?? 'default').trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(name)) {
    throw new MailError(
      'invalid_input',
      `account: "${name}" is not a valid name (letters, digits, . _ -; up to 64)`,
      {
        field: 'account',
      },
    );
  }
  return name;
}
