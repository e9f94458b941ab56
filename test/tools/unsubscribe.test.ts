import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/mail/clock.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import type { LocalClient } from '../../src/mcp/local-client.js';
import type { ServerRuntime } from '../../src/mcp/server.js';
import { unfence } from '../../src/mcp/untrusted.js';
import { createOutbound } from '../../src/net/outbound.js';
import type { Resolver } from '../../src/net/resolver.js';
import type { HttpsTransport, PinnedRequest, PinnedResponse } from '../../src/net/transport.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { tiersFromEnv } from '../../src/policy/tiers.js';
import { GmailMailbox } from '../../src/providers/gmail/mailbox.js';
import { loopbackTransport } from '../../src/providers/gmail/transport.js';
import { DEMO_ADDRESS, DEMO_FACTS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { ALL_TOOLS } from '../../src/tools/index.js';
import { tempDir } from '../helpers/temp.js';

// The real tools through an in-process MCP client, on the demo mailbox, with the one thing that
// would leave the machine (DNS and HTTPS) replaced by an injected resolver and transport.

interface Item {
  threadId: string;
  outcome: string;
  sender?: string;
  url?: string;
  wouldCall?: string;
  dnsVetted?: boolean;
  status?: number;
  reason?: string;
  duplicateOf?: string;
  previous?: { at: string; threadId: string; status?: number };
  mailto?: string[];
  links?: string[];
}

const keys = DEMO_FACTS.keys;
const facts = DEMO_FACTS.unsubscribe;
const PUBLIC = '93.184.216.34';

let sandbox: Sandbox;
let dir: string;
let clock: ManualClock;
let asked: string[];
let sent: PinnedRequest[];
/** Per-host answers for the next requests (default 200). */
let answer: (req: PinnedRequest) => PinnedResponse;
let dnsTable: Record<string, string[]>;

const resolver: Resolver = {
  resolve(hostname) {
    asked.push(hostname);
    return Promise.resolve({ v4: dnsTable[hostname] ?? [PUBLIC], v6: [] });
  },
};
/** Milliseconds the endpoint takes to answer. */
let delay: number;
const transport: HttpsTransport = {
  async send(req) {
    sent.push(req);
    if (delay > 0) await new Promise((ok) => setTimeout(ok, delay));
    return answer(req);
  },
};

async function client(
  logPath = join(dir, `log-${Math.random()}.jsonl`),
): Promise<{ c: LocalClient; log: string }> {
  const mailbox = new GmailMailbox({
    account: 'test',
    credentials: { ...sandbox.oauthClient, refreshToken: sandbox.refreshTokenFor(DEMO_ADDRESS) },
    tiers: tiersFromEnv({}),
    transport: loopbackTransport(sandbox.url),
  });
  const runtime: ServerRuntime = {
    tools: ALL_TOOLS,
    tiers: tiersFromEnv({}),
    mailbox: () => Promise.resolve(mailbox),
    actionLog: new ActionLog(logPath),
    clock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
    outbound: createOutbound({ resolver, transport }),
  };
  return { c: await connectLocal(runtime), log: logPath };
}

const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);
const first = (list: string[]): string => list[0] as string;

async function call<T>(c: LocalClient, tool: string, args: Record<string, unknown>): Promise<T> {
  const r = await c.call(tool, args);
  if (r.isError) throw new Error(r.text);
  return r.structured as T;
}

function logLines(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return (
    readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      // Confirmation answers are logged too (src/mcp/confirm.ts); these tests count the requests.
      .filter((l) => l['op'] !== 'confirm')
  );
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
  dir = tempDir('mailwarden-unsub-');
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  clock = new ManualClock(Date.now());
  asked = [];
  sent = [];
  answer = () => ({ status: 200 });
  dnsTable = {};
  delay = 0;
});

