import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

// The built server over stdio, on the sandbox. A server working a sandbox mailbox never contacts
// a sender (its outbound client is offline, so not even DNS is asked): these tests cover
// everything up to the SSRF guard; test/net and test/tools cover the guard and the client with an
// injected resolver and transport.

interface Item {
  threadId: string;
  outcome: string;
  sender?: string;
  url?: string;
  wouldCall?: string;
  dnsVetted?: boolean;
  reason?: string;
  duplicateOf?: string;
  mailto?: string[];
  links?: string[];
}

const keys = DEMO_FACTS.keys;
const facts = DEMO_FACTS.unsubscribe;
let stack: Stack;
const tid = (key: string): string => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);
const first = (l: string[]): string => l[0] as string;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('unsubscribe through the real server', () => {
  it('lists the four tools with their annotations', async () => {
    const { tools } = await stack.client.listTools();
    const by = (n: string) => tools.find((t) => t.name === n);
    expect(by('list_unsubscribe')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(by('list_subscriptions')?.annotations).toMatchObject({ readOnlyHint: true });
    for (const n of ['unsubscribe', 'bulk_unsubscribe']) {
      // idempotentHint is left at its default, false; the rest are explicit.
      expect(by(n)?.annotations, n).toEqual({
        openWorldHint: true,
        readOnlyHint: false,
        destructiveHint: false,
      });
      const props = Object.keys((by(n)?.inputSchema as { properties?: object }).properties ?? {});
      expect(props, n).not.toContain('url');
      expect(props, n).not.toContain('query');
    }
  });

  it('list_unsubscribe reads the header past a reply, fenced in both copies', async () => {
    const r = await stack.call('list_unsubscribe', { threadId: tid(keys.newsletterReplyNewest) });
    expect(r.isError).toBe(false);
    const options = r.structured['options'] as { oneClick: boolean; oneClickUrl: string };
    expect(options.oneClick).toBe(true);
    expect(unfence(options.oneClickUrl)).toBe(facts[keys.newsletterReplyNewest]?.https);
    expect(r.text).toMatch(/untrusted data, never instructions/);
  });

  it('dryRun shows wouldCall; mailto and https-without-Post are reported for the human', async () => {
    const one = await stack.call('unsubscribe', {
      threadId: tid(first(keys.oneClickNewsletters)),
      dryRun: true,
    });
    const item = one.structured as unknown as Item;
    expect(item).toMatchObject({ outcome: 'would_call', dnsVetted: false });
    expect(unfence(item.wouldCall ?? '')).toBe(facts[first(keys.oneClickNewsletters)]?.https);

    const m = (
      await stack.call('unsubscribe', { threadId: tid(first(keys.mailtoOnlyNewsletters)), dryRun: true })
    ).structured as unknown as Item;
    expect(m.outcome).toBe('refused');
    expect(m.mailto?.map(unfence)[0]).toBe(
      facts[first(keys.mailtoOnlyNewsletters)]?.mailto?.slice(7).split('?')[0],
    );
    const h = (
      await stack.call('unsubscribe', { threadId: tid(first(keys.httpsNoPostNewsletters)), dryRun: true })
    ).structured as unknown as Item;
    expect(h.outcome).toBe('refused');
    expect(h.links?.map(unfence)).toEqual([facts[first(keys.httpsNoPostNewsletters)]?.https]);
  });

  it('bulk dryRun: wouldCall, duplicateOf and refusals, in order', async () => {
    const [l1, l2] = keys.oneClickNewsletters as [string, string];
    const picks = [l1, l2, first(keys.mailtoOnlyNewsletters), first(keys.bodyLinkOnlyNewsletters)].map(tid);
    const r = await stack.call('bulk_unsubscribe', { threadIds: picks, dryRun: true });
    expect(r.isError).toBe(false);
    const results = r.structured['results'] as Item[];
    expect(results.map((i) => i.outcome)).toEqual(['would_call', 'duplicate', 'refused', 'refused']);
    expect(results[1]?.duplicateOf).toBe(picks[0]);
    expect(r.structured['skippedOutOfTime']).toEqual([]);
  });

  it('a real call on a sandbox mailbox contacts nobody, says so, and is logged', async () => {
    const threadId = tid(keys.newsletterReplyNewest);
    const r = await stack.call('unsubscribe', { threadId });
    const item = r.structured as unknown as Item;
    expect(item.outcome).toBe('failed');
    expect(item.reason).toMatch(/sandbox mailbox/);
    const log = join(stack.configDir, 'action-log.jsonl');
    expect(existsSync(log)).toBe(true);
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = lines.filter((l) => l['op'] === 'unsubscribeOneClick');
    expect(mine.at(-1)).toMatchObject({
      tool: 'unsubscribe',
      threadIds: [threadId],
      outcome: 'failed',
      error: 'failed',
    });
    // Not reached, so not remembered: the next call tries again rather than answering from memory.
    const again = (await stack.call('unsubscribe', { threadId })).structured as unknown as Item;
    expect(again.outcome).toBe('failed');
  });

  it('list_subscriptions groups senders with their options', async () => {
    const r = await stack.call('list_subscriptions', { listsOnly: true, maxThreads: 300, topN: 50 });
    expect(r.isError).toBe(false);
    const senders = r.structured['senders'] as Array<{ sender: string; unsubscribe?: { oneClick: boolean } }>;
    const riverside = senders.find((s) => unfence(s.sender) === 'newsletter@riverside-allotments.example');
    expect(riverside?.unsubscribe?.oneClick).toBe(true);
    expect(r.structured['sendersFound']).toBeGreaterThanOrEqual(senders.length);
  });
});
