import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMailError } from '../mail/errors.js';
import { tiersFromEnv } from '../policy/tiers.js';
import { GmailClient } from '../providers/gmail/client.js';
import { googleTransport } from '../providers/gmail/transport.js';
import { accountName, configDir, readToken, tokenPath } from '../store/config.js';
import type { Env, OAuthClient, StoredToken } from '../store/config.js';
import { scopesCoverTier } from '../policy/grants.js';
import { readAccountEntry, readAccounts } from '../store/accounts.js';
import { readAccountTokenMeta } from '../store/tokens.js';
import { accountsStore } from '../store/accounts-store.js';
import type { TokenDeps, TokenMeta } from '../store/tokens.js';

/**
 * `mailwarden check`: each link of the chain from credentials.json to a live Gmail answer,
 * with the specific fix for whichever one is broken. Exit 1 when any check fails.
 */

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';
type GmailCheck = 'credentials' | 'token' | 'decrypt' | 'scopes' | 'age' | 'live';
/** check-imap.ts; 'accounts' is accounts.json itself. */
type ImapCheck = 'password' | 'tls' | 'login' | 'capability' | 'folders' | 'authserv' | 'read';
export interface CheckItem {
  id: GmailCheck | ImapCheck | 'accounts';
  status: CheckStatus;
  summary: string;
  fix?: string;
}

export interface CheckOptions {
  env: Env;
  account?: string;
  json: boolean;
  print: (line: string) => void;
  deps?: TokenDeps;
  now?: number;
}

const DAY_MS = 86_400_000;
/** The sign-in command for this account, exactly as it is to be typed. */
const authFor = (account: string): string =>
  account === 'default' ? 'mailwarden auth' : `mailwarden auth --account ${account}`;

/** Google expires Testing-status refresh tokens after 7 days; warn a day before. */
const WARN_AGE_DAYS = 6;
const PASSPHRASE = 'MAILWARDEN_TOKEN_PASSPHRASE';
const testingFix = (account: string): string =>
  'Google expires refresh tokens after 7 days for OAuth apps left in "Testing" publishing status. ' +
  'Publish the app (Google Cloud Console → APIs & Services → OAuth consent screen → Publish app; a personal app may stay unverified), ' +
  `or run \`${authFor(account)}\` again every week.`;
const short = (scope: string): string => scope.replace('https://www.googleapis.com/auth/', '');

async function checkCredentials(env: Env): Promise<{ item: CheckItem; client?: OAuthClient }> {
  const path = env['MAILWARDEN_CREDENTIALS'] ?? join(configDir(env), 'credentials.json');
  const create =
    'In Google Cloud Console → APIs & Services → Credentials, create an OAuth client ID of type "Desktop app", ' +
    `download its JSON and save it as ${path} (or point MAILWARDEN_CREDENTIALS at it).`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {
      item: { id: 'credentials', status: 'fail', summary: `no OAuth client file at ${path}`, fix: create },
    };
  }
  const bad = (summary: string, fix = create): { item: CheckItem } => ({
    item: { id: 'credentials', status: 'fail', summary: `${path}: ${summary}`, fix },
  });
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return bad(
      'not valid JSON',
      `Download the Desktop-app client JSON again and save it unchanged. ${create}`,
    );
  }
  if (json === null || typeof json !== 'object') return bad('not a JSON object');
  if (json['type'] === 'service_account') {
    return bad(
      'a service-account key, not an OAuth client (a personal Gmail account cannot be reached with one)',
    );
  }
  if (json['web'] !== undefined && json['installed'] === undefined) {
    return bad('a "Web application" client; the loopback sign-in needs a "Desktop app" client');
  }
  const inner = (json['installed'] ?? json) as Record<string, unknown>;
  const clientId = inner['client_id'];
  const clientSecret = inner['client_secret'];
  if (
    typeof clientId !== 'string' ||
    typeof clientSecret !== 'string' ||
    clientId === '' ||
    clientSecret === ''
  ) {
    return bad('has no installed.client_id / installed.client_secret');
  }
  return {
    item: { id: 'credentials', status: 'ok', summary: `Desktop-app OAuth client ${clientId} (${path})` },
    client: { clientId, clientSecret },
  };
}

function describeMeta(meta: TokenMeta): string {
  if (meta.protection === 'keyring') return 'encrypted with a key in the OS keyring';
  if (meta.protection === 'passphrase') return `encrypted with ${PASSPHRASE}`;
  return 'stored in PLAINTEXT';
}

