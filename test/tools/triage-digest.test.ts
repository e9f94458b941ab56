/**
 * triage_digest end to end on the demo corpus: every count is compared with one this file works
 * out itself from the seed's RFC 822 sources and labels, or with the corpus's known answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import {
  DEFAULT_NOW,
  DEMO_ADDRESS,
  DEMO_FACTS,
  USER_LABELS,
  demoCorpus,
} from '../../src/sandbox/corpus/index.js';
import type { SandboxStats, SeedMessage, SeedThread } from '../../src/sandbox/index.js';
import { anyHas, header, headerAll, lastOf } from '../sandbox/corpus/helpers.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

/** The message's own (top-level) Content-Type can hide parts; an embedded message's does not count. */
const topLevelHides = (raw: string): boolean =>
  /^Content-Type:\s*multipart\/(mixed|report)/im.test(raw.split(/\r?\n\r?\n/, 1)[0] ?? '');

interface Bucket {
  threads: number;
  unread: number;
  examples: string[];
}
interface Digest {
  threads: number;
  moreThreadsMatched: boolean;
  asOf: string;
  unread: { threads: number; examples: string[] };
  attachments: { threads: number; examples: string[] };
  signals: Record<string, Bucket>;
  ages: Record<'today' | 'thisWeek' | 'thisMonth' | 'older', Bucket>;
  labels: Array<Bucket & { label: string }>;
  senders: Array<Bucket & { address: string; name: string; signals: Record<string, number> }>;
  sendersFound: number;
  verification: { predicates: string[]; indexHits: number; dropped: number };
  notJudged: { gone: number; partsNotRead: number };
  usage: { requests: number; quotaUnits: number };
}

const DAY = 86_400_000;
const seed = demoCorpus();
let stack: Stack;
const tid = (key: string) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);
const ids = (keys: readonly string[]) => keys.map(tid).sort();

async function digest(args: Record<string, unknown>): Promise<Digest> {
  const r = await stack.call('triage_digest', args);
  expect(r.isError, r.text).toBe(false);
  return r.structured as unknown as Digest;
}

const received = (t: SeedThread): SeedMessage[] => t.messages.filter((m) => !m.labelIds.includes('SENT'));
/** RFC 2369 / 2919 list headers or a bulk Precedence on the message that started the thread. */
function isNewsletter(t: SeedThread): boolean {
  const first = received(t)[0];
  if (!first) return false;
  return (
    header(first.raw, 'List-Id') !== undefined ||
    header(first.raw, 'List-Unsubscribe') !== undefined ||
    /^(bulk|list|junk)/i.test(header(first.raw, 'Precedence') ?? '')
  );
}
const hasAttachment = (t: SeedThread): boolean =>
  t.messages.some(
    (m) =>
      /Content-Disposition:\s*attachment/i.test(m.raw) ||
      /^Content-Type:\s*(text\/calendar|message\/|image\/|application\/)/im.test(m.raw),
  );
const inInbox = (t: SeedThread): boolean => anyHas(t, 'INBOX');

