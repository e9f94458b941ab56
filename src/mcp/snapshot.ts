import { ActionLog } from '../policy/action-log.js';
import { systemClock } from '../mail/clock.js';
import { MailError } from '../mail/errors.js';
import { TIERS } from '../policy/tiers.js';
import { ALL_TOOLS } from '../tools/index.js';
import { connectLocal } from './local-client.js';

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
