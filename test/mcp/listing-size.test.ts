import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { systemClock } from '../../src/mail/clock.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { tiersFromEnv } from '../../src/policy/tiers.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

/*
 * What tools/list costs a model's context, in characters of the listing as a client receives it
 * (bench/run.mjs measures the same from the built server): at most 40,000 with the default tiers
 * and 50,000 with every tier (docs/benchmarks.md, "First contact"). A description or schema that
 * grows past the budget fails here, not in a later benchmark run.
 */
async function listingChars(env: Record<string, string>): Promise<{ tools: number; chars: number }> {
  const client = await connectLocal({
    tools: ALL_TOOLS,
    tiers: tiersFromEnv(env),
    mailbox: () => Promise.reject(new MailError('internal_error', 'no mailbox')),
    actionLog: new ActionLog('/nonexistent/action-log.jsonl'),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
  });
  try {
    const tools = await client.listTools();
    return { tools: tools.length, chars: JSON.stringify(tools).length };
  } finally {
    await client.close();
  }
}

describe('tools/list stays inside its context budget', () => {
  it('default tiers (read, manage): at most 40,000 characters', async () => {
    const l = await listingChars({});
    expect(l.tools).toBe(36);
    expect(l.chars).toBeLessThanOrEqual(40_000);
  });

  it('every tier: at most 50,000 characters', async () => {
    const l = await listingChars({ MAILWARDEN_TOOLS: 'read,manage,filters,drafts,accounts' });
    expect(l.tools).toBe(44);
    expect(l.chars).toBeLessThanOrEqual(50_000);
  });
});