describe('unsubscribe', () => {
  it('POSTs exactly the one-click body to the header URL of the newest message carrying it, once per sender', async () => {
    const { c, log } = await client();
    const key = keys.newsletterReplyNewest;
    const r = await call<Item>(c, 'unsubscribe', { threadId: tid(key) });
    expect(r).toMatchObject({ outcome: 'unsubscribed', status: 200, dnsVetted: true });
    expect(unfence(r.url ?? '')).toBe(facts[key]?.https);
    expect(unfence(r.sender ?? '')).toBe('newsletter@riverside-allotments.example');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', body: 'List-Unsubscribe=One-Click', address: PUBLIC });
    expect(sent[0]?.url.href).toBe(facts[key]?.https);

    const again = await call<Item>(c, 'unsubscribe', { threadId: tid(key) });
    expect(again).toMatchObject({
      outcome: 'already_requested',
      previous: { threadId: tid(key), status: 200 },
    });
    expect(sent).toHaveLength(1);
    const forced = await call<Item>(c, 'unsubscribe', { threadId: tid(key), force: true });
    expect(forced.outcome).toBe('unsubscribed');
    expect(sent).toHaveLength(2);

    const lines = logLines(log);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      account: 'test',
      tool: 'unsubscribe',
      op: 'unsubscribeOneClick',
      threadIds: [tid(key)],
      outcome: 'ok',
      detail: { url: facts[key]?.https, status: 200, sender: 'newsletter@riverside-allotments.example' },
    });
    await c.close();
  });

  it('reports mailto-only and https-without-Post for the human and calls nothing', async () => {
    const { c, log } = await client();
    const m = await call<Item>(c, 'unsubscribe', { threadId: tid(first(keys.mailtoOnlyNewsletters)) });
    expect(m.outcome).toBe('refused');
    expect(m.reason).toMatch(/List-Unsubscribe-Post/);
    expect(m.mailto?.map(unfence)).toEqual([
      facts[first(keys.mailtoOnlyNewsletters)]?.mailto?.slice(7).split('?')[0],
    ]);
    const h = await call<Item>(c, 'unsubscribe', { threadId: tid(first(keys.httpsNoPostNewsletters)) });
    expect(h.outcome).toBe('refused');
    expect(h.links?.map(unfence)).toContain(facts[first(keys.httpsNoPostNewsletters)]?.https);
    const b = await call<Item>(c, 'unsubscribe', { threadId: tid(first(keys.bodyLinkOnlyNewsletters)) });
    expect(b).toMatchObject({ outcome: 'refused' });
    expect(b.reason).toMatch(/no message in the thread has a List-Unsubscribe header/);
    expect(sent).toHaveLength(0);
    expect(asked).toHaveLength(0);
    expect(logLines(log).map((l) => [l['outcome'], l['error']])).toEqual([
      ['failed', 'refused'],
      ['failed', 'refused'],
      ['failed', 'refused'],
    ]);
    await c.close();
  });

  it('dryRun shows wouldCall without DNS, a request or an action-log line', async () => {
    const { c, log } = await client();
    const key = first(keys.oneClickNewsletters);
    const r = await call<Item>(c, 'unsubscribe', { threadId: tid(key), dryRun: true });
    expect(r).toMatchObject({ outcome: 'would_call', dnsVetted: false });
    expect(unfence(r.wouldCall ?? '')).toBe(facts[key]?.https);
    expect(asked).toEqual([]);
    expect(sent).toEqual([]);
    expect(existsSync(log)).toBe(false);
    await c.close();
  });

  it('refuses a sender whose DNS answers include a private address, and does not remember it', async () => {
    const { c } = await client();
    const key = first(keys.oneClickNewsletters);
    dnsTable[new URL(facts[key]?.https ?? '').hostname] = [PUBLIC, '10.1.2.3'];
    const r = await call<Item>(c, 'unsubscribe', { threadId: tid(key) });
    expect(r.outcome).toBe('refused');
    expect(r.reason).toMatch(/10\.1\.2\.3 is private-use/);
    expect(sent).toHaveLength(0);
    dnsTable = {};
    expect((await call<Item>(c, 'unsubscribe', { threadId: tid(key) })).outcome).toBe('unsubscribed');
    await c.close();
  });

  it('refuses a redirect to cloud metadata, and remembers that the endpoint was reached', async () => {
    const { c } = await client();
    const key = keys.oneClickNewsletters[3] as string;
    dnsTable['metadata.attacker.example'] = ['169.254.169.254'];
    answer = () => ({ status: 307, location: 'https://metadata.attacker.example/latest/meta-data' });
    const r = await call<Item>(c, 'unsubscribe', { threadId: tid(key) });
    expect(r).toMatchObject({ outcome: 'refused', redirects: 1 });
    expect(r.reason).toMatch(/169\.254\.169\.254 is link-local/);
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(r)).not.toContain('metadata.attacker');
    expect((await call<Item>(c, 'unsubscribe', { threadId: tid(key) })).outcome).toBe('already_requested');
    await c.close();
  });

  it('two calls at once for the same sender make one request', async () => {
    const { c } = await client();
    delay = 100;
    const threadId = tid('nl-bakes-1');
    const both = await Promise.all([
      call<Item>(c, 'unsubscribe', { threadId }),
      call<Item>(c, 'unsubscribe', { threadId, force: true }),
    ]);
    expect(both.map((i) => i.outcome).sort()).toEqual(['already_requested', 'unsubscribed']);
    expect(sent).toHaveLength(1);
    await c.close();
  });

  it('takes a threadId, never a URL', async () => {
    const { c } = await client();
    const r = await c.call('unsubscribe', {
      threadId: tid(first(keys.oneClickNewsletters)),
      url: 'https://evil.example/',
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/invalid_input/);
    expect(sent).toHaveLength(0);
    await c.close();
  });

  it('stops before any request when the action log cannot be written', async () => {
    // A regular file where the log's directory should be.
    const blocker = join(dir, 'not-a-dir');
    writeFileSync(blocker, '');
    const { c } = await client(join(blocker, 'action-log.jsonl'));
    const r = await c.call('unsubscribe', { threadId: tid(first(keys.oneClickNewsletters)) });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/internal_error/);
    expect(sent).toHaveLength(0);
    await c.close();
  });
});

