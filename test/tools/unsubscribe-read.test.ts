import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/mail/clock.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import type { LocalClient } from '../../src/mcp/local-client.js';
import { unfence } from '../../src/mcp/untrusted.js';
import { offlineOutbound } from '../../src/net/outbound.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { tiersFromEnv } from '../../src/policy/tiers.js';
import { GmailMailbox } from '../../src/providers/gmail/mailbox.js';
import { loopbackTransport } from '../../src/providers/gmail/transport.js';
import { DEMO_ADDRESS, DEMO_FACTS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { ALL_TOOLS } from '../../src/tools/index.js';
import { tempDir } from '../helpers/temp.js';

interface Options {
  oneClick: boolean;
  oneClickUrl?: string;
  notOneClickBecause?: string;
  https: Array<{ url: string; host?: string }>;
  http: Array<{ url: string; host?: string }>;
  mailto: Array<{ address: string; subject?: string }>;
}
interface ListOut {
  threadId: string;
  source: 'header' | 'body' | 'none';
  messageId?: string;
  from?: string;
  newerMessagesWithoutHeader?: number;
  options?: Options;
  bodyCandidates: Array<{ url: string; text: string }>;
}
interface Sender {
  sender: string;
  threads: number;
  unreadThreads: number;
  firstDate: string;
  lastDate: string;
  newestThreadId: string;
  unsubscribeThreadId?: string;
  unsubscribe?: Options;
}
interface SubsOut {
  senders: Sender[];
  sendersFound: number;
  threadsScanned: number;
  moreThreadsMatched: boolean;
  usage: { requests: number; quotaUnits: number };
}

const keys = DEMO_FACTS.keys;
const facts = DEMO_FACTS.unsubscribe;
let sandbox: Sandbox;
let c: LocalClient;
const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);
const mailtoAddress = (uri: string | undefined): string =>
  (uri ?? '').slice('mailto:'.length).split('?')[0] ?? '';

async function call<T>(tool: string, args: Record<string, unknown>): Promise<T> {
  const r = await c.call(tool, args);
  if (r.isError) throw new Error(r.text);
  return r.structured as T;
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
  const mailbox = new GmailMailbox({
    account: 'test',
    credentials: { ...sandbox.oauthClient, refreshToken: sandbox.refreshTokenFor(DEMO_ADDRESS) },
    tiers: tiersFromEnv({}),
    transport: loopbackTransport(sandbox.url),
  });
  c = await connectLocal({
    tools: ALL_TOOLS,
    tiers: tiersFromEnv({}),
    mailbox: () => Promise.resolve(mailbox),
    actionLog: new ActionLog(join(tempDir('mailwarden-unsub-read-'), 'log.jsonl')),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
    outbound: offlineOutbound('test'),
  });
});
afterAll(async () => {
  await c?.close();
  await sandbox?.close();
});

