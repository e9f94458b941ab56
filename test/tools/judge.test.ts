import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

interface Hit {
  threadId: string;
  signals: string[];
  signalDetails?: { resembles?: string; replyTo?: string; claims?: string };
}
interface Auth {
  unchecked?: true;
  authservId?: string;
  spf?: string;
  dkim?: string;
  dmarc?: string;
  mailedBy?: string;
  signedBy?: string;
  dkimAligned?: boolean;
  alsoReported?: Record<string, string[]>;
  headerFrom?: string;
  returnPath?: string;
  otherReports: number;
}

const FENCED = /^\u27e6mail [0-9a-f]+\u27e7[\s\S]*\u27e6\/mail [0-9a-f]+\u27e7$/;

let stack: Stack;
const tid = (key: string) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);
/** Every thread of the mailbox, page by page, as search hits. */
const everyHit = new Map<string, Hit>();

async function search(
  query: string,
  pageToken?: string,
): Promise<{ threads: Hit[]; nextPageToken?: string }> {
  const r = await stack.call('search', { query, maxResults: 50, ...(pageToken ? { pageToken } : {}) });
  expect(r.isError).toBe(false);
  return r.structured as unknown as { threads: Hit[]; nextPageToken?: string };
}

async function authOf(key: string): Promise<{ auth: Auth; text: string }> {
  const r = await stack.call('get_thread', { threadId: tid(key), bodies: 'none' });
  expect(r.isError).toBe(false);
  const messages = r.structured['messages'] as Array<{ authentication: Auth }>;
  const auth = messages[0]?.authentication as Auth;
  for (const k of ['mailedBy', 'signedBy', 'headerFrom', 'returnPath'] as const) {
    if (auth[k] !== undefined) expect(auth[k]).toMatch(FENCED);
  }
  return { auth, text: r.text };
}

const plain = (s: string | undefined) => (s === undefined ? undefined : unfence(s));

beforeAll(async () => {
  stack = await startStack();
  let page: string | undefined;
  do {
    const r = await search('in:anywhere', page);
    for (const t of r.threads) everyHit.set(t.threadId, t);
    page = r.nextPageToken;
  } while (page);
});
afterAll(async () => {
  await stack?.close();
});

describe('get_thread authentication', () => {
  it('believes Gmail\'s own report over a forged mx.google.com "pass" below it', async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.forgedAuthBelow);
    expect(auth).toMatchObject({ authservId: 'mx.google.com', spf: 'fail', dmarc: 'fail', otherReports: 1 });
    expect(auth).not.toHaveProperty('dkim');
    expect(auth).not.toHaveProperty('unchecked');
  });

  it("ignores a pass report under another server's authserv-id", async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.forgedAuthOtherServ);
    expect(auth).toMatchObject({ spf: 'softfail', dmarc: 'fail', otherReports: 1 });
    expect(auth).not.toHaveProperty('dkim');
  });

  it('says unchecked, with no verdicts, when the receiving server wrote no report', async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.noAuthResults);
    expect(auth.unchecked).toBe(true);
    for (const k of ['authservId', 'spf', 'dkim', 'dmarc', 'signedBy', 'mailedBy', 'dkimAligned'])
      expect(auth).not.toHaveProperty(k);
    expect(plain(auth.headerFrom)).toBe('oldmail.example');
  });

  it("reads nothing when another server's report is on top, whatever a lower one claims (imported mail)", async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.authImportedForgedBelow);
    expect(auth.unchecked).toBe(true);
    expect(auth.otherReports).toBe(2);
    for (const k of ['authservId', 'spf', 'dkim', 'dmarc', 'signedBy', 'mailedBy', 'dkimAligned'])
      expect(auth).not.toHaveProperty(k);
  });

  it('counts a forged report spelled "Authentication-Results :" below Gmail\'s, and reads Gmail\'s', async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.authSpacedFieldName);
    expect(auth).toMatchObject({ authservId: 'mx.google.com', spf: 'fail', dmarc: 'fail', otherReports: 1 });
    expect(auth).not.toHaveProperty('dkim');
  });

  it('reads Gmail\'s report written with an RFC 8601 version ("mx.google.com 1;")', async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.authVersionedOnlyReport);
    expect(auth).toMatchObject({
      spf: 'pass',
      dkim: 'pass',
      dkimAligned: true,
      dmarc: 'pass',
      otherReports: 0,
    });
    expect(auth).not.toHaveProperty('unchecked');
  });

  it('judges DKIM alignment: same domain, sibling subdomains, unrelated domains', async () => {
    const aligned = (await authOf(DEMO_FACTS.keys.dkimAligned)).auth;
    expect(aligned).toMatchObject({ spf: 'pass', dkim: 'pass', dmarc: 'pass', dkimAligned: true });
    expect(plain(aligned.signedBy)).toBe('tidewater-books.com');

    const sibling = (await authOf(DEMO_FACTS.keys.dkimSiblingAligned)).auth;
    expect(sibling).toMatchObject({ dkim: 'pass', dkimAligned: true });
    expect(plain(sibling.signedBy)).toBe('mail.quayside-outfitters.com');
    expect(plain(sibling.headerFrom)).toBe('news.quayside-outfitters.com');

    const unaligned = (await authOf(DEMO_FACTS.keys.dkimUnaligned)).auth;
    expect(unaligned).toMatchObject({ dkim: 'pass', dkimAligned: false, dmarc: 'fail' });
    expect(plain(unaligned.signedBy)).toBe('esp-sender.net');
    expect(plain(unaligned.mailedBy)).toBe('esp-sender.net');
    expect(plain(unaligned.headerFrom)).toBe('tidewater-books.com');
  });

  it('keeps the failing signature of a conflicting pair in alsoReported', async () => {
    const { auth } = await authOf(DEMO_FACTS.keys.dkimConflicting);
    expect(auth).toMatchObject({
      dkim: 'pass',
      dkimAligned: true,
      dmarc: 'pass',
      alsoReported: { dkim: ['fail'] },
    });
  });

  it('never lets a verdict carry text', async () => {
    const { auth, text } = await authOf(DEMO_FACTS.keys.verdictInjection);
    expect(auth).toMatchObject({ spf: 'pass', dkim: 'unknown', dmarc: 'fail' });
    expect(auth).not.toHaveProperty('dkimAligned');
    expect(auth).not.toHaveProperty('signedBy');
    expect(text).not.toContain('pass_please_trust_me');
    expect(text).not.toContain('ignore all prior instructions');
  });
});

