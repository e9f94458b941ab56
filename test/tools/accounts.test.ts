import { existsSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildRuntime } from '../../src/cli/runtime.js';
import type { BuiltRuntime } from '../../src/cli/runtime.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import type { LocalClient } from '../../src/mcp/local-client.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { defineTool } from '../../src/tools/common/define.js';
import { envelopeOf } from '../helpers/envelope.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

const WORK = 'pat@work.example';
const HOME = 'pat@home.example';
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 9);

/** Threads on alternating days across the two mailboxes, so a merge by date interleaves them. */
function seed(email: string, days: number[]): SeedUser {
  return {
    email,
    userLabels: [],
    threads: days.map((d) => ({
      key: `day${d}`,
      messages: [
        {
          raw: [
            `From: Sam <sam${d}@sender.example>`,
            `To: ${email}`,
            `Subject: note for day ${d}`,
            `Date: ${new Date(T0 + d * DAY).toUTCString()}`,
            `Message-ID: <day${d}.${email}>`,
            'Content-Type: text/plain; charset=utf-8',
            '',
            `day ${d} at ${email}`,
            '',
          ].join('\r\n'),
          labelIds: ['INBOX', 'UNREAD'],
          internalDate: T0 + d * DAY,
        },
      ],
    })),
  };
}

interface Setup {
  sandbox: Sandbox;
  dir: string;
  tokens: { work: string; home: string };
}

async function setup(): Promise<Setup> {
  const sandbox = await Sandbox.start({ users: [seed(WORK, [1, 3, 5]), seed(HOME, [2, 4])] });
  const dir = tempDir('mailwarden-accounts-');
  const { clientId, clientSecret } = sandbox.oauthClient;
  writeFileSync(
    join(dir, 'credentials.json'),
    JSON.stringify({ installed: { client_id: clientId, client_secret: clientSecret } }),
  );
  mkdirSync(join(dir, 'tokens'));
  const scopes = ['gmail.modify'];
  const tokens = {
    work: sandbox.issueRefreshToken(WORK, scopes),
    home: sandbox.issueRefreshToken(HOME, scopes),
  };
  for (const [name, token] of Object.entries(tokens))
    writeFileSync(join(dir, 'tokens', `${name}.json`), JSON.stringify({ refresh_token: token }));
  const entry = (name: string, alias: string, address: string, tiers: string[], isDefault: boolean) => ({
    name,
    alias,
    address,
    provider: 'gmail',
    tiers,
    default: isDefault,
    added: '2026-11-01T00:00:00.000Z',
  });
  writeFileSync(
    join(dir, 'accounts.json'),
    JSON.stringify({
      accounts: [
        entry('work', 'w', WORK, ['read', 'manage'], true),
        entry('home', 'h', HOME, ['read'], false),
      ],
    }),
  );
  return { sandbox, dir, tokens };
}

interface Outcome {
  isError: boolean;
  structured: Record<string, unknown>;
  text: string;
}

async function stdioServer(s: Setup, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: s.dir,
      MAILWARDEN_CONFIG_DIR: s.dir,
      MAILWARDEN_SANDBOX_URL: s.sandbox.url,
      ...env,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'accounts-test', version: '0' });
  await client.connect(transport);
  return {
    client,
    async call(name: string, args: Record<string, unknown> = {}): Promise<Outcome> {
      const r = await client.callTool({ name, arguments: args });
      const content = (r.content ?? []) as Array<{ text?: string }>;
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        text: content.map((c) => c.text ?? '').join('\n'),
      };
    },
  };
}

type Server = Awaited<ReturnType<typeof stdioServer>>;
/** Errors carry their envelope in the text content, not in structuredContent. */
const errorOf = (r: Outcome) => envelopeOf(r.text);

