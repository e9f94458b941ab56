import type { Label } from '../mail/types.js';
import type { Mailbox } from '../providers/mailbox.js';

/**
 * Label names change rarely and resolving ids to names on every search would cost a request
 * each time; labels are not mail, so a short-lived map keeps DESIGN promise 2.
 */
const TTL_MS = 60_000;
// Keyed by account: each tool call sees a fresh policy wrapper around the same mailbox.
const cache = new Map<string, { at: number; map: Map<string, Label> }>();

export async function labelMap(
  mailbox: Mailbox,
  now: number,
  signal?: AbortSignal,
): Promise<Map<string, Label>> {
  const hit = cache.get(mailbox.account);
  if (hit && now - hit.at < TTL_MS) return hit.map;
  const labels = await mailbox.listLabels(signal);
  const map = new Map(labels.map((l) => [l.id, l]));
  cache.set(mailbox.account, { at: now, map });
  return map;
}

export function forgetLabels(mailbox: Mailbox): void {
  cache.delete(mailbox.account);
}
