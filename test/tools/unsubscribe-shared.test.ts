import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/mail/clock.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import type { LocalClient } from '../../src/mcp/local-client.js';
import type { ServerRuntime } from '../../src/mcp/server.js';
import { unfence } from '../../src/mcp/untrusted.js';
import { createOutbound } from '../../src/net/outbound.js';
import type { Resolver } from '../../src/net/resolver.js';
import type { HttpsTransport, PinnedRequest } from '../../src/net/transport.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { tiersFromEnv } from '../../src/policy/tiers.js';
import { GmailMailbox } from '../../src/providers/gmail/mailbox.js';
import { loopbackTransport } from '../../src/providers/gmail/transport.js';
import { DEMO_ADDRESS, DEMO_FACTS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { CLAIM_LEASE_MS, openStateDb, pgSentLedger } from '../../src/store/pg/index.js';
import type { StateDb } from '../../src/store/pg/index.js';
import { ALL_TOOLS } from '../../src/tools/index.js';
import { startPostgres } from '../helpers/postgres.js';
import type { PgCluster } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/*
 * The one-click unsubscribe ledger shared through PostgreSQL (src/store/pg/sent-ledger.ts). Two
 * servers stand for two replicas: each a real MCP server in this process with its own pool on one
 * database, on the demo mailbox in the sandbox. The replica processes of test/mcp/replicas.test.ts
 * work a sandbox mailbox, whose outbound client refuses every request (src/cli/runtime.ts), so the
 * one thing that would leave the machine, DNS and HTTPS, is injected here instead, shared by both.
 */

interface Item {
  threadId: string;
  outcome: string;
  url?: string;
  sender?: string;
  reason?: string;
  previous?: { at: string; threadId: string; status?: number };
}

const keys = DEMO_FACTS.keys;
const facts = DEMO_FACTS.unsubscribe;
const PUBLIC = '93.184.216.34';

let sandbox: Sandbox;
let cluster: PgCluster;
let url: string;
const dbs: StateDb[] = [];
let sent: PinnedRequest[];
let delay: number;

const resolver: Resolver = { resolve: () => Promise.resolve({ v4: [PUBLIC], v6: [] }) };
const transport: HttpsTransport = {
  async send(req) {
    sent.push(req);
    if (delay > 0) await new Promise((ok) => setTimeout(ok, delay));
    return { status: 200 };
  },
};

async function db(): Promise<StateDb> {
  const d = await openStateDb(url);
  dbs.push(d);
  return d;
}

/** One "replica": a server of its own with its own pool on the shared database. */
async function replica(account = 'test'): Promise<LocalClient> {
  const mailbox = new GmailMailbox({
    account,
    credentials: { ...sandbox.oauthClient, refreshToken: sandbox.refreshTokenFor(DEMO_ADDRESS) },
    tiers: tiersFromEnv({}),
    transport: loopbackTransport(sandbox.url),
  });
  const runtime: ServerRuntime = {
    tools: ALL_TOOLS,
    tiers: tiersFromEnv({}),
    mailbox: () => Promise.resolve(mailbox),
    actionLog: new ActionLog(`${tempDir('mailwarden-unsub-shared-')}/action-log.jsonl`),
    clock: new ManualClock(Date.now()),
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
    outbound: createOutbound({ resolver, transport, ledger: pgSentLedger(await db()) }),
  };
  return connectLocal(runtime);
}

const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);

async function call(c: LocalClient, tool: string, args: Record<string, unknown>): Promise<Item> {
  const r = await c.call(tool, args);
  if (r.isError) throw new Error(r.text);
  return r.structured as unknown as Item;
}

async function rows(sql: string): Promise<Array<Record<string, unknown>>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  [sandbox, cluster] = await Promise.all([Sandbox.start({ users: [demoCorpus()] }), startPostgres()]);
  url = cluster.url;
}, 120_000);
afterAll(async () => {
  for (const d of dbs.splice(0)) await d.close();
  await sandbox?.close();
  await cluster?.close();
});
beforeEach(() => {
  sent = [];
  delay = 0;
});