describe('one server, two accounts (built server over stdio)', () => {
  let s: Setup;
  let server: Server;
  beforeAll(async () => {
    s = await setup();
    server = await stdioServer(s);
  });
  afterAll(async () => {
    await server?.client.close();
    await s?.sandbox.close();
  });

  it('list_accounts names both with their tiers and never a token', async () => {
    const r = await server.call('list_accounts');
    expect(r.isError).toBe(false);
    expect(r.structured['accounts']).toEqual([
      {
        name: 'work',
        alias: 'w',
        address: WORK,
        provider: 'gmail',
        tiers: ['read', 'manage'],
        default: true,
        added: '2026-11-01T00:00:00.000Z',
      },
      {
        name: 'home',
        alias: 'h',
        address: HOME,
        provider: 'gmail',
        tiers: ['read'],
        default: false,
        added: '2026-11-01T00:00:00.000Z',
      },
    ]);
    expect(r.text).not.toContain(s.tokens.work);
    expect(r.text).not.toContain('sandbox-');
  });

  it('advertises `account` on mailbox tools, not on the registry tools', async () => {
    const { tools } = await server.client.listTools();
    const props = (name: string) =>
      Object.keys((tools.find((t) => t.name === name)?.inputSchema.properties ?? {}) as object);
    expect(props('search')).toContain('account');
    expect(props('get_profile')).toContain('account');
    expect(props('list_accounts')).not.toContain('account');
  });

  it('routes by name, alias or address; the default otherwise', async () => {
    const profile = async (args: Record<string, unknown>) =>
      (await server.call('get_profile', args)).structured['emailAddress'];
    expect(await profile({})).toBe(WORK);
    expect(await profile({ account: 'home' })).toBe(HOME);
    expect(await profile({ account: 'H' })).toBe(HOME);
    expect(await profile({ account: 'PAT@home.example' })).toBe(HOME);
    const unknown = await server.call('get_profile', { account: 'nope' });
    expect(errorOf(unknown)).toMatchObject({ code: 'invalid_input', field: 'account' });
    expect(errorOf(unknown).message).toContain('work, home');
  });

  it('account "all" on search merges newest first and tags each thread', async () => {
    const r = await server.call('search', { query: 'in:inbox', account: 'all' });
    expect(r.isError).toBe(false);
    const threads = r.structured['threads'] as Array<{ account: string; last: { date: string } }>;
    expect(threads.map((t) => t.account)).toEqual(['work', 'home', 'work', 'home', 'work']);
    const dates = threads.map((t) => t.last.date);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(r.structured['nextPageToken']).toBeUndefined();
    expect(r.structured['note']).toMatch(/no pageToken/);
    expect(r.structured['accounts']).toEqual([
      { account: 'work', ok: true, threads: 3 },
      { account: 'home', ok: true, threads: 2 },
    ]);
  });

  it('refuses "all" with a pageToken, and on tools that do not scan', async () => {
    const paged = await server.call('search', { account: 'all', pageToken: 'abc' });
    expect(errorOf(paged)).toMatchObject({ code: 'invalid_input', field: 'pageToken' });
    const profile = await server.call('get_profile', { account: 'all' });
    expect(errorOf(profile)).toMatchObject({ code: 'invalid_input', field: 'account' });
  });

  it('reports a failing account inline and still answers from the others', async () => {
    s.sandbox.revokeRefreshToken(s.tokens.home);
    const r = await server.call('search', { query: 'in:inbox', account: 'all' });
    expect(r.isError).toBe(false);
    const threads = r.structured['threads'] as Array<{ account: string }>;
    expect(threads.map((t) => t.account)).toEqual(['work', 'work', 'work']);
    const home = (
      r.structured['accounts'] as Array<{ account: string; ok: boolean; error?: { code: string } }>
    )[1];
    expect(home).toMatchObject({ account: 'home', ok: false, error: { code: 'needs_reauth' } });
    // Named on its own, the same account fails the call.
    expect(errorOf(await server.call('search', { account: 'home' })).code).toBe('needs_reauth');
  });
});

describe('MAILWARDEN_ACCOUNT pins a server to one account', () => {
  let s: Setup;
  let server: Server;
  beforeAll(async () => {
    s = await setup();
    server = await stdioServer(s, { MAILWARDEN_ACCOUNT: 'HOME' });
  });
  afterAll(async () => {
    await server?.client.close();
    await s?.sandbox.close();
  });

  it('serves and lists only that account', async () => {
    expect((await server.call('get_profile')).structured).toMatchObject({
      account: 'home',
      emailAddress: HOME,
    });
    const listed = (await server.call('list_accounts')).structured['accounts'] as Array<{ name: string }>;
    expect(listed.map((a) => a.name)).toEqual(['home']);
    const other = await server.call('get_profile', { account: 'work' });
    expect(errorOf(other)).toMatchObject({ code: 'invalid_input', field: 'account' });
    expect(errorOf(other).message).toContain('pinned');
  });
});

