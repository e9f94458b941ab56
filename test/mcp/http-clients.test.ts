import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenHash } from '../../src/policy/clients.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli-run.js';
import { envelopeOf } from '../helpers/envelope.js';
import type { Envelope } from '../helpers/envelope.js';
import { startHttp } from '../helpers/interop.js';
import type { HttpProcess } from '../helpers/interop.js';
import { startPostgres } from '../helpers/postgres.js';
import { accountsIntoPostgres } from '../helpers/pg-accounts.js';
import { startBalancer } from '../../src/sandbox/balancer.js';
import type { Balancer } from '../../src/sandbox/balancer.js';
import { MAIN, writeTestPolicy } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * One bearer token per client (clients.json), end to end: `mailwarden clients add` run as a user
 * runs it, `mailwarden http` over real loopback HTTP in front of the sandbox with two accounts,
 * and the MCP SDK client. Client "a" may use the account work, client "b" the account home; a
 * third, "r", reads work only. Whatever "a" sends, home never answers and is never named.
 */

const WORK = 'pat@work.example';
const HOME = 'kim@home.example';
const ENV_TOKEN = 'env-token-0123456789abcdef0123456789abcdef';
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 9);
const ALL_TIERS = 'read,manage,filters,drafts';

/** Threads on days of their own per mailbox, so no message id of one mailbox exists in the other. */
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

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

let sandbox: Sandbox;
let dir = '';
let server: HttpProcess;
/** The environment every server process of this file runs with (one config dir). */
let serverEnv: Record<string, string> = {};
const tokens: Record<string, string> = {};

function cli(args: string[], extraEnv: Record<string, string> = {}): Ran {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    input: '',
    timeout: 30_000,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir, ...extraEnv },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function addClient(name: string, accounts: string, tiers: string): string {
  const r = cli(['clients', 'add', name, '--accounts', accounts, '--tiers', tiers]);
  expect(r.code, r.stderr).toBe(0);
  const token = r.stdout.trim();
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return token;
}

const clients: Client[] = [];
/** `stateless`: pin the 2026-07-28 protocol, whose requests any replica may answer. */
async function connect(token: string, url: string = server.url, stateless = false): Promise<Client> {
  const client = new Client(
    { name: 'clients-test', version: '0' },
    stateless ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

interface Outcome {
  isError: boolean;
  /** Everything the client received, as text: searched for names it must never see. */
  raw: string;
  structured: Record<string, unknown>;
  error?: Envelope;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as Array<{ type: string; text?: string }>;
  const text = content.map((c) => c.text ?? '').join('\n');
  return {
    isError: r.isError === true,
    raw: JSON.stringify(r),
    structured: (r.structuredContent ?? {}) as Record<string, unknown>,
    ...(r.isError === true ? { error: envelopeOf(text) } : {}),
  };
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [seed(WORK, [1, 3, 5]), seed(HOME, [20, 22])] });
  dir = tempDir('mailwarden-clients-');
  const { clientId, clientSecret } = sandbox.oauthClient;
  writeFileSync(
    join(dir, 'credentials.json'),
    JSON.stringify({ installed: { client_id: clientId, client_secret: clientSecret } }),
  );
  mkdirSync(join(dir, 'tokens'));
  const scopes = ['gmail.modify', 'gmail.settings.basic', 'gmail.compose'];
  writeFileSync(
    join(dir, 'tokens', 'work.json'),
    JSON.stringify({ refresh_token: sandbox.issueRefreshToken(WORK, scopes) }),
  );
  writeFileSync(
    join(dir, 'tokens', 'home.json'),
    JSON.stringify({ refresh_token: sandbox.issueRefreshToken(HOME, scopes) }),
  );
  const entry = (name: string, alias: string, address: string, isDefault: boolean) => ({
    name,
    alias,
    address,
    provider: 'gmail',
    tiers: ALL_TIERS.split(','),
    default: isDefault,
    added: '2026-11-01T00:00:00.000Z',
  });
  writeFileSync(
    join(dir, 'accounts.json'),
    JSON.stringify({ accounts: [entry('work', 'w', WORK, false), entry('home', 'h', HOME, true)] }),
  );
  writeTestPolicy(dir, undefined);
  const downloads = join(dir, 'downloads');
  mkdirSync(downloads);
  tokens['a'] = addClient('a', 'work', ALL_TIERS);
  tokens['b'] = addClient('b', 'h', ALL_TIERS);
  tokens['r'] = addClient('r', 'w', 'read');
  serverEnv = {
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_SANDBOX_URL: sandbox.url,
    MAILWARDEN_TOOLS: ALL_TIERS,
    MAILWARDEN_TOKEN: ENV_TOKEN,
    MAILWARDEN_DOWNLOAD_DIR: downloads,
  };
  server = await startHttp(serverEnv);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await server?.stop();
  await sandbox?.close();
});

