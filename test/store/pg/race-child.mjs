// A separate process for the cap race (policy-backends.test.ts): opens the same state as its
// sibling (files dir or PostgreSQL URL) through the built code, runs 30 single-message agent
// archives concurrently with a cap of 50, and sends how many moved.
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../../dist/mail/clock.js';
import { ActionLog } from '../../../dist/policy/action-log.js';
import { createGate, filePolicyStore } from '../../../dist/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../../../dist/policy/write-policy.js';
import { openStateDb, pgPolicyStore } from '../../../dist/store/pg/index.js';

const [kind, where, prefix, now] = process.argv.slice(2);
let db;
const store =
  kind === 'files'
    ? filePolicyStore({ MAILWARDEN_CONFIG_DIR: where }, new ActionLog(join(where, 'action-log.jsonl')), {
        timeoutMs: 30_000,
      })
    : pgPolicyStore((db = await openStateDb(where)));
const policy = effectivePolicy(
  {
    ...parsePolicy({ default: { dailyMoveCap: 50, protectCorrespondents: false } }),
    path: '/nonexistent/policy.json',
  },
  'work',
);
const gate = createGate({ policy, store, clock: new ManualClock(Number(now)), timeZone: 'Europe/Berlin' });
const item = (i) => ({
  id: `${prefix}${i}`,
  kind: 'message',
  messageCount: 1,
  sender: `s${i}@shop.example`,
  senderHeader: `s${i}@shop.example`,
  labelIds: ['INBOX'],
});
const moved = async (allowed) => {
  await sleep(2);
  return allowed.map((i) => ({ id: i.id, outcome: 'moved' }));
};
const runs = await Promise.all(
  Array.from({ length: 30 }, (_, i) =>
    gate.run([item(i)], { tool: 'archive_threads', action: 'archive', actor: 'agent' }, moved),
  ),
);
const count = runs.flatMap((r) => r.results).filter((r) => r.outcome === 'moved').length;
await db?.close();
process.send(count, () => process.exit(0));