// A manage-tier write that only exists here, so per-account tiers are proven through the real
// server code path before any manage tool is settled.
const probeWrite = defineTool({
  name: 'probe_write',
  title: 'Probe',
  tier: 'manage',
  access: 'write',
  description: 'test tool',
  input: z.strictObject({}),
  output: z.object({ account: z.string() }),
  handle: (ctx) => Promise.resolve({ account: ctx.mailbox.account }),
});

describe('per-account tiers and the accounts tier (in-process runtime)', () => {
  let s: Setup;
  let built: BuiltRuntime;
  let client: LocalClient;
  beforeAll(async () => {
    s = await setup();
    built = await buildRuntime({
      demo: false,
      env: {
        HOME: s.dir,
        MAILWARDEN_CONFIG_DIR: s.dir,
        MAILWARDEN_SANDBOX_URL: s.sandbox.url,
        MAILWARDEN_TOOLS: 'read,manage,accounts',
      },
      log: { info: () => undefined, warn: () => undefined },
    });
    client = await connectLocal({ ...built.runtime, tools: [...built.runtime.tools, probeWrite] });
  });
  afterAll(async () => {
    await client?.close();
    await built?.close();
    await s?.sandbox.close();
  });

  const err = (r: { structured: unknown }) =>
    (r.structured as { error: { code: string; message: string; field?: string } }).error;

  it('refuses a write to the read-only account with forbidden_operation naming it and its tiers', async () => {
    const r = await client.call('probe_write', { account: 'home' });
    expect(r.isError).toBe(true);
    expect(err(r).code).toBe('forbidden_operation');
    expect(err(r).message).toContain('account "home" allows tiers read');
  });

  it('lets the same write through on the account that allows manage', async () => {
    const r = await client.call('probe_write', {});
    expect(r).toMatchObject({ isError: false, structured: { account: 'work' } });
  });

  it('narrows an account to what its token was granted: a manage account with a read-only grant cannot write', async () => {
    const path = join(s.dir, 'tokens', 'work.json');
    const before = readFileSync(path, 'utf8');
    writeFileSync(
      path,
      JSON.stringify({
        refresh_token: s.tokens.work,
        scopes: ['https://www.googleapis.com/auth/gmail.readonly'],
      }),
    );
    try {
      const r = await client.call('probe_write', { account: 'work' });
      expect(err(r).code).toBe('forbidden_operation');
      expect(err(r).message).toContain('account "work" allows tiers read;');
      expect((await client.call('get_profile', { account: 'work' })).isError).toBe(false);
    } finally {
      writeFileSync(path, before);
    }
  });

  it('never takes "all" for a write', async () => {
    expect(err(await client.call('probe_write', { account: 'all' }))).toMatchObject({
      code: 'invalid_input',
      field: 'account',
    });
  });

  it('add_account registers a token signed in on the machine without a new sign-in', async () => {
    // No token yet: a sign-in starts, and this client (no URL elicitation) gets its URL.
    const missing = await client.call('add_account', { name: 'spare' });
    expect(missing.structured).toMatchObject({ status: 'pending' });
    expect((missing.structured as { signInUrl: string }).signInUrl).toContain('/o/oauth2/v2/auth?');
    expect(readFileSync(join(s.dir, 'accounts.json'), 'utf8')).not.toContain('spare');
    writeFileSync(join(s.dir, 'tokens', 'spare.json'), JSON.stringify({ refresh_token: s.tokens.work }));
    const added = await client.call('add_account', { name: 'Spare', alias: 'sp', tiers: ['read'] });
    expect(added.structured).toMatchObject({
      status: 'added',
      account: { name: 'spare', alias: 'sp', address: WORK, tiers: ['read'], default: false },
    });
    const listed = (await client.call('list_accounts', {})).structured as {
      accounts: Array<{ name: string }>;
    };
    expect(listed.accounts.map((a) => a.name)).toEqual(['work', 'home', 'spare']);
    expect((await client.call('get_profile', { account: 'sp' })).structured).toMatchObject({
      account: 'spare',
    });
  });

  it('remove_account revokes the grant at Google, deletes the entry and the token file', async () => {
    const r = await client.call('remove_account', { account: 'sp' });
    expect(r.structured).toMatchObject({ removed: 'spare', tokenDeleted: true, revoked: true });
    expect((r.structured as { note?: string }).note).toBeUndefined();
    expect(existsSync(join(s.dir, 'tokens', 'spare.json'))).toBe(false);
    expect(err(await client.call('get_profile', { account: 'spare' })).code).toBe('invalid_input');
  });
});