describe('the unsubscribe ledger on PostgreSQL', () => {
  it('a request made through one replica is already_requested through the other', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const key = keys.newsletterReplyNewest;
    const first = await call(a, 'unsubscribe', { threadId: tid(key) });
    expect(first.outcome).toBe('unsubscribed');
    expect(sent).toHaveLength(1);

    const again = await call(b, 'unsubscribe', { threadId: tid(key) });
    expect(again).toMatchObject({
      outcome: 'already_requested',
      previous: { threadId: tid(key), status: 200 },
    });
    expect(unfence(again.url ?? '')).toBe(facts[key]?.https);
    // bulk_unsubscribe reads the same ledger.
    const bulk = (await b.call('bulk_unsubscribe', { threadIds: [tid(key)] })).structured as {
      results: Item[];
    };
    expect(bulk.results.map((i) => i.outcome)).toEqual(['already_requested']);
    expect(sent).toHaveLength(1);

    // force repeats it, and the ledger then answers with the newer request.
    const forced = await call(b, 'unsubscribe', { threadId: tid(key), force: true });
    expect(forced.outcome).toBe('unsubscribed');
    expect(sent).toHaveLength(2);
    const later = await call(a, 'unsubscribe', { threadId: tid(key) });
    const made = await rows(
      "SELECT at FROM mailwarden_unsubscribe_ledger WHERE sender = 'newsletter@riverside-allotments.example' ORDER BY id",
    );
    expect(made).toHaveLength(2);
    expect(later.previous?.at).toBe((made[1]?.['at'] as Date).toISOString());
    await Promise.all([a.close(), b.close()]);
  });

  it('two replicas racing one sender make one request; the other says it is under way or made', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const key = 'nl-bakes-1';
    delay = 400;
    const both = await Promise.all([
      call(a, 'unsubscribe', { threadId: tid(key) }),
      call(b, 'unsubscribe', { threadId: tid(key) }),
    ]);
    expect(sent).toHaveLength(1);
    expect(both.map((i) => i.outcome).sort()).toEqual(['already_requested', 'unsubscribed']);
    // Nothing is left claimed once the request is done.
    expect(await rows('SELECT * FROM mailwarden_unsubscribe_claims')).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it("one account's request does not answer for another account's", async () => {
    const [a, work] = await Promise.all([replica(), replica('work')]);
    const key = 'nl-devdigest-1';
    expect((await call(a, 'unsubscribe', { threadId: tid(key) })).outcome).toBe('unsubscribed');
    expect((await call(work, 'unsubscribe', { threadId: tid(key) })).outcome).toBe('unsubscribed');
    expect(sent).toHaveLength(2);
    await Promise.all([a.close(), work.close()]);
  });

  it('keeps the sender, URL, time, thread id and status of each request, nothing else', async () => {
    const columns = await rows(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'mailwarden_unsubscribe_ledger' ORDER BY ordinal_position",
    );
    expect(columns.map((c) => c['column_name'])).toEqual([
      'id',
      'account',
      'sender',
      'url',
      'at',
      'thread_id',
      'status',
    ]);
    const kept = await rows(
      "SELECT account, sender, url, thread_id, status FROM mailwarden_unsubscribe_ledger WHERE account = 'work'",
    );
    const key = 'nl-devdigest-1';
    expect(kept).toEqual([
      {
        account: 'work',
        sender: expect.stringMatching(/@/) as unknown,
        url: facts[key]?.https,
        thread_id: tid(key),
        status: 200,
      },
    ]);
  });

  it('a claim whose holder never released it blocks others until its lease ends', async () => {
    const [one, two] = [pgSentLedger(await db()), pgSentLedger(await db())];
    const held = await one.claim('lease', 'someone@example.org', 'https://example.org/u');
    expect(held).toBeDefined();
    // The same sender with another URL, or the same URL: both are under way.
    expect(await two.claim('lease', 'someone@example.org', 'https://example.org/other')).toBeUndefined();
    expect(await two.claim('lease', '', 'https://example.org/u')).toBeUndefined();
    // Another account is not blocked.
    const elsewhere = await two.claim('lease-2', 'someone@example.org', 'https://example.org/u');
    expect(elsewhere).toBeDefined();
    await elsewhere?.();
    // The holder died: once its claim is older than the lease, another replica takes it over, and
    // the dead holder's late release leaves the new claim alone.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(
      "UPDATE mailwarden_unsubscribe_claims SET claimed_at = now() - make_interval(secs => $1::double precision / 1000 + 1) WHERE account = 'lease'",
      [CLAIM_LEASE_MS],
    );
    await c.end();
    const taken = await two.claim('lease', 'someone@example.org', 'https://example.org/u');
    expect(taken).toBeDefined();
    await held?.();
    expect(await one.claim('lease', 'someone@example.org', 'https://example.org/u')).toBeUndefined();
    await taken?.();
    expect(await one.claim('lease', 'someone@example.org', 'https://example.org/u')).toBeDefined();
  });
});