describe('bulk_unsubscribe', () => {
  it('dryRun: wouldCall for one-click threads, duplicateOf for a second thread of the same sender, reasons for the rest', async () => {
    const { c } = await client();
    const [l1, l2] = keys.oneClickNewsletters as [string, string];
    expect(facts[l1]?.https).toBe(facts[l2]?.https);
    const picks = [
      l1,
      l2,
      keys.newsletterReplyNewest,
      first(keys.mailtoOnlyNewsletters),
      first(keys.httpsNoPostNewsletters),
      first(keys.bodyLinkOnlyNewsletters),
    ];
    const r = await call<{ results: Item[]; skippedOutOfTime: string[]; called: number }>(
      c,
      'bulk_unsubscribe',
      {
        threadIds: picks.map(tid),
        dryRun: true,
      },
    );
    expect(r.results.map((i) => i.outcome)).toEqual([
      'would_call',
      'duplicate',
      'would_call',
      'refused',
      'refused',
      'refused',
    ]);
    expect(r.results[1]?.duplicateOf).toBe(tid(l1));
    expect(unfence(r.results[2]?.wouldCall ?? '')).toBe(facts[keys.newsletterReplyNewest]?.https);
    expect(r.skippedOutOfTime).toEqual([]);
    expect(sent).toEqual([]);
    expect(asked).toEqual([]);
    await c.close();
  });

  it('calls each sender once, in order, and logs every attempt', async () => {
    const { c, log } = await client();
    const [l1, l2] = keys.oneClickNewsletters as [string, string];
    const r = await call<{ results: Item[]; called: number }>(c, 'bulk_unsubscribe', {
      threadIds: [tid(l1), tid(l2), tid(keys.newsletterReplyNewest)],
    });
    expect(r.results.map((i) => i.outcome)).toEqual(['unsubscribed', 'duplicate', 'unsubscribed']);
    expect(r.called).toBe(2);
    expect(sent.map((s) => s.url.href)).toEqual([facts[l1]?.https, facts[keys.newsletterReplyNewest]?.https]);
    expect(logLines(log).map((l) => l['tool'])).toEqual(['bulk_unsubscribe', 'bulk_unsubscribe']);
    await c.close();
  });

  it('a first attempt that never reached the endpoint does not make the next thread of that sender a duplicate', async () => {
    const { c, log } = await client();
    const [l1, l2] = keys.oneClickNewsletters as [string, string];
    let failures = 1;
    answer = () => {
      if (failures-- > 0) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return { status: 200 };
    };
    const r = await call<{ results: Item[]; called: number }>(c, 'bulk_unsubscribe', {
      threadIds: [tid(l1), tid(l2)],
    });
    expect(r.results.map((i) => i.outcome)).toEqual(['failed', 'unsubscribed']);
    expect(r.results[1]?.duplicateOf).toBeUndefined();
    expect(sent.map((s) => s.url.href)).toEqual([facts[l1]?.https, facts[l2]?.https]);
    expect(logLines(log).map((l) => l['outcome'])).toEqual(['failed', 'ok']);
    await c.close();
  });

  it('stops at the 60 s budget and lists what it did not reach', async () => {
    const { c } = await client();
    answer = () => {
      clock.advance(35_000);
      return { status: 200 };
    };
    const picks = ['nl-bakes-1', 'nl-devdigest-1', 'promo-7', 'promo-9'].map(tid);
    const r = await call<{ results: Item[]; skippedOutOfTime: string[] }>(c, 'bulk_unsubscribe', {
      threadIds: picks,
    });
    expect(r.results.map((i) => i.outcome)).toEqual(['unsubscribed', 'unsubscribed']);
    expect(r.skippedOutOfTime).toEqual(picks.slice(2));
    await c.close();
  });

  it('takes at most 25 thread ids and no query', async () => {
    const { c } = await client();
    const many = await c.call('bulk_unsubscribe', {
      threadIds: Array.from({ length: 26 }, (_, i) => `t${i}`),
    });
    expect(many.isError).toBe(true);
    const query = await c.call('bulk_unsubscribe', { query: 'from:news' });
    expect(query.isError).toBe(true);
    await c.close();
  });
});
