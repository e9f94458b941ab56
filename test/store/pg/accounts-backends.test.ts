import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  addAccount,
  readAccountEntry,
  readAccounts,
  removeAccount,
  setDefaultAccount,
} from '../../../src/store/accounts.js';
import { accountsStore, secretPath } from '../../../src/store/accounts-store.js';
import type { Env } from '../../../src/store/config.js';
import { readToken } from '../../../src/store/config.js';
import { readImapPassword, writeImapPassword } from '../../../src/store/imap-secret.js';
import { closeSharedPgAccountsStores } from '../../../src/store/pg/accounts-store.js';
import { chooseProtection, writeAccountToken } from '../../../src/store/tokens.js';
import type { ImapSettings } from '../../../src/providers/imap/settings.js';
import { usePostgres } from '../../helpers/postgres.js';
import { rejected } from '../../helpers/rejected.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * The accounts registry and its secrets on both backends, one suite: accounts.json and the token
 * files (the default), and the state database (MAILWARDEN_STATE=postgres://…), reached through
 * the same functions the CLI and the server call.
 */

const pgc = usePostgres();
pgc.onClose(closeSharedPgAccountsStores);

const NOW = new Date('2026-12-04T08:00:00.000Z');
const PASSPHRASE = 'a passphrase every replica has';
const IMAP: ImapSettings = { host: '127.0.0.1', port: 1143, security: 'starttls', user: 'pat@home.example' };

interface Backend {
  kind: 'files' | 'postgres';
  /** A fresh, empty registry: its environment (a config dir of its own either way). */
  fresh(): Promise<Env>;
}

const BACKENDS: Backend[] = [
  {
    kind: 'files',
    fresh: () =>
      Promise.resolve({
        MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-accounts-'),
        MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
        MAILWARDEN_KEYSTORE: 'off',
      }),
  },
  {
    kind: 'postgres',
    fresh: async () => ({
      MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-accounts-'),
      MAILWARDEN_STATE: await pgc.database('accounts'),
      MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
      MAILWARDEN_KEYSTORE: 'off',
    }),
  },
];

async function storeToken(env: Env, account: string, refreshToken: string): Promise<void> {
  await writeAccountToken(
    await accountsStore(env),
    account,
    {
      refreshToken,
      address: `${account}@example.com`,
      scopes: ['https://mail.google.com/'],
      issuedAt: NOW.toISOString(),
    },
    await chooseProtection(env),
  );
}

/** Every row of every accounts table, as text: what an operator with the database sees. */
async function dumpTables(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const parts: string[] = [];
    for (const t of ['mailwarden_accounts', 'mailwarden_account_keys', 'mailwarden_account_secrets'])
      parts.push(JSON.stringify((await c.query(`SELECT * FROM ${t}`)).rows));
    return parts.join('\n');
  } finally {
    await c.end();
  }
}

