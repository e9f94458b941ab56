import type { LocalClient } from '../mcp/local-client.js';
import { call, show } from './kit.js';

/* Steps of `mailwarden demo`: they print for a person, so console output is the point. */

interface Bucket {
  threads: number;
  unread: number;
}
interface DigestOut {
  threads: number;
  unread: { threads: number };
  attachments: { threads: number };
  signals: Record<string, Bucket>;
  ages: Record<'today' | 'thisWeek' | 'thisMonth' | 'older', Bucket>;
  labels: Array<Bucket & { label: string }>;
  senders: Array<Bucket & { address: string; name: string; signals: Record<string, number> }>;
  sendersFound: number;
  notJudged: { gone: number; partsNotRead: number };
  usage: { requests: number; quotaUnits: number };
}
interface Row {
  subject: string;
  counterpart: string;
  daysWaiting: number;
  reason?: string;
  automatedRepliesAfter?: number;
}
interface FollowUpsOut {
  awaitingReply: Row[];
  awaitingYou: Row[];
  setAside: Row[];
  scanned: { inbox: { indexHits: number; corrected: number; bodiesRead: number } };
  usage: { requests: number; quotaUnits: number };
}

const days = (n: number): string => (n === 1 ? '1 day' : `${n} days`);

/** The inbox as a structure to decide with: who writes, what kind of mail, how old, how risky. */
export async function digestTourStep(client: LocalClient, heading = '5.'): Promise<void> {
  console.log(`\n${heading} A digest of the inbox: counts to decide with, not a list to read.`);
  const d = await call<DigestOut>(client, 'triage_digest', { topSenders: 5 });
  console.log(
    `   ${d.threads} threads, ${d.unread.threads} unread (live labels), ${d.attachments.threads} with attachments`,
  );
  const a = d.ages;
  console.log(
    `   age: ${a.today.threads} today, ${a.thisWeek.threads} this week, ${a.thisMonth.threads} this month, ${a.older.threads} older`,
  );
  const kinds = Object.entries(d.signals)
    .filter(([, b]) => b.threads > 0)
    .map(([name, b]) => `${name} ${b.threads}`);
  console.log(`   signals: ${kinds.join(', ')}`);
  console.log(
    `   labels: ${d.labels
      .slice(0, 6)
      .map((l) => `${l.label} ${l.threads}`)
      .join(', ')}`,
  );
  console.log(`   top senders (of ${d.sendersFound}):`);
  for (const s of d.senders) {
    const sig = Object.keys(s.signals).join(', ');
    console.log(`   • ${show(s.address)}: ${s.threads} threads, ${s.unread} unread${sig ? ` [${sig}]` : ''}`);
  }
  const skipped = d.notJudged.gone + d.notJudged.partsNotRead;
  console.log(
    `   cost: ${d.usage.requests} requests, ${d.usage.quotaUnits} quota units (headers for every thread; parts only where attachments can hide)${skipped ? `; ${skipped} not fully judged` : ''}`,
  );
}

/** Who owes whom a reply, on each thread's last message and live labels. */
export async function followUpsTourStep(client: LocalClient, heading = '6.'): Promise<void> {
  console.log(`\n${heading} Follow-ups: who is waiting on whom.`);
  const f = await call<FollowUpsOut>(client, 'follow_ups', { olderThanDays: 3 });
  console.log('   you wrote last, nobody answered:');
  for (const r of f.awaitingReply) {
    const auto = r.automatedRepliesAfter ? ` (${r.automatedRepliesAfter} auto-reply since)` : '';
    console.log(`   • ${show(r.subject)} → ${show(r.counterpart)}, ${days(r.daysWaiting)}${auto}`);
  }
  console.log('   people asking you something:');
  for (const r of f.awaitingYou)
    console.log(`   • ${show(r.subject)} ← ${show(r.counterpart)}, ${days(r.daysWaiting)}`);
  if (f.setAside.length > 0) {
    console.log('   set aside, asks for an answer but looks spoofed:');
    for (const r of f.setAside)
      console.log(`   ! ${show(r.subject)} ← ${show(r.counterpart)} (${r.reason ?? ''})`);
  }
  const s = f.scanned.inbox;
  console.log(
    `   ${s.indexHits} recent inbox threads judged on live labels (${s.corrected} index hits corrected), ${s.bodiesRead} bodies read; cost: ${f.usage.requests} requests, ${f.usage.quotaUnits} quota units`,
  );
}
