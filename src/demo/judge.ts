import type { LocalClient } from '../mcp/local-client.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../sandbox/corpus/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { call, show } from './kit.js';

interface Hit {
  threadId: string;
  subject: string;
  from: string;
  signals: string[];
  signalDetails?: { resembles?: string };
}
interface Auth {
  unchecked?: boolean;
  spf?: string;
  dkim?: string;
  dmarc?: string;
  headerFrom?: string;
  otherReports: number;
}

/**
 * Judging a sender from headers alone: the lookalike-domain phish next to the real bank's mail,
 * the signals search puts on every hit, and the authentication get_thread reads only from the
 * receiving server's own report.
 */
export async function tourJudge(client: LocalClient, sandbox: Sandbox, heading: string): Promise<void> {
  const phish = sandbox.threadIdForKey(DEMO_ADDRESS, DEMO_FACTS.keys.lookalikePhish);
  console.log(`\n${heading} Judge a sender from its headers: a lookalike-domain phish.`);
  const s = await call<{ threads: Hit[] }>(client, 'search', { query: 'northwind', maxResults: 10 });
  for (const t of s.threads) {
    const mark = t.threadId === phish ? '  ← the phish' : '';
    const resembles = t.signalDetails?.resembles ? ` (passes for ${show(t.signalDetails.resembles)})` : '';
    console.log(`   • ${show(t.from)} [${t.signals.join(', ') || 'no signals'}]${resembles}${mark}`);
  }
  const t = await call<{ messages: Array<{ authentication: Auth }> }>(client, 'get_thread', {
    threadId: phish,
    bodies: 'none',
  });
  const a = t.messages[0]?.authentication;
  if (a?.unchecked) console.log('   authentication: not checked (no report from the receiving server)');
  else if (a)
    console.log(
      `   authentication from the receiving server: spf=${a.spf} dkim=${a.dkim} dmarc=${a.dmarc}; ${a.otherReports} other report(s) not trusted`,
    );
}
