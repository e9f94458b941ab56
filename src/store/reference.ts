import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { checkName } from './accounts.js';
import { configDir } from './config.js';
import { accountsStore } from './accounts-store.js';
import type { Env } from './config.js';
import { chooseProtection, describeProtection, readAccountTokenMeta, writeAccountToken } from './tokens.js';
import type { TokenDeps } from './tokens.js';

/**
 * The reference server (mailwarden 0.14) keeps `credentials.json` (Google's Desktop-app OAuth
 * client) and one token per account in `~/.mailwarden`: `token.json` for the default account,
 * `token.<name>.json` for the others. A plaintext token is the google-auth-library credentials
 * object (`refresh_token`, `scope` space-separated, `access_token`, `expiry_date`…); anything
 * else (an encrypted file, a token without a refresh_token) cannot be read here.
 */

export type TokenImport =
  | { file: string; account: string; outcome: 'imported'; protection: string; scopes: string[] }
  | { file: string; account: string; outcome: 'exists' }
  | { file: string; account: string; outcome: 'unreadable'; why: string };

export interface ReferenceImport {
  dir: string;
  credentials:
    | { outcome: 'imported' | 'same' | 'exists'; from: string; to: string }
    | { outcome: 'missing'; from: string }
    | { outcome: 'invalid'; from: string; why: string };
  tokens: TokenImport[];
}

const TOKEN_FILE = /^token(?:\.(.+))?\.json$/;

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function clientOf(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'is not JSON';
  }
  const top = (json ?? {}) as Record<string, unknown>;
  const inner = (top['installed'] ?? top['web'] ?? top) as Record<string, unknown>;
  if (typeof inner['client_id'] !== 'string' || typeof inner['client_secret'] !== 'string')
    return 'has no installed.client_id / client_secret (a Desktop-app OAuth client)';
  return undefined;
}

/** What a reference token file holds, if this server can read it. */
function plaintextToken(
  text: string,
): { refreshToken: string; scopes: string[]; address: string } | { why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { why: 'it is not JSON (encrypted?)' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { why: 'it is not a JSON object' };
  const t = json as Record<string, unknown>;
  const refresh = t['refresh_token'] ?? t['refreshToken'];
  if (typeof refresh !== 'string' || refresh === '') {
    const sealed = ['encrypted', 'ciphertext', 'iv', 'authTag', 'tag', 'data'].some((k) => k in t);
    return { why: sealed ? 'it is encrypted' : 'it holds no refresh_token' };
  }
  const scope = t['scope'] ?? t['scopes'];
  const scopes =
    typeof scope === 'string'
      ? scope.split(/\s+/).filter((s) => s !== '')
      : Array.isArray(scope)
        ? scope.filter((s): s is string => typeof s === 'string')
        : [];
  // Without its scopes nothing can say which tools the token may serve; a new sign-in can.
  if (scopes.length === 0) return { why: 'it does not say which scopes it grants' };
  const address = [t['email'], t['address'], t['emailAddress']].find((v) => typeof v === 'string') as
    string | undefined;
  return { refreshToken: refresh, scopes, address: address ?? '' };
}

/**
 * Copies the OAuth client and every plaintext token into this server's config (tokens encrypted
 * as `mailwarden auth` would store them). Never overwrites without `force`; never deletes or
 * changes anything in `dir`.
 */
export async function importReference(
  env: Env,
  dir: string,
  options: { force: boolean; now: Date; deps?: TokenDeps },
): Promise<ReferenceImport> {
  const from = join(dir, 'credentials.json');
  const to = env['MAILWARDEN_CREDENTIALS'] ?? join(configDir(env), 'credentials.json');
  const text = await readText(from);
  let credentials: ReferenceImport['credentials'];
  if (text === undefined) credentials = { outcome: 'missing', from };
  else {
    const problem = clientOf(text);
    if (problem !== undefined) credentials = { outcome: 'invalid', from, why: problem };
    else {
      const ours = await readText(to);
      if (ours === text) credentials = { outcome: 'same', from, to };
      else if (ours !== undefined && !options.force) credentials = { outcome: 'exists', from, to };
      else {
        await writeFileAtomic(to, text);
        credentials = { outcome: 'imported', from, to };
      }
    }
  }

  const tokens: TokenImport[] = [];
  const names = (await readdir(dir)).filter((f) => TOKEN_FILE.test(f)).sort();
  let protection: Awaited<ReturnType<typeof chooseProtection>> | undefined;
  for (const file of names) {
    const raw = TOKEN_FILE.exec(file)?.[1] ?? 'default';
    let account: string;
    try {
      account = checkName(raw, 'account');
    } catch {
      tokens.push({ file, account: raw, outcome: 'unreadable', why: `"${raw}" is not a valid account name` });
      continue;
    }
    const parsed = plaintextToken((await readText(join(dir, file))) ?? '');
    if ('why' in parsed) {
      tokens.push({ file, account, outcome: 'unreadable', why: parsed.why });
      continue;
    }
    const store = await accountsStore(env);
    if (!options.force && (await readAccountTokenMeta(store, account).catch(() => ({}))) !== undefined) {
      tokens.push({ file, account, outcome: 'exists' });
      continue;
    }
    protection ??= await chooseProtection(env, options.deps ?? {});
    await writeAccountToken(
      store,
      account,
      {
        refreshToken: parsed.refreshToken,
        address: parsed.address,
        scopes: parsed.scopes,
        issuedAt: options.now.toISOString(),
        importedAt: options.now.toISOString(),
      },
      protection,
    );
    tokens.push({
      file,
      account,
      outcome: 'imported',
      protection: describeProtection(protection),
      scopes: parsed.scopes,
    });
  }
  return { dir, credentials, tokens };
}
