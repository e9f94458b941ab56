import type { LocalClient } from '../mcp/local-client.js';
import type { Sandbox } from '../sandbox/index.js';
import { call, show } from './kit.js';

/* A step of `mailwarden demo`: it prints for a person, so console output is the point. */

interface SnoozeOut {
  label: string;
  dueAt: string;
  timeZone: string;
  changed: string[];
}
interface ListOut {
  threads: Array<{ threadId: string; dueAt: string; subject: string; overdue: boolean }>;
}
interface SweepOut {
  dueThreads: string[];
  returned: string[];
  batches: Array<{ label: string; messages: number; outcome: string }>;
  labelsDeleted: string[];
}

/**
 * Snooze on plain labels: two inbox threads leave for tomorrow morning, the snooze list shows
 * them, and a sweep brings them back. `advanceClock` moves the server's clock (the demo runs
 * on an OffsetClock); without it the tour stops at a dry run, since nothing is due yet.
 */
export async function tourSnooze(
  client: LocalClient,
  sandbox: Sandbox,
  address: string,
  advanceClock?: (ms: number) => void,
): Promise<void> {
  const view = () => sandbox.mailbox(address);
  const inInbox = (threadId: string): boolean =>
    view().messages.some((m) => m.threadId === threadId && m.labelIds.includes('INBOX'));
  const picked = view()
    .threads.filter((t) => inInbox(t.id))
    .slice(0, 2)
    .map((t) => t.id);
  console.log('\nSnooze: on labels every mail client shows, resolved in the server time zone.');

  const s = await call<SnoozeOut>(client, 'snooze', { threadIds: picked, until: 'tomorrow 9am' });
  console.log(`   ${s.changed.length} threads now carry ${s.label}, due ${s.dueAt} (${s.timeZone})`);
  console.log(`   still in INBOX: ${picked.filter(inInbox).length} of ${picked.length}`);

  const list = await call<ListOut>(client, 'list_snoozed', {});
  for (const t of list.threads) console.log(`   • ${show(t.subject)} — due ${t.dueAt}`);

  const dry = await call<SweepOut>(client, 'sweep_snoozed', { dryRun: true });
  console.log(`   due now: ${dry.dueThreads.length} (nothing comes back before its time)`);
  if (!advanceClock) return;

  // Tomorrow 9am is at most 33 hours away, whatever the time now.
  console.log('\n   (the server clock moves 34 hours on, as if cron ran `mailwarden sweep` then)');
  advanceClock(34 * 60 * 60 * 1000);
  const swept = await call<SweepOut>(client, 'sweep_snoozed', {});
  for (const b of swept.batches) console.log(`   batch ${b.label}: ${b.messages} messages, ${b.outcome}`);
  console.log(
    `   back in INBOX and unread: ${swept.returned.length}; empty due labels deleted: ${swept.labelsDeleted.join(', ') || 'none'}`,
  );
  console.log(`   in INBOX now: ${picked.filter(inInbox).length} of ${picked.length}`);
}
