import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OffsetClock } from '../mail/clock.js';
import { stripFences } from '../mail/fence-format.js';
import { parseAddressList } from '../mail/headers.js';
import { connectLocal } from '../mcp/local-client.js';
import type { Env } from '../store/config.js';
import { tempDirUntilExit } from '../store/temp-dir.js';
import type { BuiltRuntime } from '../cli/runtime.js';
import { sweepRulesOnce } from '../cli/sweep-rules.js';

/*
 * `mailwarden review --demo`: the page over the sandbox mailbox, after a scripted agent has
 * worked it for ten days. Every action is a real tool call through the MCP client (or a real
 * sender-rule sweep), judged by the real write policy and logged in the demo's own config dir;
 * only the server's clock is moved, a day at a time, so the log and the chart have days behind
 * them. Nothing touches the user's config or log.
 */

const DAY = 86_400_000;
const HISTORY_DAYS = 9;

export function demoReviewSetup(env: Env): { env: Env; seed: (built: BuiltRuntime) => Promise<void> } {
  const dir = tempDirUntilExit('mailwarden-review-demo-');
  const start = new Date(Date.now() - HISTORY_DAYS * DAY).toISOString().replace(/\.\d+Z$/, 'Z');
  writeFileSync(
    join(dir.path, 'policy.json'),
    `${JSON.stringify({ default: { dailyMoveCap: 20, protectCorrespondents: true, inboxOnlyMoves: true } }, null, 2)}\n`,
    { mode: 0o600 },
  );
  return {
    env: { ...env, MAILWARDEN_CONFIG_DIR: dir.path, MAILWARDEN_TOOLS: 'read,manage', MAILWARDEN_NOW: start },
    seed: (built) => seed(built, dir.path),
  };
}

interface Found {
  threads: Array<{ threadId: string; from: string }>;
}

async function seed(built: BuiltRuntime, configDir: string): Promise<void> {
  const runtime = built.runtime;
  const clock = runtime.clock;
  if (!(clock instanceof OffsetClock)) throw new Error('the review demo needs a movable clock');
  const client = await connectLocal(runtime);
  try {
    const found = await client.call('search', { query: 'in:inbox', maxResults: 50 });
    if (found.isError) throw new Error(`review demo: search failed: ${found.text}`);
    const threads = (found.structured as Found | undefined)?.threads ?? [];
    let next = 0;
    const take = (n: number): string[] => threads.slice(next, (next += n)).map((t) => t.threadId);
    // Refusals (protected correspondents) are part of the story: a call may end as an error.
    const act = async (tool: string, n: number): Promise<void> => {
      const ids = take(n);
      if (ids.length > 0) await client.call(tool, { threadIds: ids });
    };
    const plan: Array<() => Promise<void>> = [
      () => act('archive', 3),
      () => act('archive', 2),
      () => act('move_to_spam', 1),
      () => act('archive', 4),
      async () => {
        // The person's rule for one sender, applied by the server's sweep (actor "rule").
        const t = threads[next];
        next++;
        const address = parseAddressList(stripFences(t?.from ?? ''))[0]?.address;
        if (address === undefined) return;
        writeFileSync(
          join(configDir, 'policy.json'),
          `${JSON.stringify({ default: { dailyMoveCap: 20, protectCorrespondents: true, inboxOnlyMoves: true, senderRules: { archive: [address] } } }, null, 2)}\n`,
          { mode: 0o600 },
        );
        await sweepRulesOnce(runtime, { dryRun: false, logAs: 'rule sweep' });
      },
      () => act('archive', 5),
      () => act('trash', 1),
      () => act('archive', 3),
      () => act('archive', 6),
      () => act('archive', 4),
    ];
    for (const [i, step] of plan.entries()) {
      await step();
      if (i < plan.length - 1) clock.advance(DAY);
    }
  } finally {
    await client.close();
    // Back to the real time: the page's "today" is today.
    clock.advance(Date.now() - clock.now());
  }
}
