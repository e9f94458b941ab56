import { spawn } from 'node:child_process';
import { MailError, invalidInput } from '../mail/errors.js';
import { scopesForTiers, tiersFromEnv } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { DEFAULT_CONSENT_TIMEOUT_MS, authorizeBase, startConsent } from '../providers/gmail/sign-in.js';
import type { Consent } from '../providers/gmail/sign-in.js';
import { googleTransport } from '../providers/gmail/transport.js';
import { Wire } from '../providers/gmail/wire.js';
import { accountName, readOAuthClient } from '../store/config.js';
import { accountsStore } from '../store/accounts-store.js';
import type { Env } from '../store/config.js';
import { narrowTiers } from '../policy/grants.js';
import {
  chooseProtection,
  describeProtection,
  readAccountTokenMeta,
  writeAccountToken,
} from '../store/tokens.js';
import type { Protection, TokenDeps, TokenMeta } from '../store/tokens.js';

/**
 * `mailwarden auth`: the loopback consent flow (src/providers/gmail/sign-in.ts) run from a
 * terminal. beginSignIn is the part the add_account tool shares: it checks the mailbox that
 * came back against the one already stored and writes the token, encrypted where it can be.
 */

export interface AuthOptions {
  env: Env;
  account?: string;
  force: boolean;
  /** Try to open the system browser (the URL is printed either way). */
  openBrowser: boolean;
  print: (line: string) => void;
  deps?: TokenDeps;
}

export function signInTimeoutOf(env: Env): number {
  const raw = env['MAILWARDEN_AUTH_TIMEOUT_MS'];
  if (raw === undefined || raw === '') return DEFAULT_CONSENT_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0)
    throw invalidInput('MAILWARDEN_AUTH_TIMEOUT_MS', 'must be a positive integer (milliseconds)');
  return ms;
}

export interface SignInOptions {
  env: Env;
  account: string;
  /** The tiers whose scopes are asked for, and no others. */
  tiers: ReadonlySet<Tier>;
  /** Store a token for another mailbox than the one the account's token file names. */
  force: boolean;
  /** Ends every failure's message: nothing was stored, and how to try again. */
  retryHint: string;
  /** What refusing another mailbox says, after naming both. */
  mismatchHint: string;
  /** The address the account is registered with; else the one its token file names. */
  registered?: string;
  deps?: TokenDeps;
}

export interface SignedIn {
  address: string;
  scopes: string[];
  /** The tiers the consent did not grant what they need (the person unticked boxes). */
  dropped: Tier[];
}

export interface SignIn {
  url: string;
  scopes: string[];
  timeoutMs: number;
  /** Where the token is stored: its file, or the state database. */
  path: string;
  protection: Protection;
  previous: TokenMeta | undefined;
  /** The browser came back, the mailbox is the right one and its token is stored. */
  done: Promise<SignedIn>;
  cancel(reason: MailError): void;
}

