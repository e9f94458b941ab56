import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addAccount, readAccounts } from '../../../src/store/accounts.js';
import { moveAccountsToPostgres } from '../../../src/store/accounts-move.js';
import { accountsStore, secretPath } from '../../../src/store/accounts-store.js';
import type { Env } from '../../../src/store/config.js';
import { readToken } from '../../../src/store/config.js';
import { readImapPassword, writeImapPassword } from '../../../src/store/imap-secret.js';
import { closeSharedPgAccountsStores } from '../../../src/store/pg/accounts-store.js';
import type { StateDb } from '../../../src/store/pg/db.js';
import { chooseProtection, writeAccountToken } from '../../../src/store/tokens.js';
import { usePostgres } from '../../helpers/postgres.js';
import { rejected } from '../../helpers/rejected.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * moveAccountsToPostgres: a one-machine install's accounts.json and encrypted secrets copied
 * into the state database as they are, byte for byte, and never in plaintext.
 */

const pgc = usePostgres();
pgc.onClose(closeSharedPgAccountsStores);

const NOW = new Date('2026-12-04T08:00:00.000Z');
const PASSPHRASE = 'the passphrase on every replica';
const REFRESH = '1//0refresh-token-of-work-that-must-never-be-stored-in-clear';
const PASSWORD = 'bridge-password-never-in-clear';

/** A one-machine install: a Gmail account with its token, an IMAP one with its password, and a
 * token nobody registered (the implicit "default" account). */
async function install(): Promise<Env> {
  const env: Env = {
    MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-move-'),
    MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
    MAILWARDEN_KEYSTORE: 'off',
  };
  const protection = await chooseProtection(env);
  const files = await accountsStore(env);
  for (const [name, refreshToken] of [
    ['work', REFRESH],
    ['default', 'refresh-token-of-default'],
  ] as const)
    await writeAccountToken(
      files,
      name,
      {
        refreshToken,
        address: `${name}@example.com`,
        scopes: ['https://mail.google.com/'],
        issuedAt: NOW.toISOString(),
      },
      protection,
    );
  await addAccount(env, { name: 'work', alias: 'job', address: 'work@example.com' }, NOW);
  await writeImapPassword(env, 'bridge', PASSWORD);
  await addAccount(
    env,
    {
      name: 'bridge',
      imap: { host: '127.0.0.1', port: 1143, security: 'starttls', user: 'pat@proton.example' },
    },
    NOW,
  );
  return env;
}

async function database(): Promise<{ url: string; db: StateDb }> {
  const url = await pgc.database('move');
  return { url, db: await pgc.stateDb(url) };
}

async function dump(db: StateDb): Promise<string> {
  const parts: string[] = [];
  for (const t of ['mailwarden_accounts', 'mailwarden_account_keys', 'mailwarden_account_secrets'])
    parts.push(JSON.stringify((await db.pool.query(`SELECT * FROM ${t} ORDER BY 1, 2`)).rows));
  return parts.join('\n');
}

