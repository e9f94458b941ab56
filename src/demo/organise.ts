import type { LocalClient } from '../mcp/local-client.js';
import type { Sandbox } from '../sandbox/index.js';
import { call, show } from './kit.js';

/* A step of `mailwarden demo`: it prints for a person, so console output is the point. */

interface Chunk {
  index: number;
  ids: number;
  outcome: string;
}
interface BulkOut {
  matched: { messages: number; threads: number };
  toWrite: number;
  unverifiedPredicates: string[];
  labelsToCreate: string[];
  createdLabels: Array<{ id: string; name: string }>;
  crossCheck?: { predicates: string[]; contradicted: number };
  previewToken?: string;
  previewExpiresAt?: string;
  samples?: Array<{ subject: string; from: string; date: string }>;
  newMatches?: number;
  submitted: number;
  failed: number;
  chunks: Chunk[];
  refused?: { messages: number; reasons: Array<{ rule: string; messages: number }> };
  remainingToday?: number;
  undoPlan?: { groups: Array<{ add: string[]; remove: string[]; messageIds: string[] }> };
  usage: { requests: number; quotaUnits: number };
}
interface UndoOut {
  messages: number;
  submitted: number;
  failed: number;
  usage: { requests: number; quotaUnits: number };
}

const cost = (u: { requests: number; quotaUnits: number }): string =>
  `${u.requests} requests, ${u.quotaUnits} quota units`;

/**
 * Organising in bulk without surprises: a dry run that pins what it showed, the write that
 * presents the pin (and asks for an undo plan), then the undo, with the inbox counted from the
 * sandbox itself at each step.
 */
export async function tourOrganise(client: LocalClient, sandbox: Sandbox, address: string): Promise<void> {
  const query = 'category:updates in:inbox';
  const change = { add: ['Archive/Updates'], remove: ['INBOX'] };
  const inbox = (): number =>
    sandbox.mailbox(address).messages.filter((m) => m.labelIds.includes('INBOX')).length;
  const startInbox = inbox();
  console.log('\nOrganise in bulk: dry run, a write pinned to what the dry run showed, and undo.');
  console.log(`   messages in INBOX now: ${startInbox}`);

  const dry = await call<BulkOut>(client, 'bulk_modify', { query, ...change, dryRun: true });
  console.log(
    `   would change ${dry.toWrite} messages in ${dry.matched.threads} threads; would create ${dry.labelsToCreate.join(', ') || 'no labels'}`,
  );
  for (const s of dry.samples ?? []) console.log(`   • ${show(s.subject)} — ${show(s.from)}`);
  console.log(
    `   taken on the index's word: ${dry.unverifiedPredicates.join(' ') || 'nothing'} (crossCheck re-asks them against live labels)`,
  );
  console.log(
    `   previewToken ${dry.previewToken ?? '?'} pins this set until ${dry.previewExpiresAt ?? '?'}`,
  );
  console.log(`   cost: ${cost(dry.usage)}; INBOX unchanged: ${inbox()}`);

  const write = await call<BulkOut>(client, 'bulk_modify', {
    query,
    ...change,
    previewToken: dry.previewToken,
    crossCheck: true,
    undo: true,
  });
  for (const c of write.chunks) console.log(`   chunk ${c.index + 1}: ${c.ids} ids, ${c.outcome}`);
  console.log(
    `   submitted ${write.submitted}, failed ${write.failed}; created ${write.createdLabels.map((l) => l.name).join(', ') || 'nothing'}; new matches left alone: ${write.newMatches ?? 0}`,
  );
  const kept = write.refused?.reasons.map((r) => `${r.messages} by ${r.rule}`).join(', ');
  console.log(
    `   write policy: ${kept === undefined ? 'every message allowed' : `refused ${kept} (left in INBOX)`}; agent moves left today: ${write.remainingToday ?? 'no cap'}`,
  );
  console.log(
    `   crossCheck of ${write.crossCheck?.predicates.join(' ') ?? '-'}: ${write.crossCheck?.contradicted ?? 0} contradicted by live labels (left unchanged)`,
  );
  const plan = write.undoPlan;
  const planned = plan?.groups.reduce((n, g) => n + g.messageIds.length, 0) ?? 0;
  console.log(`   undo plan: ${plan?.groups.length ?? 0} group(s), ${planned} messages`);
  console.log(`   cost: ${cost(write.usage)}; INBOX now: ${inbox()}`);

  if (plan === undefined) return;
  const undo = await call<UndoOut>(
    client,
    'undo_bulk_modify',
    { plan },
    { plan: `<the undoPlan above: ${plan.groups.length} group(s), ${planned} messages>` },
  );
  console.log(`   restored ${undo.submitted} of ${undo.messages} messages (${undo.failed} failed)`);
  console.log(`   cost: ${cost(undo.usage)}; INBOX back to ${inbox()} (was ${startInbox})`);
}