/** Words that would give client a away that home exists. */
const HOME_NAMES = ['home', HOME, 'kim@'];
function expectNoHome(o: Outcome): void {
  for (const w of HOME_NAMES) expect(o.raw.toLowerCase(), `names "${w}"`).not.toContain(w.toLowerCase());
}

describe('clients add', () => {
  it('stores the token only as its SHA-256, in a 0600 file', () => {
    const bytes = readFileSync(join(dir, 'clients.json'));
    for (const t of Object.values(tokens)) {
      expect(bytes.includes(Buffer.from(t))).toBe(false);
      expect(bytes.toString('utf8')).toContain(tokenHash(t));
    }
    expect(statSync(join(dir, 'clients.json')).mode & 0o777).toBe(0o600);
    const list = cli(['clients', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('a  accounts work  tiers read,manage,filters,drafts');
    expect(list.stdout).toContain('b  accounts home');
    for (const t of Object.values(tokens)) {
      expect(list.stdout).not.toContain(t);
      expect(list.stdout).not.toContain(tokenHash(t));
    }
  });

  it('refuses an unknown account, an unknown tier, a taken name and a bad name with exit 2, changing nothing', () => {
    const before = readFileSync(join(dir, 'clients.json'), 'utf8');
    const cases: Array<[string[], string]> = [
      [['clients', 'add', 'c', '--accounts', 'work,nowhere'], 'no account "nowhere"'],
      [['clients', 'add', 'c', '--accounts', 'work', '--tiers', 'read,accounts'], '--tiers must be'],
      [['clients', 'add', 'a', '--accounts', 'work'], 'a client named "a" exists'],
      [['clients', 'add', 'Bad/Name', '--accounts', 'work'], 'NAME: "Bad/Name"'],
      [['clients', 'add', 'c'], '--accounts is required'],
      [['clients', 'add', 'c', '--acounts', 'work'], "'--acounts'"],
      [['clients', 'remove', 'nobody'], 'no client "nobody"'],
    ];
    for (const [args, says] of cases) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stdout).toBe('');
    }
    expect(readFileSync(join(dir, 'clients.json'), 'utf8')).toBe(before);
  });

  it('six `clients add` at the same moment all land, and six removes take out exactly those', async () => {
    const env = { HOME: dir, MAILWARDEN_CONFIG_DIR: dir };
    const names = ['race1', 'race2', 'race3', 'race4', 'race5', 'race6'];
    const names0 = (): string[] =>
      (
        JSON.parse(readFileSync(join(dir, 'clients.json'), 'utf8')) as { clients: Array<{ name: string }> }
      ).clients.map((c) => c.name);
    const before = names0();
    const added = await Promise.all(
      names.map((n) => runCli(['clients', 'add', n, '--accounts', 'work'], env)),
    );
    for (const r of added) expect(r.code, r.err).toBe(0);
    expect(names0()).toEqual(expect.arrayContaining([...before, ...names]));
    expect(names0()).toHaveLength(before.length + names.length);
    const removed = await Promise.all(names.map((n) => runCli(['clients', 'remove', n], env)));
    for (const r of removed) expect(r.code, r.err).toBe(0);
    expect(names0()).toEqual(before);
  });
});