describe('list_unsubscribe on the demo corpus', () => {
  it("finds a newsletter's header on the older message when a person's reply is the newest", async () => {
    const key = keys.newsletterReplyNewest;
    const r = await call<ListOut>('list_unsubscribe', { threadId: tid(key) });
    expect(r.source).toBe('header');
    expect(r.newerMessagesWithoutHeader).toBe(2);
    expect(r.options?.oneClick).toBe(true);
    expect(unfence(r.options?.oneClickUrl ?? '')).toBe(facts[key]?.https);
    expect(r.options?.mailto.map((m) => unfence(m.address))).toEqual([mailtoAddress(facts[key]?.mailto)]);
    expect(r.from).toMatch(/^\u27E6mail [0-9a-f]+\u27E7.*riverside-allotments/);
  });

  it('every one-click newsletter is callable at its fact URL', async () => {
    for (const key of keys.oneClickNewsletters) {
      const r = await call<ListOut>('list_unsubscribe', { threadId: tid(key) });
      expect(r.options?.oneClick, key).toBe(true);
      expect(unfence(r.options?.oneClickUrl ?? ''), key).toBe(facts[key]?.https);
    }
  });

  it('mailto-only and https-without-Post are reported, not callable', async () => {
    for (const key of keys.mailtoOnlyNewsletters) {
      const r = await call<ListOut>('list_unsubscribe', { threadId: tid(key) });
      expect(r.options?.oneClick, key).toBe(false);
      expect(r.options?.https, key).toEqual([]);
      expect(
        r.options?.mailto.map((m) => unfence(m.address)),
        key,
      ).toEqual([mailtoAddress(facts[key]?.mailto)]);
    }
    const citsci = await call<ListOut>('list_unsubscribe', { threadId: tid('nl-citsci-1') });
    expect(unfence(citsci.options?.mailto[0]?.subject ?? '')).toBe('unsubscribe weekly');
    for (const key of keys.httpsNoPostNewsletters) {
      const r = await call<ListOut>('list_unsubscribe', { threadId: tid(key) });
      expect(r.options?.oneClick, key).toBe(false);
      expect(r.options?.notOneClickBecause, key).toMatch(/List-Unsubscribe-Post/);
      expect(
        r.options?.https.map((u) => unfence(u.url)),
        key,
      ).toEqual([facts[key]?.https]);
    }
  });

  it('body-link-only newsletters give bodyCandidates, fenced', async () => {
    for (const key of keys.bodyLinkOnlyNewsletters) {
      const r = await call<ListOut>('list_unsubscribe', { threadId: tid(key) });
      expect(r.source, key).toBe('body');
      expect(r.options, key).toBeUndefined();
      expect(
        r.bodyCandidates.map((b) => unfence(b.url)),
        key,
      ).toContain(facts[key]?.bodyLink);
      for (const b of r.bodyCandidates) expect(b.url).not.toBe(unfence(b.url));
    }
  });

  it('a conversation has nothing to offer', async () => {
    const r = await call<ListOut>('list_unsubscribe', { threadId: tid(keys.longQuoted) });
    expect(r).toMatchObject({ source: 'none', bodyCandidates: [] });
  });
});

describe('list_subscriptions', () => {
  it("groups a sender's threads with counts, date range and one set of options", async () => {
    const ledger = keys.oneClickNewsletters.filter((k) => k.startsWith('nl-ledger'));
    const r = await call<SubsOut>('list_subscriptions', {
      query: 'from:briefing@news.morningledger.example',
      maxThreads: 50,
    });
    expect(r.sendersFound).toBe(1);
    const s = r.senders[0] as Sender;
    expect(unfence(s.sender)).toBe('briefing@news.morningledger.example');
    expect(s.threads).toBe(ledger.length);
    expect(s.unsubscribe?.oneClick).toBe(true);
    expect(ledger.map(tid)).toContain(s.unsubscribeThreadId);
    expect(Date.parse(s.firstDate)).toBeLessThanOrEqual(Date.parse(s.lastDate));
    // One search request plus one metadata read per thread: no second pass per sender.
    expect(r.usage.requests).toBe(1 + r.threadsScanned);
  });

  it('counts senders before the topN cut and respects maxThreads', async () => {
    const r = await call<SubsOut>('list_subscriptions', { maxThreads: 60, topN: 3 });
    expect(r.senders).toHaveLength(3);
    expect(r.sendersFound).toBeGreaterThan(3);
    expect(r.threadsScanned).toBeLessThanOrEqual(60);
    expect(r.moreThreadsMatched).toBe(true);
    const counts = r.senders.map((s) => s.threads);
    expect([...counts].sort((a, b) => b - a)).toEqual(counts);
  });

  it('listsOnly keeps senders whose mail carries List-Unsubscribe', async () => {
    const r = await call<SubsOut>('list_subscriptions', { listsOnly: true, topN: 100, maxThreads: 500 });
    expect(r.senders.length).toBeGreaterThan(0);
    for (const s of r.senders) expect(s.unsubscribe).toBeDefined();
    const riverside = r.senders.find((s) => unfence(s.sender) === 'newsletter@riverside-allotments.example');
    expect(riverside?.unsubscribe?.oneClick).toBe(true);
  });
});

describe('tools/list', () => {
  it('marks the read tools read-only and the unsubscribe tools open-world, not idempotent', async () => {
    const tools = (await c.listTools()) as Array<{ name: string; annotations?: Record<string, unknown> }>;
    const by = (n: string) => tools.find((t) => t.name === n)?.annotations;
    expect(by('list_unsubscribe')).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(by('list_subscriptions')).toMatchObject({ readOnlyHint: true });
    for (const n of ['unsubscribe', 'bulk_unsubscribe'])
      expect(by(n), n).toEqual({ readOnlyHint: false, openWorldHint: true, destructiveHint: false });
  });
});