function decryptFix(meta: TokenMeta, env: Env, message: string, account: string): string {
  if (meta.protection !== 'passphrase') return message;
  if (env[PASSPHRASE] === undefined || env[PASSPHRASE] === '') {
    return `Set ${PASSPHRASE} to the passphrase used at \`mailwarden auth\`, or run \`${authFor(account)}\` again to replace the token.`;
  }
  return `${PASSPHRASE} is not the passphrase the token was encrypted with: set the right one, or run \`${authFor(account)}\` again to replace the token.`;
}

function liveFix(code: string, message: string, ageDays: number | undefined, account: string): string {
  if (code === 'needs_reauth') {
    if (ageDays !== undefined && ageDays >= WARN_AGE_DAYS)
      return `The token was issued ${ageDays} days ago. ${testingFix(account)}`;
    return `The grant was revoked (myaccount.google.com → Security → Third-party access) or the password changed: run \`${authFor(account)}\` again.`;
  }
  if (code === 'network_error' || code === 'upstream_unavailable' || code === 'rate_limited') {
    return `Google could not be reached or did not answer (${message}); check the network or proxy and run \`mailwarden check\` again.`;
  }
  return message;
}

/**
 * --account, else MAILWARDEN_ACCOUNT, else the registry's default account (what a server without
 * --account serves), else the implicit "default". A broken accounts.json is reported by the
 * accounts check below, so here it only falls back.
 */
async function accountToCheck(env: Env, flag: string | undefined): Promise<string> {
  if (flag !== undefined || (env['MAILWARDEN_ACCOUNT'] ?? '') !== '') return accountName(env, flag);
  const list = await readAccounts(env).catch(() => []);
  return (list.find((a) => a.default) ?? list[0])?.name ?? accountName(env);
}

