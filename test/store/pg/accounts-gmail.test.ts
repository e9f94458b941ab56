import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { readToken } from '../../../src/store/config.js';
import { closeSharedPgAccountsStores } from '../../../src/store/pg/accounts-store.js';
import { startPostgres } from '../../helpers/postgres.js';
import { MAIN, writeTestPolicy } from '../../helpers/stack.js';
import type { PgCluster } from '../../helpers/postgres.js';
import { cliEnv, consentWithFetch, makeConfigDir, runCli, startCli, startSandbox } from '../oauth-helpers.js';

/*
 * A Gmail account on PostgreSQL with the built bin and the Gmail sandbox: `mailwarden auth`
 * writes the sealed token into the state database, `accounts add` registers it there, the
 * server's calls use it, `accounts remove` takes both out; a token that could only be stored in
 * plaintext is refused before the browser is involved.
 */

let sb: Sandbox;
let cluster: PgCluster;

beforeAll(async () => {
  [sb, cluster] = await Promise.all([startSandbox(), startPostgres()]);
}, 120_000);

afterAll(async () => {
  await closeSharedPgAccountsStores();
  await sb?.close();
  await cluster?.close();
});

async function rows(url: string, sql: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe('a Gmail account in the state database', () => {
  it('auth stores the sealed token there, accounts add registers it, calls use it, remove takes both out', async () => {
    const url = await cluster.createDatabase('gmail_accounts');
    const dir = makeConfigDir(sb);
    const env = cliEnv(dir, sb, {
      MAILWARDEN_STATE: url,
      MAILWARDEN_TOKEN_PASSPHRASE: 'one for every replica',
    });
    const run = startCli(['auth', '--no-browser', '--account', 'work'], env);
    const page = await consentWithFetch(await run.url, { decision: 'approve' });
    const signed = await run.done;
    expect(signed.code, signed.err).toBe(0);
    expect(page.text).toContain(`Signed in as ${DEMO_ADDRESS}`);
    expect(signed.out).toContain('(gmail-token of account "work")');
    expect(existsSync(join(dir, 'tokens', 'work.json'))).toBe(false);
    const stored = (await rows(
      url,
      'SELECT account, kind, envelope FROM mailwarden_account_secrets',
    )) as Array<{
      account: string;
      kind: string;
      envelope: string;
    }>;
    expect(stored.map((r) => [r.account, r.kind])).toEqual([['work', 'gmail-token']]);
    expect(JSON.parse(stored[0]?.envelope ?? '{}')).toMatchObject({
      address: DEMO_ADDRESS,
      protection: 'passphrase',
    });
    // The refresh token opens with the passphrase, and is nowhere in the table in clear.
    const { refreshToken } = await readToken(env, 'work');
    expect(refreshToken.length).toBeGreaterThan(10);
    expect(JSON.stringify(await rows(url, 'SELECT * FROM mailwarden_account_secrets'))).not.toContain(
      refreshToken,
    );

    const added = await runCli(['accounts', 'add', 'work', '--alias', 'job'], env);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toContain(`Added * work  (alias job)  ${DEMO_ADDRESS}  gmail`);
    expect(existsSync(join(dir, 'accounts.json'))).toBe(false);

    const call = await runCli(['call', 'get_profile', '{"account": "job"}'], env);
    expect(call.code, call.err).toBe(0);
    expect((JSON.parse(call.out) as { emailAddress: string }).emailAddress).toBe(DEMO_ADDRESS);

    const removed = await runCli(['accounts', 'remove', 'job'], env);
    expect(removed.code, removed.err).toBe(0);
    expect(removed.out).toContain('Removed account "work"; stored token deleted.');
    expect(await rows(url, 'SELECT * FROM mailwarden_accounts')).toEqual([]);
    expect(await rows(url, 'SELECT * FROM mailwarden_account_secrets')).toEqual([]);
  }, 120_000);

  it('without a passphrase or keyring, auth is refused before any consent page, naming the fix', async () => {
    const url = await cluster.createDatabase('gmail_plaintext');
    const dir = makeConfigDir(sb);
    const r = await runCli(['auth', '--no-browser'], cliEnv(dir, sb, { MAILWARDEN_STATE: url }));
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('never holds a plaintext secret');
    expect(r.err).toContain('MAILWARDEN_TOKEN_PASSPHRASE');
    expect(r.out).not.toContain('/o/oauth2/v2/auth');
    expect(await rows(url, 'SELECT * FROM mailwarden_account_secrets')).toEqual([]);
  }, 60_000);

  it('the add_account tool signs in and registers into the database; remove_account takes both out', async () => {
    const url = await cluster.createDatabase('gmail_tool');
    const dir = makeConfigDir(sb);
    writeTestPolicy(dir, undefined);
    const env = cliEnv(dir, sb, {
      MAILWARDEN_STATE: url,
      MAILWARDEN_TOKEN_PASSPHRASE: 'one for every replica',
      MAILWARDEN_TOOLS: 'read,manage,accounts',
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN],
      env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'accounts-pg-test', version: '0' });
    await client.connect(transport);
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = await client.callTool({ name, arguments: args });
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        return r.structuredContent as Record<string, unknown>;
      };
      // This client shows no URL itself: the sign-in waits, and its URL is in the result.
      const pending = await call('add_account', { name: 'work', tiers: ['read', 'manage'] });
      expect(pending).toMatchObject({ status: 'pending' });
      const page = await consentWithFetch(String(pending['signInUrl']), { decision: 'approve' });
      expect(page.text).toContain(`Signed in as ${DEMO_ADDRESS}`);
      // The browser's page is answered before the account is saved: ask until the flow has ended.
      let added = await call('add_account', { name: 'work', tiers: ['read', 'manage'] });
      for (let i = 0; i < 50 && added['status'] === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        added = await call('add_account', { name: 'work', tiers: ['read', 'manage'] });
      }
      expect(added).toMatchObject({
        status: 'added',
        account: { name: 'work', address: DEMO_ADDRESS, default: true },
      });
      expect(existsSync(join(dir, 'accounts.json'))).toBe(false);
      expect(existsSync(join(dir, 'tokens', 'work.json'))).toBe(false);
      expect(await rows(url, 'SELECT name FROM mailwarden_accounts')).toEqual([{ name: 'work' }]);
      expect(await rows(url, 'SELECT account, kind FROM mailwarden_account_secrets')).toEqual([
        { account: 'work', kind: 'gmail-token' },
      ]);
      expect(await call('get_profile', { account: 'work' })).toMatchObject({ emailAddress: DEMO_ADDRESS });

      expect(await call('remove_account', { account: 'work' })).toMatchObject({
        removed: 'work',
        tokenDeleted: true,
        revoked: true,
      });
      expect(await rows(url, 'SELECT * FROM mailwarden_accounts')).toEqual([]);
      expect(await rows(url, 'SELECT * FROM mailwarden_account_secrets')).toEqual([]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