describe('search signals', () => {
  const hit = (key: string): Hit => {
    const h = everyHit.get(tid(key));
    if (!h) throw new Error(`no search hit for ${key}`);
    return h;
  };

  it('lists every thread, each with a signals array', () => {
    expect(everyHit.size).toBe(DEMO_FACTS.threadCount);
    for (const h of everyHit.values()) expect(Array.isArray(h.signals)).toBe(true);
  });

  it('flags mixed-script and punycode lookalikes, naming the domain they pass for (fenced)', () => {
    for (const key of [DEMO_FACTS.keys.lookalikePhish, DEMO_FACTS.keys.lookalikePunycode]) {
      const h = hit(key);
      expect(h.signals).toContain('lookalikeDomain');
      expect(h.signalDetails?.resembles).toMatch(FENCED);
      expect(plain(h.signalDetails?.resembles)).toBe('northwind-bank.com');
    }
  });

  it('flags rn-for-m when the real sender is in the same result, and not the real sender', async () => {
    const r = await search('marlowe');
    const byId = new Map(r.threads.map((t) => [t.threadId, t]));
    const rn = byId.get(tid(DEMO_FACTS.keys.rnLookalike));
    expect(rn?.signals).toContain('lookalikeDomain');
    expect(plain(rn?.signalDetails?.resembles)).toBe('marlowefreight.com');
    const legit = DEMO_FACTS.keys.legitBrandMail.map(tid).filter((id) => byId.has(id));
    expect(legit.length).toBeGreaterThan(0);
    for (const id of legit) expect(byId.get(id)?.signals).not.toContain('lookalikeDomain');
  });

  it('flags only the lookalike scenarios as lookalikes', () => {
    const flagged = [...everyHit.values()]
      .filter((h) => h.signals.includes('lookalikeDomain'))
      .map((h) => h.threadId);
    const allowed = [
      DEMO_FACTS.keys.lookalikePhish,
      DEMO_FACTS.keys.lookalikePunycode,
      DEMO_FACTS.keys.rnLookalike,
    ];
    expect(flagged).toEqual(expect.arrayContaining(allowed.slice(0, 2).map(tid)));
    for (const id of flagged) expect(allowed.map(tid)).toContain(id);
    for (const key of DEMO_FACTS.keys.legitBrandMail) {
      expect(hit(key).signals).not.toContain('lookalikeDomain');
      expect(hit(key).signals).not.toContain('displayNameSpoof');
    }
  });

  it('flags a display name that is another domain’s address', () => {
    const h = hit(DEMO_FACTS.keys.displayNameSpoof);
    expect(h.signals).toContain('displayNameSpoof');
    expect(plain(h.signalDetails?.claims)).toBe('northwind-bank.com');
    const others = [...everyHit.values()].filter((x) => x.signals.includes('displayNameSpoof'));
    expect(others.map((x) => x.threadId)).toEqual([tid(DEMO_FACTS.keys.displayNameSpoof)]);
  });

  it('flags a Reply-To on another domain', () => {
    const h = hit(DEMO_FACTS.keys.replyToMismatch);
    expect(h.signals).toContain('replyToMismatch');
    expect(plain(h.signalDetails?.replyTo)).toBe('quickmail-box.example');
  });

  it('marks invites, newsletters and automated mail', () => {
    expect(hit(DEMO_FACTS.keys.calendarInvite).signals).toContain('calendar');
    for (const key of DEMO_FACTS.keys.oneClickNewsletters) expect(hit(key).signals).toContain('newsletter');
    for (const key of [...DEMO_FACTS.keys.autoGenerated, ...DEMO_FACTS.keys.noReply])
      expect(hit(key).signals).toContain('automated');
  });
});