describe('moveAccountsToPostgres', () => {
  it('copies entries and envelopes byte for byte; the database opens them with the key and holds no plaintext', async () => {
    const env = await install();
    const { url, db } = await database();
    expect(await moveAccountsToPostgres(env, db)).toEqual({ accounts: 2, secrets: 3, skippedSame: 0 });

    const onPg: Env = { ...env, MAILWARDEN_STATE: url };
    expect(await readAccounts(onPg)).toEqual(await readAccounts(env));
    const rows = await db.pool.query<{
      account: string;
      kind: 'gmail-token' | 'imap-password';
      envelope: string;
    }>('SELECT account, kind, envelope FROM mailwarden_account_secrets ORDER BY account, kind');
    expect(rows.rows.map((r) => [r.account, r.kind])).toEqual([
      ['bridge', 'imap-password'],
      ['default', 'gmail-token'],
      ['work', 'gmail-token'],
    ]);
    for (const r of rows.rows)
      expect(r.envelope).toBe(readFileSync(secretPath(env, r.account, r.kind), 'utf8'));

    // The envelope carries what opening it needs (iv, tag, kdf), not the key or the secret.
    const sealed = JSON.parse(rows.rows[2]?.envelope ?? '{}') as Record<string, unknown>;
    expect(sealed).toMatchObject({ protection: 'passphrase', kdf: { name: 'scrypt' } });
    expect(Object.keys(sealed['refreshToken'] as object).sort()).toEqual(['alg', 'data', 'iv', 'tag']);
    const everything = await dump(db);
    for (const secret of [REFRESH, PASSWORD, PASSPHRASE, 'refresh-token-of-default'])
      expect(everything).not.toContain(secret);

    expect((await readToken(onPg, 'work')).refreshToken).toBe(REFRESH);
    expect((await readToken(onPg, 'default')).refreshToken).toBe('refresh-token-of-default');
    expect(await readImapPassword(onPg, 'bridge')).toBe(PASSWORD);
  });

  it('a second run moves nothing and counts what was already there', async () => {
    const env = await install();
    const { db } = await database();
    await moveAccountsToPostgres(env, db);
    const before = await dump(db);
    expect(await moveAccountsToPostgres(env, db)).toEqual({ accounts: 0, secrets: 0, skippedSame: 5 });
    expect(await dump(db)).toBe(before);
  });

  it('adds to accounts the database already has, which keep their place and their default', async () => {
    const env = await install();
    const { url, db } = await database();
    const onPg: Env = { ...env, MAILWARDEN_STATE: url };
    await addAccount({ ...onPg, MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-move-') }, { name: 'team' }, NOW);
    expect(await moveAccountsToPostgres(env, db)).toEqual({ accounts: 2, secrets: 3, skippedSame: 0 });
    expect((await readAccounts(onPg)).map((a) => [a.name, a.default])).toEqual([
      ['team', true],
      ['work', false],
      ['bridge', false],
    ]);
  });

  it('refuses an account the database holds with a different entry or secret, and writes nothing', async () => {
    const env = await install();
    const { url, db } = await database();
    const elsewhere: Env = {
      ...env,
      MAILWARDEN_STATE: url,
      MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-move-'),
    };
    await addAccount(elsewhere, { name: 'work', address: 'someone-else@example.com' }, NOW);
    const before = await dump(db);
    const e = await rejected(moveAccountsToPostgres(env, db));
    expect([e.code, e.field]).toEqual(['invalid_input', 'accounts']);
    expect(e.message).toContain('account "work" is already in the state database');
    expect(e.message).toContain('nothing was moved');
    expect(await dump(db)).toBe(before);

    // Same entries, but the database's password for "bridge" was stored anew (another envelope).
    const { db: db2, url: url2 } = await database();
    await moveAccountsToPostgres(env, db2);
    await writeImapPassword({ ...env, MAILWARDEN_STATE: url2 }, 'bridge', 'a newer password');
    const before2 = await dump(db2);
    const e2 = await rejected(moveAccountsToPostgres(env, db2));
    expect(e2.message).toContain('account "bridge" already has a different imap-password');
    expect(await dump(db2)).toBe(before2);
  });

  it('refuses an alias that names another account there, and a plaintext secret, before writing', async () => {
    const env = await install();
    const { url, db } = await database();
    await addAccount(
      { ...env, MAILWARDEN_STATE: url, MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-move-') },
      { name: 'job' },
      NOW,
    );
    const clash = await rejected(moveAccountsToPostgres(env, db));
    expect(clash.code).toBe('invalid_input');
    expect(clash.message).toContain('"job" names both account "job" and account "work"');
    expect(await readAccounts({ ...env, MAILWARDEN_STATE: url })).toHaveLength(1);

    const plain = await install();
    writeFileSync(
      secretPath(plain, 'old', 'gmail-token'),
      JSON.stringify({ refresh_token: 'a-plaintext-legacy-token' }),
    );
    const { db: db2 } = await database();
    const e = await rejected(moveAccountsToPostgres(plain, db2));
    expect([e.code, e.field]).toEqual(['invalid_input', 'protection']);
    expect(e.message).toContain('the Gmail token of account "old" is not encrypted');
    expect(await dump(db2)).toBe('[]\n[]\n[]');
  });
});
