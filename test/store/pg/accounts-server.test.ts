import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendMessage, startDovecot } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';
import { startPostgres } from '../../helpers/postgres.js';
import type { PgCluster } from '../../helpers/postgres.js';
import { MAIN, writeTestPolicy } from '../../helpers/stack.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * The accounts registry on PostgreSQL end to end, with the built bin: `mailwarden accounts add
 * --imap` run with MAILWARDEN_STATE=postgres://… stores the account and its encrypted password in
 * the database (no file); a server started on another, empty config dir with the same setting
 * and passphrase serves that account: list_accounts and a search against a real Dovecot.
 */

let cluster: PgCluster;
let dovecot: DovecotServer;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  [cluster, dovecot] = await Promise.all([startPostgres(), startDovecot({ profile: 'bridge' })]);
  await appendMessage(dovecot, 'INBOX', 'From: a@example.com\r\nSubject: quarterly numbers\r\n\r\nhello\r\n');
}, 120_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await dovecot?.stop();
  await cluster?.close();
});

const PASSPHRASE = 'shared by every replica';

function cli(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

describe('accounts in the state database', () => {
  it('`accounts add --imap` stores them there; a server on an empty config dir serves list_accounts and search', async () => {
    const url = await cluster.createDatabase('accounts_e2e');
    const common = {
      MAILWARDEN_STATE: url,
      MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
      MAILWARDEN_KEYSTORE: 'off',
    };
    const adminDir = tempDir('mailwarden-accounts-cli-');
    const added = await cli(
      [
        'accounts',
        'add',
        'bridge',
        '--imap',
        '--host',
        dovecot.host,
        '--port',
        String(dovecot.plainPort),
        '--starttls',
        '--user',
        dovecot.user,
        '--password-stdin',
        '--pin-from-server',
        '--alias',
        'pm',
      ],
      { ...common, HOME: adminDir, MAILWARDEN_CONFIG_DIR: adminDir },
      `${dovecot.password}\n`,
    );
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    // Nothing on this machine's disk: the entry and the password are in the database.
    expect(existsSync(join(adminDir, 'accounts.json'))).toBe(false);
    expect(existsSync(join(adminDir, 'tokens'))).toBe(false);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const rows = await c.query<{ entry: unknown }>('SELECT entry FROM mailwarden_accounts');
      expect(rows.rows).toMatchObject([{ entry: { name: 'bridge', alias: 'pm', provider: 'imap' } }]);
      const secrets = JSON.stringify((await c.query('SELECT * FROM mailwarden_account_secrets')).rows);
      expect(secrets).toContain('"kind":"imap-password"');
      expect(secrets).not.toContain(dovecot.password);
    } finally {
      await c.end();
    }
    const listed = await cli(
      ['accounts', 'list'],
      { ...common, HOME: adminDir, MAILWARDEN_CONFIG_DIR: adminDir },
      '',
    );
    expect(listed.out).toMatch(
      new RegExp(`^\\* bridge {2}\\(alias pm\\).*imap ${dovecot.host}:${dovecot.plainPort}`, 'm'),
    );

    // A replica: its own empty config dir (only policy.json), the same database and passphrase.
    const replicaDir = tempDir('mailwarden-accounts-replica-');
    writeTestPolicy(replicaDir, undefined);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN],
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: replicaDir,
        MAILWARDEN_CONFIG_DIR: replicaDir,
        ...common,
      },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client(
      { name: 'mailwarden-test', version: '0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(transport);
    closers.push(() => client.close());

    const accounts = await client.callTool({ name: 'list_accounts', arguments: {} });
    expect(accounts.isError, stderr).toBeFalsy();
    expect(accounts.structuredContent).toMatchObject({
      accounts: [{ name: 'bridge', alias: 'pm', provider: 'imap', default: true }],
    });
    const found = await client.callTool({ name: 'search', arguments: { account: 'pm', query: 'in:inbox' } });
    expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    expect(JSON.stringify(found.structuredContent)).toContain('quarterly numbers');
  }, 120_000);
});
