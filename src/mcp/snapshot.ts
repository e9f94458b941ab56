import { z } from 'zod';
import { ActionLog } from '../policy/action-log.js';
import { systemClock } from '../mail/clock.js';
import { MailError } from '../mail/errors.js';
import { TIERS } from '../policy/tiers.js';
import { ALL_TOOLS } from '../tools/index.js';
import { connectLocal } from './local-client.js';
import { compactSchema } from './schema-compact.js';

/** tools/list with every tier on, as a client receives it; no mailbox is opened. */
export async function toolsListSnapshot(): Promise<unknown[]> {
  const client = await connectLocal({
    tools: ALL_TOOLS,
    tiers: new Set(TIERS),
    mailbox: () => Promise.reject(new MailError('internal_error', 'no mailbox for a snapshot')),
    actionLog: new ActionLog('/nonexistent/action-log.jsonl'),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'snapshot',
  });
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

/**
 * Every tool's full output shape, with its field descriptions: tools/list advertises an outline
 * (src/mcp/schema-compact.ts), and docs/output-schemas.json keeps the rest for developers.
 */
export function fullOutputSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of [...ALL_TOOLS].sort((a, b) => a.name.localeCompare(b.name))) {
    const raw = z.toJSONSchema(t.output, { target: 'draft-2020-12', io: 'output' }) as Record<
      string,
      unknown
    >;
    out[t.name] = compactSchema(raw, true, true, Infinity);
  }
  return out;
}