describe('over HTTP, each token is its client', () => {
  it('an unknown token gets 401', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens['a']}x`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('list_accounts shows a client only its own accounts, with its tiers; MAILWARDEN_TOKEN still sees every account', async () => {
    const a = await call(await connect(tokens['a'] as string), 'list_accounts', {});
    expect((a.structured['accounts'] as Array<{ name: string }>).map((x) => x.name)).toEqual(['work']);
    expectNoHome(a);
    const r = await call(await connect(tokens['r'] as string), 'list_accounts', {});
    expect(r.structured['accounts']).toEqual([
      expect.objectContaining({ name: 'work', tiers: ['read'], default: true }),
    ]);
    const env = await call(await connect(ENV_TOKEN), 'list_accounts', {});
    expect((env.structured['accounts'] as Array<{ name: string }>).map((x) => x.name)).toEqual([
      'work',
      'home',
    ]);
  });

  it("tools/list follows the client's tiers", async () => {
    const names = async (token: string) =>
      (await (await connect(token)).listTools()).tools.map((t) => t.name);
    const a = await names(tokens['a'] as string);
    const r = await names(tokens['r'] as string);
    expect(a).toEqual(expect.arrayContaining(['search', 'archive', 'create_filter', 'create_draft']));
    expect(r).toContain('search');
    for (const t of ['archive', 'create_filter', 'create_draft', 'add_account', 'remove_account'])
      expect(r).not.toContain(t);
    // No client of clients.json gets the accounts tier (it changes the registry).
    expect(a).not.toContain('add_account');
  });

  it('a tool outside the client\u2019s tiers cannot be called either, and changes nothing', async () => {
    const r = await connect(tokens['r'] as string);
    const found = await call(r, 'search', { query: 'in:inbox' });
    const threads = found.structured['threads'] as Array<{ threadId: string }>;
    const id = threads[0]?.threadId as string;
    const refused = await r.callTool({ name: 'archive', arguments: { threadIds: [id] } }).then(
      (res) => res.isError === true,
      () => true,
    );
    expect(refused).toBe(true);
    const after = await call(r, 'search', { query: 'in:inbox' });
    expect((after.structured['threads'] as unknown[]).length).toBe(threads.length);
  });
});

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  minItems?: number;
};

/** Ids of one message and its thread, of either mailbox. */
interface Ids {
  messageId: string;
  threadId: string;
}

/** A value each field accepts: ids where the field holds an id, else the simplest allowed value. */
function sample(schema: Schema, key: string, ids: Ids): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt !== undefined) return sample(alt.find((s) => s.type !== 'null') ?? (alt[0] as Schema), key, ids);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (/^messageIds?$/.test(key)) return ids.messageId;
      if (/^threadIds?$/.test(key)) return ids.threadId;
      return key === 'query' ? 'in:inbox' : 'x';
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () =>
        sample(schema.items ?? {}, key, ids),
      );
    default: {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(schema.properties ?? {}))
        if ((schema.required ?? []).includes(k)) out[k] = sample(s, k, ids);
      return out;
    }
  }
}
const ID_KEYS = new Set(['messageId', 'messageIds', 'threadId', 'threadIds']);

/** The id fields a tool takes, in the order tried. */
function idForms(tool: { inputSchema: unknown }): string[] {
  return Object.keys((tool.inputSchema as Schema).properties ?? {}).filter((k) => ID_KEYS.has(k));
}

/**
 * A whole call's arguments: the required fields, and the id form `idKey` (by default the first
 * the tool takes, so tools that want exactly one id form get one).
 */
function argsFor(
  tool: { name: string; inputSchema: unknown },
  ids: Ids,
  idKey?: string,
): Record<string, unknown> {
  const schema = tool.inputSchema as Schema;
  const args = sample(schema, '', ids) as Record<string, unknown>;
  const key = idKey ?? idForms(tool).find((k) => args[k] !== undefined) ?? idForms(tool)[0];
  if (key !== undefined) {
    for (const k of ID_KEYS) if (k !== key && !(schema.required ?? []).includes(k)) delete args[k];
    args[key] = sample(schema.properties?.[key] ?? {}, key, ids);
  }
  // Fields whose check is more than their type can say: a value that passes it.
  const fixed: Record<string, Record<string, unknown>> = {
    what_changed: { historyId: '1' },
    snooze: { until: '2030-01-01' },
    modify_labels: { add: ['STARRED'] },
    create_draft: { to: ['someone@elsewhere.example'] },
    read_attachment: { filename: 'x.pdf' },
    download_attachment: { filename: 'x.pdf' },
    undo_bulk_modify: {
      plan: {
        kind: 'mailwarden.undo',
        version: 1,
        account: 'work',
        createdAt: '2026-11-01T00:00:00.000Z',
        query: 'in:inbox',
        labels: {},
        groups: [{ add: ['INBOX'], remove: [], messageIds: [ids.messageId] }],
      },
    },
  };
  return { ...args, ...fixed[tool.name] };
}

// Once against one server, once through a real HAProxy in front of three replicas on the same
// config dir: each request may land on any replica, and each must scope it the same way.
describe.each(['one server', 'three replicas behind a load balancer'] as const)(
  'client a cannot see or touch client b\u2019s account, through any tool (%s)',
  (front) => {
    let a: Client;
    let tools: Array<{ name: string; inputSchema: unknown }>;
    let homeIds: Ids;
    let workIds: Ids;
    let url = '';
    let lb: Balancer | undefined;
    const replicas: HttpProcess[] = [];

    beforeAll(async () => {
      url = server.url;
      if (front !== 'one server') {
        for (let i = 0; i < 2; i++) replicas.push(await startHttp(serverEnv));
        lb = await startBalancer([server.url, ...replicas.map((r) => r.url)]);
        url = lb.plainUrl;
      }
      a = await connect(tokens['a'] as string, url, lb !== undefined);
      tools = (await a.listTools()).tools;
      const b = await connect(tokens['b'] as string, url, lb !== undefined);
      const ids = async (c: Client): Promise<Ids> => {
        const found = await call(c, 'search', { query: 'in:inbox', maxResults: 1 });
        const t = (
          found.structured['threads'] as Array<{ threadId: string; last: { messageId: string } }>
        )[0];
        return { threadId: t?.threadId as string, messageId: t?.last.messageId as string };
      };
      homeIds = await ids(b);
      workIds = await ids(a);
    });

    it('finds the tools to try', () => {
      expect(tools.length).toBeGreaterThan(30);
      expect(homeIds.messageId).not.toBe(workIds.messageId);
    });

    it('naming the account (name, alias or address) answers not_found, as for an account that does not exist', async () => {
      const tried: string[] = [];
      for (const tool of tools) {
        const schema = tool.inputSchema as Schema;
        if (schema.properties?.['account'] === undefined) continue;
        for (const ref of ['home', 'h', HOME]) {
          const o = await call(a, tool.name, { ...argsFor(tool, workIds), account: ref });
          expect(o.error?.code, `${tool.name} account ${ref}: ${o.raw}`).toBe('not_found');
          const nowhere = await call(a, tool.name, { ...argsFor(tool, workIds), account: 'nowhere' });
          expect(nowhere.error?.code).toBe('not_found');
          expect(o.error?.message.replace(ref, 'nowhere')).toBe(nowhere.error?.message);
          expectNoHome({ ...o, raw: o.raw.split(ref).join('') });
        }
        tried.push(tool.name);
      }
      expect(tried.length).toBeGreaterThan(30);
    });

    it('account "all" works only the client\u2019s accounts', async () => {
      const fan = tools.filter((t) => JSON.stringify(t.inputSchema).includes('\\"all\\": every account'));
      expect(fan.length).toBeGreaterThan(0);
      for (const tool of fan) {
        const o = await call(a, tool.name, { ...argsFor(tool, workIds), account: 'all' });
        expect(o.raw).toContain('work');
        expectNoHome(o);
      }
    });

    it('an id of b\u2019s account answers not_found, naming neither b\u2019s account nor its mail', async () => {
      const withIds = tools.flatMap((t) => idForms(t).map((k) => [t, k] as const));
      expect(new Set(withIds.map(([t]) => t.name)).size).toBeGreaterThan(10);
      const problems: string[] = [];
      for (const [tool, key] of withIds) {
        const o = await call(a, tool.name, argsFor(tool, homeIds, key));
        const failed = o.error?.code ?? JSON.stringify(o.structured).match(/not_found/)?.[0];
        if (failed !== 'not_found') problems.push(`${tool.name} ${key}: ${o.raw.slice(0, 300)}`);
        expectNoHome(o);
        expect(o.raw).not.toContain('day 20');
      }
      expect(problems).toEqual([]);
      // b's mailbox is as it was: still unread, still in the inbox.
      const b = await connect(tokens['b'] as string, url, lb !== undefined);
      const still = await call(b, 'search', { query: 'in:inbox is:unread' });
      expect((still.structured['threads'] as unknown[]).length).toBe(2);
    });

    if (front !== 'one server')
      it('every replica answered part of the walk', async () => {
        const served = (await (lb as Balancer).served()).slice(0, 3);
        expect(
          served.every((n) => n > 10),
          served.join(', '),
        ).toBe(true);
      });

    afterAll(async () => {
      await lb?.close();
      await Promise.all(replicas.map((r) => r.stop()));
    });
  },
);

/** The client `mailwarden log --json` names on each item of the thread's moves. */
function loggedClients(shown: Ran, threadId: string): Array<string | undefined> {
  expect(shown.code, shown.stderr).toBe(0);
  const view = JSON.parse(shown.stdout) as {
    calls: Array<{ items: Array<{ ids: string[]; client?: string }> }>;
  };
  return view.calls
    .flatMap((c) => c.items)
    .filter((i) => i.ids.includes(threadId))
    .map((i) => i.client);
}

describe('the action log', () => {
  it('records which client made each write', async () => {
    const a = await connect(tokens['a'] as string);
    const found = await call(a, 'search', { query: 'in:inbox', maxResults: 1 });
    const id = (found.structured['threads'] as Array<{ threadId: string }>)[0]?.threadId as string;
    const done = await call(a, 'archive', { threadIds: [id] });
    expect(done.isError, done.raw).toBe(false);
    const lines = readFileSync(join(dir, 'action-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = lines.filter(
      (l) => l['tool'] === 'archive' && (l['threadIds'] as string[] | undefined)?.includes(id),
    );
    expect(mine.map((l) => [l['client'], l['account'], l['outcome']])).toEqual([
      ['a', 'work', 'pending'],
      ['a', 'work', 'ok'],
    ]);
    // The write policy's move records of that call name the client too.
    const moves = lines.filter((l) => l['kind'] === 'move' && (l['ids'] as string[]).includes(id));
    expect(moves.map((l) => [l['client'], l['account'], l['actor'], l['outcome']])).toEqual([
      ['a', 'work', 'agent', 'pending'],
      ['a', 'work', 'agent', 'moved'],
    ]);
    expect(loggedClients(cli(['log', '--json', '--account', 'work']), id)).toEqual(['a']);
  });

  it('records the client in the state database too (MAILWARDEN_STATE=postgres://…): move records and the mailbox’s own', async () => {
    const cluster = await startPostgres();
    let pgServer: HttpProcess | undefined;
    try {
      // With a state database the server reads its accounts and their sealed tokens there.
      const passphrase = 'http clients test passphrase';
      await accountsIntoPostgres(dir, cluster.url, passphrase);
      pgServer = await startHttp({
        HOME: dir,
        MAILWARDEN_CONFIG_DIR: dir,
        MAILWARDEN_SANDBOX_URL: sandbox.url,
        MAILWARDEN_TOOLS: ALL_TIERS,
        MAILWARDEN_TOKEN: ENV_TOKEN,
        MAILWARDEN_STATE: cluster.url,
        MAILWARDEN_KEYSTORE: 'off',
        MAILWARDEN_TOKEN_PASSPHRASE: passphrase,
      });
      const a = await connect(tokens['a'] as string, pgServer.url);
      const found = await call(a, 'search', { query: 'in:inbox', maxResults: 1 });
      const id = (found.structured['threads'] as Array<{ threadId: string }>)[0]?.threadId as string;
      const done = await call(a, 'archive', { threadIds: [id] });
      expect(done.isError, done.raw).toBe(false);
      const db = new pg.Client({ connectionString: cluster.url });
      await db.connect();
      let rows: Array<Record<string, unknown>>;
      try {
        rows = (
          await db.query<{ record: Record<string, unknown> }>(
            'SELECT record FROM mailwarden_action_log ORDER BY id',
          )
        ).rows.map((r) => r.record);
      } finally {
        await db.end();
      }
      const named = (l: Record<string, unknown>): boolean =>
        ((l['ids'] ?? l['threadIds']) as string[] | undefined)?.includes(id) === true;
      expect(
        rows.filter(named).map((l) => [l['client'], l['account'], l['kind'] ?? l['op'], l['outcome']]),
      ).toEqual([
        ['a', 'work', 'move', 'pending'],
        ['a', 'work', 'modifyThread', 'pending'],
        ['a', 'work', 'modifyThread', 'ok'],
        ['a', 'work', 'move', 'moved'],
      ]);
      const shown = cli(['log', '--json', '--account', 'work'], { MAILWARDEN_STATE: cluster.url });
      expect(loggedClients(shown, id)).toEqual(['a']);
    } finally {
      await pgServer?.stop();
      await cluster.close();
    }
  }, 120_000);
});

describe('tokens and sessions', () => {
  const post = (token: string, body: unknown, session?: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
      },
      body: JSON.stringify(body),
    });

  it("a 2025-11-25 session opened with a's token is unknown to b's", async () => {
    const init = await post(tokens['a'] as string, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const session = init.headers.get('mcp-session-id') as string;
    expect(session).toMatch(/\S/);
    await init.text();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const asB = await post(tokens['b'] as string, list, session);
    expect(asB.status).toBe(404);
    await asB.text();
    const asA = await post(tokens['a'] as string, list, session);
    expect(asA.status).toBe(200);
    expect(await asA.text()).toContain('"archive"');
  });

  it('`clients remove` stops the token on the next request, with no restart', async () => {
    const before = await call(await connect(tokens['r'] as string), 'get_profile', {});
    expect(before.structured['emailAddress']).toBe(WORK);
    const r = cli(['clients', 'remove', 'r']);
    expect(r.code, r.stderr).toBe(0);
    const init = await post(tokens['r'] as string, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    expect(init.status).toBe(401);
    expect(readFileSync(join(dir, 'clients.json'), 'utf8')).not.toContain('"r"');
  });
});

describe('starting with clients.json', () => {
  function start(files: Record<string, string>, env: Record<string, string> = {}): Ran {
    const own = tempDir('mailwarden-clients-start-');
    for (const [name, text] of Object.entries(files)) writeFileSync(join(own, name), text, { mode: 0o600 });
    const r = spawnSync(process.execPath, [MAIN, 'http', '--port', '0'], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: process.env['PATH'] ?? '', HOME: own, MAILWARDEN_CONFIG_DIR: own, ...env },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('a clients.json with a mistake stops the start, naming the field', () => {
    const text = JSON.stringify({
      clients: [{ name: 'a', tokenSha256: tokenHash('t'), accounts: ['default'], tiers: ['read', 'admin'] }],
    });
    const r = start({ 'clients.json': text }, { MAILWARDEN_TOKEN: ENV_TOKEN });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('clients[0].tiers[1] is "admin"; allowed: read, manage, filters, drafts');
    expect(r.stderr).not.toContain('MCP over Streamable HTTP at');
  });

  it('refuses MAILWARDEN_ALLOW_NO_TOKEN=1 beside clients.json', () => {
    const text = JSON.stringify({
      clients: [{ name: 'a', tokenSha256: tokenHash('t'), accounts: ['default'], tiers: ['read'] }],
    });
    const r = start({ 'clients.json': text }, { MAILWARDEN_ALLOW_NO_TOKEN: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('MAILWARDEN_ALLOW_NO_TOKEN=1 and');
    expect(r.stderr).toContain('Unset MAILWARDEN_ALLOW_NO_TOKEN, or remove clients.json');
  });
});
