import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ActionLog } from '../../src/policy/action-log.js';
import { systemClock } from '../../src/mail/clock.js';
import { MailError } from '../../src/mail/errors.js';
import { connectLocal } from '../../src/mcp/local-client.js';
import { tiersFromEnv } from '../../src/policy/tiers.js';
import { defineTool } from '../../src/tools/common/define.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

// A manage-tier tool that only exists in this test, so tier filtering is proven through a real
// MCP client before the manage tools themselves land.
const probe = defineTool({
  name: 'probe_write',
  title: 'Probe',
  tier: 'manage',
  access: 'write',
  description: 'test tool',
  input: z.strictObject({}),
  output: z.object({ ok: z.boolean() }),
  handle: () => Promise.resolve({ ok: true }),
});

async function listed(
  env: Record<string, string>,
): Promise<Array<{ name: string; annotations?: Record<string, unknown> }>> {
  const client = await connectLocal({
    tools: [...ALL_TOOLS, probe],
    tiers: tiersFromEnv(env),
    mailbox: () => Promise.reject(new MailError('internal_error', 'no mailbox')),
    actionLog: new ActionLog('/nonexistent/action-log.jsonl'),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
  });
  try {
    return (await client.listTools()) as Array<{ name: string; annotations?: Record<string, unknown> }>;
  } finally {
    await client.close();
  }
}

describe('tiers decide which tools are listed', () => {
  it('lists a manage tool by default', async () => {
    expect((await listed({})).map((t) => t.name)).toContain('probe_write');
  });

  it('MAILWARDEN_READONLY=1 hides every non-read tool', async () => {
    const tools = await listed({ MAILWARDEN_READONLY: '1' });
    const names = tools.map((t) => t.name);
    expect(names).not.toContain('probe_write');
    expect(names).toEqual(ALL_TOOLS.filter((t) => t.tier === 'read').map((t) => t.name));
    expect(names).toEqual(
      expect.arrayContaining(['search', 'get_thread', 'list_labels', 'get_profile', 'what_changed']),
    );
    for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
  });

  it('MAILWARDEN_TOOLS=read hides it too', async () => {
    expect((await listed({ MAILWARDEN_TOOLS: 'read' })).map((t) => t.name)).not.toContain('probe_write');
  });

  it('annotations come from access', async () => {
    const tools = await listed({});
    // A read tool gives no destructive or idempotent hint (meaningless when read-only), and
    // the title only once, on the tool.
    expect(tools.find((t) => t.name === 'search')?.annotations).toEqual({
      readOnlyHint: true,
      openWorldHint: false,
    });
    expect(tools.find((t) => t.name === 'probe_write')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });
});