export async function collectChecks(
  o: Omit<CheckOptions, 'json' | 'print'>,
): Promise<{ account: string; items: CheckItem[] }> {
  const { env } = o;
  const now = o.now ?? Date.now();
  const account = await accountToCheck(env, o.account);
  const items: CheckItem[] = [];
  const skip = (id: CheckItem['id'], why: string): number => items.push({ id, status: 'skip', summary: why });
  try {
    const entry = await readAccountEntry(env, account);
    if (entry?.imap !== undefined) {
      const { collectImapChecks } = await import('./check-imap.js');
      return {
        account: entry.name,
        items: await collectImapChecks(env, { ...entry, imap: entry.imap }, o.deps),
      };
    }
  } catch (e) {
    // A broken accounts.json must not hide the Gmail checks, which never needed it.
    items.push({
      id: 'accounts',
      status: 'fail',
      summary: 'accounts.json cannot be read',
      fix: String((e as Error).message),
    });
  }

  const creds = await checkCredentials(env);
  items.push(creds.item);

  let path = tokenPath(env, account);
  let meta: TokenMeta | undefined;
  try {
    // The accounts store MAILWARDEN_STATE chooses: the token file, or the state database.
    const store = await accountsStore(env);
    path = store.secretWhere(account, 'gmail-token');
    meta = await readAccountTokenMeta(store, account);
  } catch (e) {
    items.push({
      id: 'token',
      status: 'fail',
      summary: String((e as Error).message),
      fix: `Run \`${authFor(account)}\` again.`,
    });
  }
  if (meta === undefined) {
    if (!items.some((i) => i.id === 'token')) {
      const flag = account === 'default' ? '' : ` --account ${account}`;
      items.push({
        id: 'token',
        status: 'fail',
        summary: `no token for account "${account}" at ${path}`,
        fix: `Run \`mailwarden auth${flag}\` to sign in.`,
      });
    }
    for (const id of ['decrypt', 'scopes', 'age', 'live'] as const) skip(id, 'no token');
    return { account, items };
  }
  const who = meta.address ?? 'an unrecorded mailbox';
  if (meta.protection === 'none') {
    items.push({
      id: 'token',
      status: 'warn',
      summary: `${path} for ${who}, ${describeMeta(meta)}`,
      fix: `Set ${PASSPHRASE} (or use a session with an OS keyring) and run \`mailwarden auth\` again to encrypt it.`,
    });
  } else items.push({ id: 'token', status: 'ok', summary: `${path} for ${who}, ${describeMeta(meta)}` });

  let token: StoredToken | undefined;
  try {
    token = await readToken(env, account, o.deps ?? {});
    items.push({
      id: 'decrypt',
      status: 'ok',
      summary: meta.protection === 'none' ? 'readable (not encrypted)' : 'decrypts',
    });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    items.push({
      id: 'decrypt',
      status: 'fail',
      summary: 'the token cannot be opened',
      fix: decryptFix(meta, env, message, account),
    });
  }

  const tiers = tiersFromEnv(env);
  if (meta.scopes === undefined) {
    items.push({
      id: 'scopes',
      status: 'warn',
      summary: 'the token file does not record its scopes',
      fix: `Run \`${authFor(account)}\` again to record them.`,
    });
  } else {
    const missing = [...tiers].filter((t) => !scopesCoverTier(t, meta.scopes ?? []));
    const granted = meta.scopes.map(short).join(', ');
    if (missing.length === 0)
      items.push({
        id: 'scopes',
        status: 'ok',
        summary: `granted ${granted}; covers tiers ${[...tiers].join(', ')}`,
      });
    else
      items.push({
        id: 'scopes',
        status: 'fail',
        summary: `granted ${granted || 'nothing'}; not enough for the enabled tier(s) ${missing.join(', ')}, whose tools are not listed`,
        fix: `Run \`${authFor(account)}\` again (leave every box ticked on the consent screen), or remove those tiers from MAILWARDEN_TOOLS.`,
      });
  }

  const issued = meta.issuedAt === undefined ? NaN : Date.parse(meta.issuedAt);
  const ageDays = Number.isNaN(issued) ? undefined : Math.floor((now - issued) / DAY_MS);
  if (meta.importedAt !== undefined)
    // The reference server's token: Google issued it before the import, when is not recorded.
    items.push({
      id: 'age',
      status: 'warn',
      summary: `imported ${meta.importedAt.slice(0, 10)} from another program; when Google issued it is not known, so a 7-day Testing expiry may be close`,
      fix: `Google expires refresh tokens 7 days after they are issued for OAuth apps in "Testing" status: run \`${authFor(account)}\` now to start the 7 days from today, or publish the OAuth app (Google Cloud console → OAuth consent screen → Publish app).`,
    });
  else if (ageDays === undefined) skip('age', 'the token file does not record when it was issued');
  else if (ageDays >= WARN_AGE_DAYS) {
    items.push({
      id: 'age',
      status: 'warn',
      summary: `issued ${ageDays} days ago (${meta.issuedAt ?? ''})`,
      fix: testingFix(account),
    });
  } else items.push({ id: 'age', status: 'ok', summary: `issued ${ageDays} day(s) ago` });

  if (creds.client === undefined || token === undefined) {
    skip('live', 'needs valid credentials and a readable token');
    return { account, items };
  }
  const sandbox = env['MAILWARDEN_SANDBOX_URL'];
  const client = new GmailClient({
    credentials: {
      ...creds.client,
      refreshToken: token.refreshToken,
      ...(Number.isNaN(issued) ? {} : { refreshTokenIssuedAt: issued }),
    },
    tiers: new Set(['read']),
    transport: googleTransport(sandbox),
  });
  try {
    const profile = await client.call('users.getProfile');
    const address = profile.emailAddress ?? '?';
    const differs = meta.address !== undefined && meta.address.toLowerCase() !== address.toLowerCase();
    items.push(
      differs
        ? {
            id: 'live',
            status: 'fail',
            summary: `the token signs in as ${address}, not ${meta.address ?? ''}`,
            fix: `Run \`${authFor(account)} --force\` to record the right mailbox.`,
          }
        : {
            id: 'live',
            status: 'ok',
            summary: `users.getProfile answered for ${address} (${profile.messagesTotal ?? 0} messages)`,
          },
    );
  } catch (e) {
    const code = isMailError(e) ? e.code : 'internal_error';
    const message = e instanceof Error ? e.message : String(e);
    items.push({
      id: 'live',
      status: 'fail',
      summary: `users.getProfile failed: ${code}: ${message}`,
      fix: liveFix(code, message, ageDays, account),
    });
  }
  return { account, items };
}

const LABEL: Readonly<Record<CheckStatus, string>> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

export async function runCheck(o: CheckOptions): Promise<number> {
  const { account, items } = await collectChecks(o);
  const ok = !items.some((i) => i.status === 'fail');
  if (o.json) {
    o.print(JSON.stringify({ account, ok, checks: items }, null, 2));
  } else {
    o.print(`mailwarden check — account "${account}"`);
    for (const i of items) {
      o.print(`${LABEL[i.status]}  ${i.id.padEnd(11)} ${i.summary}`);
      if (i.fix !== undefined && i.status !== 'ok') o.print(`      fix: ${i.fix}`);
    }
    o.print(ok ? 'All checks passed.' : 'Some checks failed; see the fixes above.');
  }
  return ok ? 0 : 1;
}