describe.each(BACKENDS)('accounts on $kind', (backend) => {
  it('adds accounts in order, one default, and finds each by name, alias and address', async () => {
    const env = await backend.fresh();
    expect(await readAccounts(env)).toEqual([]);
    const work = await addAccount(env, { name: 'Work', alias: 'w', address: 'Pat@Work.example' }, NOW);
    const home = await addAccount(env, { name: 'home', imap: IMAP, address: IMAP.user, tiers: 'read' }, NOW);
    expect(work).toMatchObject({ name: 'work', alias: 'w', provider: 'gmail', default: true });
    expect(home).toMatchObject({
      name: 'home',
      provider: 'imap',
      imap: IMAP,
      tiers: ['read'],
      default: false,
    });
    expect(await readAccounts(env)).toEqual([work, home]);
    expect((await readAccountEntry(env, 'WORK'))?.name).toBe('work');
    expect((await readAccountEntry(env, 'w'))?.name).toBe('work');
    expect((await readAccountEntry(env, 'pat@work.example'))?.name).toBe('work');
    expect((await readAccountEntry(env, 'pat@home.example'))?.name).toBe('home');
    expect(await readAccountEntry(env, 'nobody')).toBeUndefined();

    const made = await setDefaultAccount(env, 'home');
    expect(made.default).toBe(true);
    expect((await readAccounts(env)).map((a) => [a.name, a.default])).toEqual([
      ['work', false],
      ['home', true],
    ]);
    // The files backend keeps exactly the file it always wrote; the database writes none.
    const file = join(env['MAILWARDEN_CONFIG_DIR'] as string, 'accounts.json');
    if (backend.kind === 'files')
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ accounts: await readAccounts(env) });
    else expect(existsSync(file)).toBe(false);
  });

  it('refuses a name or alias that already names an account, with the same error code and field', async () => {
    const env = await backend.fresh();
    await addAccount(env, { name: 'work', alias: 'job' }, NOW);
    const byName = await rejected(addAccount(env, { name: 'work' }, NOW));
    expect([byName.code, byName.field]).toEqual(['invalid_input', 'name']);
    expect(byName.message).toBe('name: "work" already names account "work"');
    const aliasAsName = await rejected(addAccount(env, { name: 'job' }, NOW));
    expect([aliasAsName.code, aliasAsName.field]).toEqual(['invalid_input', 'name']);
    const byAlias = await rejected(addAccount(env, { name: 'other', alias: 'work' }, NOW));
    expect([byAlias.code, byAlias.field]).toEqual(['invalid_input', 'alias']);
    expect((await readAccounts(env)).map((a) => a.name)).toEqual(['work']);
  });

  it('removing an account removes its secrets, and promotes another default', async () => {
    const env = await backend.fresh();
    await addAccount(env, { name: 'work', address: 'work@example.com' }, NOW);
    await addAccount(env, { name: 'home', imap: IMAP }, NOW);
    await storeToken(env, 'work', 'refresh-token-of-work');
    await writeImapPassword(env, 'home', 'imap password of home');
    const store = await accountsStore(env);
    expect(await store.hasSecret('work', 'gmail-token')).toBe(true);

    const gone = await removeAccount(env, 'work');
    expect(gone).toMatchObject({ removed: { name: 'work' }, newDefault: 'home', tokenDeleted: true });
    expect(await store.hasSecret('work', 'gmail-token')).toBe(false);
    expect((await rejected(readToken(env, 'work'))).code).toBe('not_authorized');

    const imapGone = await removeAccount(env, 'home');
    expect(imapGone).toMatchObject({ removed: { name: 'home' }, tokenDeleted: true });
    expect((await rejected(readImapPassword(env, 'home'))).code).toBe('not_authorized');
    expect(await readAccounts(env)).toEqual([]);
    expect((await rejected(removeAccount(env, 'home'))).code).toBe('not_found');
    if (backend.kind === 'postgres')
      expect(await dumpTables(env['MAILWARDEN_STATE'] as string)).toBe('[]\n[]\n[]');
  });

  it('a stored secret opens with the key it was sealed with, and with no other', async () => {
    const env = await backend.fresh();
    await storeToken(env, 'work', 'refresh-token-of-work');
    await writeImapPassword(env, 'home', 'imap password of home');
    expect((await readToken(env, 'work')).refreshToken).toBe('refresh-token-of-work');
    expect(await readImapPassword(env, 'home')).toBe('imap password of home');
    const wrong = { ...env, MAILWARDEN_TOKEN_PASSPHRASE: 'another passphrase' };
    const e = await rejected(readImapPassword(wrong, 'home'));
    expect(e.code).toBe('not_authorized');
    expect(e.message).toContain('is not the passphrase it was encrypted with');
    expect((await rejected(readToken(wrong, 'work'))).code).toBe('not_authorized');
  });

  it('without a passphrase or keyring: files store plaintext with a warning, the database refuses', async () => {
    const env = await backend.fresh();
    const open = { ...env, MAILWARDEN_TOKEN_PASSPHRASE: '' };
    if (backend.kind === 'files') {
      const stored = await writeImapPassword(open, 'home', 'imap password of home');
      expect(stored.warning).toContain('NOT encrypted');
      expect(readFileSync(secretPath(env, 'home', 'imap-password'), 'utf8')).toContain(
        'imap password of home',
      );
      return;
    }
    const e = await rejected(writeImapPassword(open, 'home', 'imap password of home'));
    expect([e.code, e.field]).toEqual(['invalid_input', 'protection']);
    expect(e.message).toContain('never holds a plaintext secret');
    expect(e.message).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
    expect(await (await accountsStore(env)).hasSecret('home', 'imap-password')).toBe(false);
  });
});

describe('the registry in the state database', () => {
  it('serializes writers: 24 accounts added at once by two pools all land, one default', async () => {
    const env = (await BACKENDS[1]?.fresh()) as Env;
    // A second process's view: the same database through another environment object and pool.
    const { openStateDb } = await import('../../../src/store/pg/db.js');
    const { pgAccountsStore } = await import('../../../src/store/pg/accounts-store.js');
    const other = await openStateDb(env['MAILWARDEN_STATE'] as string);
    try {
      const otherStore = pgAccountsStore(other);
      const names = Array.from({ length: 24 }, (_, i) => `acct-${String(i).padStart(2, '0')}`);
      await Promise.all(
        names.map((name, i) =>
          i % 2 === 0
            ? addAccount(env, { name }, NOW)
            : otherStore.update((list) => ({
                list: [...list, { name, provider: 'gmail', tiers: ['read'], default: false }],
                result: undefined,
              })),
        ),
      );
      const list = await readAccounts(env);
      expect(list.map((a) => a.name).sort()).toEqual(names);
      expect(list.filter((a) => a.default)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('the tables themselves refuse a plaintext secret and a name used twice', async () => {
    const env = (await BACKENDS[1]?.fresh()) as Env;
    await addAccount(env, { name: 'work', alias: 'job' }, NOW);
    const c = new pg.Client({ connectionString: env['MAILWARDEN_STATE'] as string });
    await c.connect();
    try {
      const plain = await c
        .query(
          'INSERT INTO mailwarden_account_secrets (account, kind, envelope) VALUES (\'work\', \'imap-password\', \'{"protection":"none","password":"x"}\')',
        )
        .catch((e: { code?: string }) => e.code);
      expect(plain).toBe('23514'); // check_violation
      await c.query(
        'INSERT INTO mailwarden_accounts (name, position, entry) VALUES (\'job2\', 5, \'{"name":"job2"}\')',
      );
      const clash = await c
        .query("INSERT INTO mailwarden_account_keys (key, account) VALUES ('job', 'job2')")
        .catch((e: { code?: string }) => e.code);
      expect(clash).toBe('23505'); // unique_violation: "job" already names "work"
    } finally {
      await c.end();
    }
  });
});