beforeAll(async () => {
  stack = await startStack({
    sandbox: { staleThreadIndex: true },
    env: { MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC' },
  });
  // With the tools listed, the SDK client checks every result against its output schema.
  await stack.client.listTools();
});
afterAll(async () => {
  await stack?.close();
});

describe('triage_digest over the whole mailbox (in:anywhere)', () => {
  let d: Digest;
  let cost: SandboxStats;
  beforeAll(async () => {
    stack.sandbox.resetStats();
    d = await digest({ query: 'in:anywhere', maxThreads: 500 });
    cost = stack.sandbox.stats();
  });

  it('judges every thread, reading parts only where the top-level type can hide them', () => {
    expect(d.threads).toBe(DEMO_FACTS.threadCount);
    expect(d.moreThreadsMatched).toBe(false);
    expect(d.notJudged).toEqual({ gone: 0, partsNotRead: 0 });
    const hidden = seed.threads.filter((t) => t.messages.some((m) => topLevelHides(m.raw))).length;
    // One list page, one metadata read per thread, one full read per thread with a hidden tree
    // (API calls: the metadata reads travel in batch requests of 50).
    expect(cost.byMethod['threads.list']?.requests).toBe(1);
    expect(cost.byMethod['threads.get']?.apiCalls).toBe(DEMO_FACTS.threadCount + hidden);
    expect(cost.byMethod['batch']?.requests).toBe(Math.ceil(DEMO_FACTS.threadCount / 50));
    expect(d.usage.quotaUnits).toBe(cost.quotaUnits);
  });

  it('counts newsletters, attachments and unread threads as the seed has them', () => {
    expect(d.signals['newsletter']?.threads).toBe(seed.threads.filter(isNewsletter).length);
    expect(d.attachments.threads).toBe(seed.threads.filter(hasAttachment).length);
    expect(d.unread.threads).toBe(seed.threads.filter((t) => anyHas(t, 'UNREAD')).length);
  });

  it('names every calendar, spoofing and lookalike thread the corpus planted', () => {
    const k = DEMO_FACTS.keys;
    const sig = (name: string) => [...(d.signals[name]?.examples ?? [])].sort();
    expect(sig('calendar')).toEqual(ids([k.calendarInvite, k.calendarUpdate, k.calendarCancel]));
    expect(sig('lookalikeDomain')).toEqual(ids([k.lookalikePhish, k.lookalikePunycode, k.rnLookalike]));
    expect(sig('displayNameSpoof')).toEqual(ids([k.displayNameSpoof]));
    expect(sig('replyToMismatch')).toContain(tid(k.replyToMismatch));
    const replyTos = seed.threads.filter((t) =>
      received(t).some((m) => headerAll(m.raw, 'Reply-To').length > 0),
    );
    expect(d.signals['replyToMismatch']?.threads).toBe(replyTos.length);
  });

  it('buckets labels by name, with the corpus label counts', () => {
    const byName = new Map(d.labels.map((l) => [unfence(l.label), l.threads]));
    for (const l of USER_LABELS) expect(byName.get(l.name), l.name).toBe(DEMO_FACTS.labelThreadCounts[l.id]);
    expect(byName.get('SPAM')).toBe(DEMO_FACTS.spamThreadCount);
    expect(byName.get('TRASH')).toBe(DEMO_FACTS.trashThreadCount);
    expect(byName.get('INBOX')).toBe(DEMO_FACTS.inboxThreadCount);
    expect(byName.has('UNREAD')).toBe(false);
  });

  it('buckets ages by the newest message against the server clock', () => {
    const now = Date.parse(d.asOf);
    expect(Math.abs(now - DEFAULT_NOW)).toBeLessThan(60_000);
    const ages = { today: 0, thisWeek: 0, thisMonth: 0, older: 0 };
    for (const t of seed.threads) {
      const age = now - lastOf(t).internalDate;
      ages[age < DAY ? 'today' : age < 7 * DAY ? 'thisWeek' : age < 30 * DAY ? 'thisMonth' : 'older']++;
    }
    expect({
      today: d.ages.today.threads,
      thisWeek: d.ages.thisWeek.threads,
      thisMonth: d.ages.thisMonth.threads,
      older: d.ages.older.threads,
    }).toEqual(ages);
  });

  it('ranks senders by threads, fenced, with at most 3 examples per bucket', () => {
    const top = d.senders[0];
    expect(top).toBeDefined();
    expect(unfence(top?.address ?? '')).toBe('notifications@gitforge.example');
    expect(top?.name).not.toBe(unfence(top?.name ?? ''));
    const gitforge = seed.threads.filter((t) =>
      /notifications@gitforge\.example/.test(header(received(t)[0]?.raw ?? '', 'From') ?? ''),
    );
    expect(top?.threads).toBe(gitforge.length);
    for (const b of [...Object.values(d.signals), ...Object.values(d.ages), ...d.labels, ...d.senders])
      expect(b.examples.length).toBeLessThanOrEqual(3);
  });
});

describe('triage_digest on the inbox', () => {
  it('defaults to in:inbox and counts unread threads on live labels', async () => {
    const d = await digest({});
    expect(d.threads).toBe(DEMO_FACTS.inboxThreadCount);
    expect(d.unread.threads).toBe(DEMO_FACTS.unreadInboxThreadCount);
    expect(d.senders).toHaveLength(10);
    expect(d.sendersFound).toBe(new Set(seed.threads.filter(inInbox).map((t) => senderOf(t))).size);
  });

  it('drops what a stale index calls unread, and counts only live unread threads', async () => {
    const d = await digest({ query: 'in:inbox is:unread' });
    expect(d.verification.predicates).toContain('is:unread');
    expect(d.verification.dropped).toBe(DEMO_FACTS.staleUnreadKeys.length);
    expect(d.threads).toBe(DEMO_FACTS.unreadInboxThreadCount);
    expect(d.unread.threads).toBe(DEMO_FACTS.unreadInboxThreadCount);
  });

  it('with readParts false reads headers only and says what it could not judge', async () => {
    stack.sandbox.resetStats();
    const d = await digest({ readParts: false });
    const hidden = seed.threads.filter(
      (t) => inInbox(t) && t.messages.some((m) => topLevelHides(m.raw)),
    ).length;
    expect(d.notJudged.partsNotRead).toBe(hidden);
    expect(stack.sandbox.stats().byMethod['threads.get']?.apiCalls).toBe(DEMO_FACTS.inboxThreadCount);
    expect(d.signals['calendar']?.threads).toBe(0);
  });

  it('refuses account "all" (a digest is one mailbox) and a bad query, naming the field', async () => {
    const all = await stack.call('triage_digest', { account: 'all' });
    expect(all.isError).toBe(true);
    expect(all.error).toMatchObject({ code: 'invalid_input', field: 'account' });
    const bad = await stack.call('triage_digest', { query: 'older_than:soon' });
    expect(bad.isError).toBe(true);
    expect(bad.error).toMatchObject({ code: 'invalid_input' });
  });
});

function senderOf(t: SeedThread): string {
  const m = received(t)[0] ?? t.messages[0];
  const from = header(m?.raw ?? '', 'From') ?? '';
  return (/<([^>]+)>/.exec(from)?.[1] ?? from).trim().toLowerCase();
}
