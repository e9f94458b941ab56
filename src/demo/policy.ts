import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalClient } from '../mcp/local-client.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../sandbox/corpus/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { call, show } from './kit.js';

/* A step of `mailwarden demo`: it prints for a person, so console output is the point. */

/** What the tour leaves for its own "over the cap" moment once its other steps have moved mail. */
const MARGIN = 3;
/** Threads the tour asks to archive beyond what is left, so the cap has something to refuse. */
const OVER = 2;

interface ThreadsOut {
  changed: Array<{ threadId: string; messages?: number }>;
  refused?: Array<{ threadId: string; rule: string; reason: string }>;
  remainingToday?: number;
}

/**
 * The demo's write policy, in the demo's own config dir (never the user's): the guarded rules,
 * and a daily cap that fits the moves the other tour steps make (the organise step's bulk
 * archive, the snooze step's two threads) with MARGIN to spare, so the cap is reached in the
 * step that shows it. Written before the first write; the server reads policy.json at every write.
 */
export function writeDemoPolicy(configDir: string, sandbox: Sandbox): { dailyMoveCap: number } {
  const view = sandbox.mailbox(DEMO_ADDRESS);
  const inboxMessages = (threadId: string): number =>
    view.messages.filter((m) => m.threadId === threadId && m.labelIds.includes('INBOX')).length;
  // tourOrganise: bulk_modify on "category:updates in:inbox", one move per message.
  const organise = view.messages.filter(
    (m) => m.labelIds.includes('INBOX') && m.labelIds.includes('CATEGORY_UPDATES'),
  ).length;
  // tourSnooze: the first two inbox threads, each counting the inbox messages it holds.
  const snoozed = view.threads
    .filter((t) => inboxMessages(t.id) > 0)
    .slice(0, 2)
    .reduce((n, t) => n + inboxMessages(t.id), 0);
  const dailyMoveCap = organise + snoozed + MARGIN;
  const policy = { default: { dailyMoveCap, protectCorrespondents: true, inboxOnlyMoves: true } };
  writeFileSync(join(configDir, 'policy.json'), `${JSON.stringify(policy, null, 2)}\n`, { mode: 0o600 });
  return { dailyMoveCap };
}

/** The error envelope of a refused call: its code and message. */
function refusal(text: string): { code: string; message: string } {
  try {
    // The envelope itself, or (older servers) wrapped in {"error": …}.
    type Envelope = { code?: string; message?: string };
    const parsed = JSON.parse(text) as Envelope & { error?: Envelope };
    const e = parsed.error ?? parsed;
    return { code: e?.code ?? 'error', message: e?.message ?? text };
  } catch {
    return { code: 'error', message: text };
  }
}

/** A server-made reason, wrapped for the screen under `indent`. */
function wrap(text: string, indent: string, width = 96): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => `${indent}${l}`).join('\n');
}

/**
 * What the server enforces, whatever the model asks: mail from a person the owner writes to
 * stays in the inbox; moves beyond the day's cap are refused item by item (the ones that fit
 * go through); and a restore is never held back by the cap.
 */
export async function tourPolicy(
  client: LocalClient,
  sandbox: Sandbox,
  heading: string,
  policy: { dailyMoveCap: number; path: string },
): Promise<void> {
  const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);
  const keys = DEMO_FACTS.keys;
  const inInbox = (threadId: string): number =>
    sandbox
      .mailbox(DEMO_ADDRESS)
      .messages.filter((m) => m.threadId === threadId && m.labelIds.includes('INBOX')).length;
  console.log(
    `\n${heading} What the server enforces: policy.json, judged thread by thread, whatever the model asks.`,
  );
  console.log(`   ${policy.path} (the tour's own config dir):`);
  console.log(
    `   dailyMoveCap ${policy.dailyMoveCap} (the tour's moves so far fit, with ${MARGIN} to spare), protectCorrespondents and inboxOnlyMoves on`,
  );
  const newsletters = [
    ...keys.oneClickNewsletters,
    ...keys.mailtoOnlyNewsletters,
    ...keys.httpsNoPostNewsletters,
    ...keys.bodyLinkOnlyNewsletters,
  ];

  // (a) Someone the owner has written to (in To or Cc of Sent mail) stays in the inbox.
  const person = keys.awaitingOwnerReply.find((k) => !newsletters.includes(k)) ?? keys.awaitingOwnerReply[0];
  const protectedThread = tid(person as string);
  const t = await call<{ subject: string; messages: Array<{ from: string }> }>(client, 'get_thread', {
    threadId: protectedThread,
    bodies: 'none',
  });
  const who = t.messages.map((m) => show(m.from)).find((f) => !f.includes(DEMO_ADDRESS)) ?? '?';
  console.log(`   "${show(t.subject)}" from ${who}, whom this mailbox has written to`);
  const args = { threadId: protectedThread };
  console.log(`\n$ mailwarden call archive '${JSON.stringify(args)}' --demo`);
  const a = await client.call('archive', args);
  if (!a.isError) throw new Error(`archive of a protected correspondent was not refused: ${a.text}`);
  const r = refusal(a.text);
  const item = /refused \(([a-z-]+)\): (.*)$/s.exec(r.message);
  console.log(`   refused (${r.code}) by the rule ${item?.[1] ?? '?'}:`);
  console.log(wrap(item?.[2] ?? r.message, '     '));
  console.log(`   still in INBOX: ${inInbox(protectedThread) > 0 ? 'yes' : 'no'}`);

  // (b) More threads than are left today: the first ones that fit move, the rest are refused.
  const dry = await call<{ remainingToday?: number }>(client, 'bulk_modify', {
    query: 'in:inbox',
    remove: ['INBOX'],
    dryRun: true,
  });
  const left = dry.remainingToday ?? 0;
  console.log(`   agent moves out of the inbox left today: ${left} of ${policy.dailyMoveCap}`);
  const view = sandbox.mailbox(DEMO_ADDRESS);
  const owed = new Set(keys.awaitingOwnerReply);
  // Newsletters of one message each, so that one thread is one move.
  const picks = [...new Set(newsletters.filter((k) => !owed.has(k)).map(tid))]
    .filter((id) => inInbox(id) === 1 && view.threads.find((x) => x.id === id)?.messageIds.length === 1)
    .slice(0, left + OVER);
  const b = await call<ThreadsOut>(client, 'archive', { threadIds: picks });
  console.log(`   asked to archive ${picks.length} newsletter threads with ${left} left:`);
  console.log(`   moved ${b.changed.length}: ${b.changed.map((c) => c.threadId).join(', ') || 'none'}`);
  const byRule = new Map<string, { reason: string; ids: string[] }>();
  for (const x of b.refused ?? []) {
    const g = byRule.get(x.rule) ?? { reason: x.reason, ids: [] };
    g.ids.push(x.threadId);
    byRule.set(x.rule, g);
  }
  for (const [rule, g] of byRule) {
    console.log(`   refused ${g.ids.length} by the rule ${rule}: ${g.ids.join(', ')}`);
    console.log(wrap(g.reason, '     '));
  }
  console.log(`   left today now: ${b.remainingToday ?? 0}`);

  // (c) A restore is not a move out: the cap never stands between the user and their mail.
  const moved = b.changed.map((c) => c.threadId);
  if (moved.length === 0) return;
  const back = await call<ThreadsOut>(client, 'restore', { threadIds: moved });
  console.log(
    `   restored ${back.changed.length} of ${moved.length} with ${b.remainingToday ?? 0} moves left (restores are not counted); in INBOX again: ${moved.filter((id) => inInbox(id) > 0).length}`,
  );
}
