import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TIERS, scopesForTiers } from '../../src/policy/tiers.js';
import { readAccountsFile } from '../../src/store/accounts.js';
import { openStateDb } from '../../src/store/pg/db.js';
import { pgAccountsStore } from '../../src/store/pg/accounts-store.js';
import { readTokenFile, writeAccountToken } from '../../src/store/tokens.js';

/**
 * A test config dir's accounts and Gmail tokens put into a state database, the tokens sealed with
 * `passphrase`: with MAILWARDEN_STATE=postgres://… the server reads them there, never from the
 * config dir. (The sandbox's config dirs hold plaintext tokens, which the database refuses, so
 * they are opened and sealed again rather than moved as they are.)
 */
export async function accountsIntoPostgres(dir: string, url: string, passphrase: string): Promise<void> {
  const env = { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_KEYSTORE: 'off' };
  const db = await openStateDb(url);
  try {
    const store = pgAccountsStore(db);
    const entries = await readAccountsFile(env);
    if (entries.length > 0) await store.update(() => ({ list: entries, result: undefined }));
    for (const file of readdirSync(join(dir, 'tokens')).filter((f) => f.endsWith('.json'))) {
      const account = file.slice(0, -'.json'.length);
      const token = await readTokenFile(join(dir, 'tokens', file), env);
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
  } finally {
    await db.close();
  }
}
