import type { LocalClient } from '../mcp/local-client.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../sandbox/corpus/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { call, show } from './kit.js';

/* A step of `mailwarden demo`: it prints for a person, so console output is the point. */

interface Options {
  oneClick: boolean;
  oneClickUrl?: string;
  notOneClickBecause?: string;
  mailto: Array<{ address: string }>;
}
interface ListOut {
  source: string;
  from?: string;
  newerMessagesWithoutHeader?: number;
  options?: Options;
}
interface Item {
  threadId: string;
  outcome: string;
  sender?: string;
  wouldCall?: string;
  reason?: string;
  duplicateOf?: string;
  mailto?: string[];
  links?: string[];
}

/**
 * Unsubscribing without surprises: the options of a newsletter thread whose newest message is a
 * person's reply, then a dry-run bulk unsubscribe across every kind of list header in the demo
 * corpus. dryRun makes no request at all, not even DNS.
 */
export async function unsubscribeTourStep(
  client: LocalClient,
  sandbox: Sandbox,
  heading = '4.',
): Promise<void> {
  const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);
  const keys = DEMO_FACTS.keys;
  console.log(`\n${heading} Unsubscribe: RFC 8058 one-click only, from the message's own headers.`);
  const reply = await call<ListOut>(client, 'list_unsubscribe', {
    threadId: tid(keys.newsletterReplyNewest),
  });
  const o = reply.options;
  console.log(
    `   ${show(reply.from)}: header found on a message with ${reply.newerMessagesWithoutHeader ?? 0} newer message(s) after it`,
  );
  if (o)
    console.log(`   one-click: ${o.oneClick ? show(o.oneClickUrl) : `no (${o.notOneClickBecause ?? ''})`}`);

  const picks = [
    keys.oneClickNewsletters[0],
    keys.oneClickNewsletters[1],
    keys.newsletterReplyNewest,
    keys.mailtoOnlyNewsletters[0],
    keys.httpsNoPostNewsletters[0],
    keys.bodyLinkOnlyNewsletters[0],
  ].filter((k): k is string => k !== undefined);
  const bulk = await call<{ results: Item[]; skippedOutOfTime: string[] }>(client, 'bulk_unsubscribe', {
    threadIds: picks.map(tid),
    dryRun: true,
  });
  for (const r of bulk.results) {
    const who = show(r.sender ?? r.threadId);
    if (r.outcome === 'would_call')
      console.log(`   ✓ ${who}: would POST to ${show(r.wouldCall)} (DNS not yet consulted)`);
    else if (r.outcome === 'duplicate')
      console.log(`   = ${who}: same sender as ${r.duplicateOf ?? ''}, not called twice`);
    else {
      const human = [...(r.mailto ?? []), ...(r.links ?? [])].map(show).join(', ');
      console.log(
        `   ✗ ${who}: ${r.outcome} — ${r.reason ?? ''}${human ? `\n     for you to use by hand: ${human}` : ''}`,
      );
    }
  }
}
