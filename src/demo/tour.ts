import { join } from 'node:path';
import { connectLocal } from '../mcp/local-client.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../sandbox/corpus/index.js';
import { OffsetClock } from '../mail/clock.js';
import { call, show } from './kit.js';
import { tourJudge } from './judge.js';
import { tourOrganise } from './organise.js';
import { tourPolicy, writeDemoPolicy } from './policy.js';
import { tourSnooze } from './snooze.js';
import { digestTourStep, followUpsTourStep } from './triage.js';
import { unsubscribeTourStep } from './unsubscribe.js';
import { buildRuntime } from '../cli/runtime.js';
import { tempDirUntilExit } from '../store/temp-dir.js';

/* The tour prints for a person, so plain console output is the point here. */

interface SearchOut {
  nextPageToken?: string;
  threads: Array<{ threadId: string; subject: string; from: string; unread: boolean; messageCount: number }>;
  verification: { predicates: string[]; indexHits: number; dropped: number };
  usage: { requests: number; quotaUnits: number };
}

interface ThreadOut {
  subject: string;
  messageCount: number;
  omittedMessages: number;
  messages: Array<{ from: string; date: string; body?: string; quotedHistoryRemoved?: boolean }>;
}

export async function runDemo(): Promise<number> {
  // A config dir of the tour's own: its policy.json and action log never meet the user's (a
  // second run the same day starts from a fresh cap, and the user's policy does not shape the tour).
  const configDir = tempDirUntilExit('mailwarden-demo-');
  try {
    return await tour(configDir.path);
  } finally {
    configDir.remove();
  }
}

async function tour(configDir: string): Promise<number> {
  const built = await buildRuntime({
    demo: true,
    env: { ...process.env, MAILWARDEN_TOOLS: 'read,manage', MAILWARDEN_CONFIG_DIR: configDir },
  });
  // The snooze step moves the server's clock forward to show a sweep; nothing else depends on it.
  const clock = new OffsetClock();
  built.runtime.clock = clock;
  const sandbox = built.sandbox;
  if (!sandbox) throw new Error('demo sandbox did not start');
  const policy = { ...writeDemoPolicy(configDir, sandbox), path: join(configDir, 'policy.json') };
  const client = await connectLocal(built.runtime);
  try {
    console.log('mailwarden demo — the real tools, through an MCP client, on the embedded sandbox mailbox');
    console.log(`(a Gmail simulator on ${sandbox.url}; no Google account, nothing leaves this machine)`);

    const profile = await call<{
      emailAddress: string;
      messagesTotal: number;
      threadsTotal: number;
      historyId: string;
    }>(client, 'get_profile', {});
    console.log(
      `  ${profile.emailAddress}: ${profile.messagesTotal} messages in ${profile.threadsTotal} threads`,
    );

    console.log('\n1. Search that survives a stale index.');
    console.log(
      "   Gmail's thread index can answer is:unread from stale state; mailwarden re-checks live labels.",
    );
    let indexHits = 0;
    let dropped = 0;
    let requests = 0;
    let quotaUnits = 0;
    let pages = 0;
    let predicates: string[] = [];
    const kept: SearchOut['threads'] = [];
    let pageToken: string | undefined;
    do {
      const s: SearchOut = await call<SearchOut>(client, 'search', {
        query: 'category:updates is:unread',
        maxResults: 50,
        ...(pageToken ? { pageToken } : {}),
      });
      indexHits += s.verification.indexHits;
      dropped += s.verification.dropped;
      requests += s.usage.requests;
      quotaUnits += s.usage.quotaUnits;
      predicates = s.verification.predicates;
      kept.push(...s.threads);
      pageToken = s.nextPageToken;
      pages++;
    } while (pageToken);
    console.log(
      `   the index returned ${indexHits} threads over ${pages} page(s); ${dropped} had no unread message and were dropped; ${kept.length} kept`,
    );
    console.log(`   re-checked predicates: ${predicates.join(' ')}`);
    for (const t of kept.slice(0, 5)) console.log(`   • ${show(t.subject)} — ${show(t.from)}`);
    console.log(`   cost: ${requests} requests, ${quotaUnits} quota units`);

    console.log('\n2. Read a long quoted thread with bodies: "new" (quoted history stripped).');
    const threadId = sandbox.threadIdForKey(DEMO_ADDRESS, DEMO_FACTS.keys.longQuoted);
    const t = await call<ThreadOut>(client, 'get_thread', { threadId, bodies: 'new', lastN: 3 });
    console.log(
      `   "${show(t.subject)}": ${t.messageCount} messages, showing the last ${t.messageCount - t.omittedMessages}`,
    );
    for (const m of t.messages) {
      const body = show(m.body ?? '')
        .trim()
        .split('\n')
        .slice(0, 4)
        .join('\n      ');
      console.log(
        `   ▸ ${show(m.from)} (${m.date})${m.quotedHistoryRemoved ? ' [quoted history removed]' : ''}\n      ${body}`,
      );
    }

    console.log('\n3. What changed since a cursor.');
    const delivered = sandbox.deliver(
      DEMO_ADDRESS,
      [
        'From: Ada Example <ada@example.org>',
        `To: ${DEMO_ADDRESS}`,
        'Subject: Lunch on Thursday?',
        `Date: ${new Date(sandbox.clock.now()).toUTCString()}`,
        `Message-ID: <demo-${sandbox.clock.now()}@example.org>`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Are you free for lunch on Thursday?',
        '',
      ].join('\r\n'),
      ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'],
    );
    console.log(`   (a new message arrives in the sandbox: ${delivered.id})`);
    const w = await call<{ added: Array<{ messageId: string; labels: string[] }>; nextHistoryId: string }>(
      client,
      'what_changed',
      { historyId: profile.historyId },
    );
    for (const a of w.added) console.log(`   + ${a.messageId} [${a.labels.join(', ')}]`);
    console.log(`   next cursor: ${w.nextHistoryId}`);

    await tourOrganise(client, sandbox, DEMO_ADDRESS);
    await tourSnooze(client, sandbox, DEMO_ADDRESS, (ms) => clock.advance(ms));
    await tourJudge(client, sandbox, '4.');
    await digestTourStep(client, '5.');
    await followUpsTourStep(client, '6.');
    await unsubscribeTourStep(client, sandbox, '7.');
    await tourPolicy(client, sandbox, '8.', policy);

    const self = `node ${process.argv[1] ?? 'dist/bundle/main.js'}`;
    console.log(`
Connect an MCP client to this sandbox mailbox (stdio; MCP 2025-11-25 and 2026-07-28):
  Claude Code:     claude mcp add mailwarden-demo -- ${self} --demo
  Claude Desktop:  "mcpServers": { "mailwarden": { "command": "node", "args": ["${process.argv[1] ?? 'dist/bundle/main.js'}", "--demo"] } }
  one tool:        ${self} call search '{"query":"is:unread"}' --demo
Drop --demo to serve a real Gmail account: run mailwarden auth, then mailwarden check (see README).

The person's side: what the agent did, put back what it should not have moved, the day against the cap:
  ${self} review --demo     (a page on 127.0.0.1 over the sandbox, after a scripted agent's ten days)`);
    return 0;
  } finally {
    await client.close();
    await built.close();
  }
}