/** Starts one sign-in: the consent URL now, the stored token when a person has approved. */
export async function beginSignIn(o: SignInOptions): Promise<SignIn> {
  const { env } = o;
  const client = await readOAuthClient(env);
  const scopes = scopesForTiers(o.tiers);
  const store = await accountsStore(env);
  const path = store.secretWhere(o.account, 'gmail-token');
  const previous = await readAccountTokenMeta(store, o.account).catch(() => undefined);
  const timeoutMs = signInTimeoutOf(env);
  const protection = await chooseProtection(env, o.deps ?? {});
  // Refused before the browser is involved: the state database never holds a plaintext token.
  if (protection.kind === 'none' && !store.plaintextSecrets)
    throw new MailError(
      'not_authorized',
      `The token would be stored unencrypted (${protection.reason}), and the state database (MAILWARDEN_STATE) never holds a plaintext secret. Set MAILWARDEN_TOKEN_PASSPHRASE (the same on every replica) and sign in again. ${o.retryHint}`,
    );
  const sandbox = env['MAILWARDEN_SANDBOX_URL'];
  const expected = o.registered ?? previous?.address;
  const consent: Consent = await startConsent({
    client,
    scopes,
    wire: new Wire(googleTransport(sandbox), o.tiers),
    authorizeUrl: authorizeBase(sandbox),
    ...(expected === undefined ? {} : { loginHint: expected }),
    timeoutMs,
    retryHint: o.retryHint,
  });
  const done = (async (): Promise<SignedIn> => {
    const got = await consent.granted;
    try {
      const was = expected;
      if (was !== undefined && was.toLowerCase() !== got.address.toLowerCase() && !o.force) {
        throw new MailError(
          'invalid_input',
          `${o.registered === undefined ? `${path} holds the token for` : `account "${o.account}" is registered as`} ${was}, but this sign-in is for ${got.address}. Nothing was stored. ${o.mismatchHint}`,
          { field: 'account' },
        );
      }
      await writeAccountToken(
        store,
        o.account,
        {
          refreshToken: got.refreshToken,
          address: got.address,
          scopes: got.scopes,
          issuedAt: new Date().toISOString(),
        },
        protection,
      );
    } catch (e) {
      got.respond(false, `Sign-in failed: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
    got.respond(true, `Signed in as ${got.address}. You can close this tab.`);
    return { address: got.address, scopes: got.scopes, dropped: narrowTiers(o.tiers, got.scopes).dropped };
  })();
  done.catch(() => undefined);
  return {
    url: consent.url,
    scopes,
    timeoutMs,
    path,
    protection,
    previous,
    done,
    cancel: (reason) => consent.cancel(reason),
  };
}

/** Best effort: the printed URL is the contract, a browser window is a convenience. */
export function openInBrowser(url: string, env: Env): void {
  let cmd: string;
  let args: string[];
  if (process.platform === 'darwin') [cmd, args] = ['open', [url]];
  else if (process.platform === 'win32')
    [cmd, args] = ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]];
  else {
    // Without a display xdg-open falls back to a terminal browser that would take over this terminal.
    if (!env['DISPLAY'] && !env['WAYLAND_DISPLAY']) return;
    [cmd, args] = ['xdg-open', [url]];
  }
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true, windowsVerbatimArguments: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Nothing to do: the URL is on the terminal.
  }
}

const short = (scope: string): string => scope.replace('https://www.googleapis.com/auth/', '');

export async function runAuth(o: AuthOptions): Promise<number> {
  const { env, print } = o;
  const account = accountName(env, o.account);
  const tiers = tiersFromEnv(env);
  const flow = await beginSignIn({
    env,
    account,
    tiers,
    force: o.force,
    retryHint: 'Nothing was stored; run `mailwarden auth` again.',
    mismatchHint:
      'To keep both, run `mailwarden auth --account NAME`; to replace it, run `mailwarden auth --force`.',
    ...(o.deps === undefined ? {} : { deps: o.deps }),
  });

  print(
    `Signing in account "${account}" for tiers ${[...tiers].join(', ')} (scopes: ${flow.scopes.map(short).join(', ')}).`,
  );
  print(`The token will be stored ${describeProtection(flow.protection)}`);
  print(
    `Open this URL in a browser and approve access (waiting up to ${Math.round(flow.timeoutMs / 1000)} s):`,
  );
  print('');
  print(`  ${flow.url}`);
  print('');
  if (o.openBrowser) openInBrowser(flow.url, env);

  const got = await flow.done;
  print(`Signed in as ${got.address}. Granted: ${got.scopes.map(short).join(', ')}.`);
  print(`Token stored at ${flow.path}, ${describeProtection(flow.protection)}`);
  if (flow.previous?.protection === 'none' && flow.protection.kind !== 'none')
    print('The previous plaintext token was replaced by an encrypted one.');
  // Granular consent lets the user untick scopes; say which tiers that switched off.
  if (got.dropped.length > 0)
    print(
      `Warning: the consent did not grant what the ${got.dropped.join(', ')} tier(s) need; their tools will not be listed. ` +
        'Run `mailwarden auth` again and leave every box ticked to enable them.',
    );
  return 0;
}
