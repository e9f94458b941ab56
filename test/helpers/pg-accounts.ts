import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TIERS, scopesForTiers } from '../../src/policy/tiers.js';
import { readAccountsFile } from '../../src/store/accounts.js';
import { readImapPassword, writeImapPassword } from '../../src/store/imap-secret.js';
import { openStateDb } from '../../src/store/pg/db.js';
import { pgAccountsStore } from '../../src/store/pg/accounts-store.js';
import { filesAccountsStore } from '../../src/store/accounts-store.js';
import type { AccountsStore } from '../../src/store/accounts-store.js';
import { readTokenFile, writeAccountToken } from '../../src/store/tokens.js';

/**
 * A test config dir's accounts, Gmail tokens and IMAP passwords put into a state database,
 * sealed with `passphrase`: with MAILWARDEN_STATE=postgres://… the server reads them there, never
 * from the config dir. The sandbox's config dirs hold plaintext tokens, which the database
 * refuses, so each secret is opened (with the same passphrase, or none) and sealed again rather
 * than moved as it is (moveAccountsToPostgres has tests of its own).
 */
export async function accountsIntoPostgres(dir: string, url: string, passphrase: string): Promise<void> {
  const files = {
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_KEYSTORE: 'off',
    MAILWARDEN_TOKEN_PASSPHRASE: passphrase,
  };
  const db = await openStateDb(url);
  try {
    const store = pgAccountsStore(db);
    const entries = await readAccountsFile(files);
    if (entries.length > 0) await store.update(() => ({ list: entries, result: undefined }));
    await sealTokens(dir, passphrase, store);
    for (const account of tokenNames(dir, 'imap'))
      await writeImapPassword(
        { ...files, MAILWARDEN_STATE: url },
        account,
        await readImapPassword(files, account),
      );
  } finally {
    await db.close();
  }
}

/** The accounts whose secret files sit in the config dir's tokens/`sub` folder. */
function tokenNames(dir: string, sub: string): string[] {
  const folder = join(dir, 'tokens', sub);
  return existsSync(folder)
    ? readdirSync(folder)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -'.json'.length))
    : [];
}

/** Each Gmail token file of the config dir, opened and written to `store` sealed with `passphrase`. */
async function sealTokens(dir: string, passphrase: string, store: AccountsStore): Promise<void> {
  const files = {
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_KEYSTORE: 'off',
    MAILWARDEN_TOKEN_PASSPHRASE: passphrase,
  };
  for (const account of tokenNames(dir, '')) {
    const token = await readTokenFile(join(dir, 'tokens', `${account}.json`), files);
    await writeAccountToken(
      store,
      account,
      {
        refreshToken: token.refreshToken,
        address: token.address ?? '',
        // A legacy file records no scopes (nothing narrowed): the sealed one records them all.
        scopes: token.scopes ?? scopesForTiers(new Set(TIERS)),
        issuedAt: token.issuedAt ?? new Date().toISOString(),
      },
      { kind: 'passphrase', passphrase },
    );
  }
}

/**
 * A test config dir's plaintext Gmail token files sealed in place with `passphrase`, as a real
 * install with a passphrase keeps them: what `mailwarden state migrate` can move as it is.
 */
export async function sealTokenFiles(dir: string, passphrase: string): Promise<void> {
  const env = {
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_KEYSTORE: 'off',
    MAILWARDEN_TOKEN_PASSPHRASE: passphrase,
  };
  await sealTokens(dir, passphrase, filesAccountsStore(env));
}
