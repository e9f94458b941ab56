import { shownLabel } from '../../mail/label-names.js';
import type { Label } from '../../mail/types.js';
import type { Fence } from '../../mcp/untrusted.js';
import type { Mailbox } from '../../providers/mailbox.js';

/**
 * Label names change rarely and resolving ids to names on every search would cost a request
 * each time; labels are not mail, so a short-lived map keeps docs/architecture.md, promise 2.
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

/** Gmail's ids for user labels: made by the server from a counter, never from mail. */
const SERVER_MADE_ID = /^Label_\d+$/;

/**
 * A label's id and name as a result shows them (summary.ts shownLabel). An id that holds a
 * mail-made name (an IMAP folder path or keyword) is fenced too; every tool that takes a label
 * accepts it back fenced (src/mcp unfences a whole fenced argument, and labels are matched on
 * the shown form as well), so the id stays usable as input.
 */
export function shownLabelRef(fence: Fence, l: Label): { id: string; name: string } {
  const wrap = (n: string): string => fence.wrap(n);
  const id = l.type === 'system' || SERVER_MADE_ID.test(l.id) ? l.id : wrap(l.id);
  return { id, name: shownLabel(l, l.id, wrap) };
}
