import { MailError } from '../../mail/errors.js';
import type { MessageRef } from '../../mail/types.js';
import type { Mailbox } from '../../providers/mailbox.js';

/** Gmail's largest messages.list page. */
export const PAGE_SIZE = 500;

export interface Listing {
  /** In Gmail's order (newest first), each id once. */
  refs: MessageRef[];
  /** True when more than `limit` matched; `refs` then holds the first pages only. */
  overLimit: boolean;
  /** Gmail's resultSizeEstimate from the first page (an estimate, never used as a count). */
  estimate: number | undefined;
}

export interface ListOptions {
  labelIds?: readonly string[];
  includeSpamTrash?: boolean;
  /** Stop once more than this many ids are listed. */
  limit: number;
  signal?: AbortSignal;
}

/**
 * Every message id matching `query` (messages.list, pages of 500, 5 units a page). Pages are
 * sequential because each needs the previous page's token. A message can show up on two pages
 * if the mailbox changes between them; it is kept once.
 */
export async function listMessages(mailbox: Mailbox, query: string, options: ListOptions): Promise<Listing> {
  const seen = new Map<string, MessageRef>();
  let pageToken: string | undefined;
  let estimate: number | undefined;
  do {
    const page = await mailbox.searchMessages(query, {
      maxResults: PAGE_SIZE,
      ...(pageToken === undefined ? {} : { pageToken }),
      ...(options.labelIds === undefined ? {} : { labelIds: options.labelIds }),
      ...(options.includeSpamTrash === undefined ? {} : { includeSpamTrash: options.includeSpamTrash }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    estimate ??= page.resultSizeEstimate;
    for (const ref of page.items) if (!seen.has(ref.id)) seen.set(ref.id, ref);
    if (seen.size > options.limit) return { refs: [...seen.values()], overLimit: true, estimate };
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return { refs: [...seen.values()], overLimit: false, estimate };
}

/**
 * For each label: which of `within` carry it now. One messages.list per label with the same `q`
 * and labelIds=[label]: Gmail applies labelIds to each message's live labels, and `q` keeps the
 * listing to (roughly) the matched set, so the cost is pages of the matched set, not of the
 * whole label (INBOX may hold 100,000 messages). A listing returns only messages that still
 * match `q`; callers that need certainty about absence re-list `q` afterwards (see bulk-modify).
 * Labels are read in parallel; each label's pages are sequential.
 */
export async function labelMembership(
  mailbox: Mailbox,
  query: string,
  labelIds: readonly string[],
  within: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<Map<string, Set<string>>> {
  const entries = await Promise.all(
    labelIds.map(async (label) => {
      // New mail may match too; the bound only stops a runaway listing, never a real one.
      const listing = await listMessages(mailbox, query, {
        labelIds: [label],
        limit: within.size * 2 + PAGE_SIZE,
        ...(signal === undefined ? {} : { signal }),
      });
      if (listing.overLimit) {
        // A partial answer would read as "does not carry the label", which a plan must not assume.
        throw new MailError(
          'upstream_unavailable',
          `more than ${within.size + PAGE_SIZE} new messages started matching while labels were read; nothing was changed, try again`,
        );
      }
      const carrying = new Set(listing.refs.map((r) => r.id).filter((id) => within.has(id)));
      return [label, carrying] as const;
    }),
  );
  return new Map(entries);
}
