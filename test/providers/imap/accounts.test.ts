import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { startImapDemo } from '../../../src/sandbox/imap-account.js';
import type { ImapDemo } from '../../../src/sandbox/imap-account.js';
import { readAccounts, writeAccounts } from '../../../src/store/accounts.js';
import { writeImapPassword } from '../../../src/store/imap-secret.js';
import { startStack } from '../../helpers/stack.js';
import type { Stack } from '../../helpers/stack.js';

/*
 * One server, a Gmail account and an IMAP account: every tool takes either by name, and
 * account "all" fans out over both, tagging each row with the account it came from.
 */

let imap: ImapDemo;
let stack: Stack;

beforeAll(async () => {
  imap = await startImapDemo({ profile: 'bridge', account: 'proton' });
  // The Gmail sandbox stack writes its own config dir; register the IMAP account there too,
  // with the password stored the way `accounts add --imap` stores it.
  stack = await startStack({
    env: {
      MAILWARDEN_TOKEN_PASSPHRASE: imap.env['MAILWARDEN_TOKEN_PASSPHRASE'] ?? '',
      MAILWARDEN_KEYSTORE: 'off',
    },
    beforeSpawn: async (configDir) => {
      const env = { ...imap.env, MAILWARDEN_CONFIG_DIR: configDir };
      const [proton] = await readAccounts(imap.env);
      if (proton === undefined) throw new Error('no imap entry');
      await writeAccounts(env, [
        {
          name: 'default',
          provider: 'gmail',
          tiers: ['read', 'manage'],
          default: true,
          address: DEMO_ADDRESS,
        },
        { ...proton, default: false },
      ]);
      await writeImapPassword(env, 'proton', imap.server.password);
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await imap?.close();
});

describe('a Gmail and an IMAP account on one server', () => {
  it('list_accounts shows both with their providers', async () => {
    const r = await stack.call('list_accounts');
    expect(r.isError, r.text).toBe(false);
    const accounts = r.structured['accounts'] as Array<{ name: string; provider: string }>;
    expect(accounts.map((a) => [a.name, a.provider])).toEqual([
      ['default', 'gmail'],
      ['proton', 'imap'],
    ]);
  });

  it('each tool reaches the account it names', async () => {
    const g = await stack.call('get_profile', { account: 'default' });
    const p = await stack.call('get_profile', { account: 'proton' });
    expect(g.structured['provider']).toBe('gmail');
    expect(p.structured['provider']).toBe('imap');
    expect(p.structured['authservId']).toBe('mx.google.com');
  });

  it('account "all" fans out over Gmail and IMAP alike', async () => {
    const r = await stack.call('search', { query: 'in:inbox', account: 'all', maxResults: 5 });
    expect(r.isError, r.text).toBe(false);
    const parts = r.structured['accounts'] as Array<{ account: string; ok: boolean; threads: number }>;
    expect(parts).toEqual([
      expect.objectContaining({ account: 'default', ok: true, threads: 5 }),
      expect.objectContaining({ account: 'proton', ok: true, threads: 5 }),
    ]);
    const tags = new Set((r.structured['threads'] as Array<{ account: string }>).map((t) => t.account));
    expect(tags).toEqual(new Set(['default', 'proton']));
    const f = await stack.call('follow_ups', { account: 'all' });
    expect(f.isError, f.text).toBe(false);
  });

  it('an IMAP account whose server is down is reported inline, the other account still answers', async () => {
    await imap.proxy?.stop();
    const r = await stack.call('search', { query: 'in:inbox', account: 'all', maxResults: 3 });
    expect(r.isError, r.text).toBe(false);
    const parts = r.structured['accounts'] as Array<{
      account: string;
      ok: boolean;
      error?: { code: string };
    }>;
    expect(parts[0]).toMatchObject({ account: 'default', ok: true });
    expect(parts[1]).toMatchObject({ account: 'proton', ok: false });
    expect(parts[1]?.error?.code).toMatch(/network_error|upstream_unavailable/);
  });
});
