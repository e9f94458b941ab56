import { z } from 'zod';
import { parseQuery } from '../mail/query/index.js';
import type { MailThread } from '../mail/types.js';
import { uniqueById } from '../mail/unique.js';
import { verifyThreads } from '../mail/verify.js';
import { defineTool, readConcurrency, fenceOrEmpty } from './common/define.js';
import type { FanOutPart } from './common/define.js';
import { labelMap } from './common/labels-cache.js';
import { readListedThreads } from './common/thread-reads.js';
import {
  fenceSignalDetails,
  reusedChecksField,
  uncheckedPlacesField,
  signalDetailsSchema,
  signalsSchema,
  usage,
} from './common/schemas.js';
import { mailReaders } from './common/lazy.js';

/** Thread reads in flight at once: enough to hide latency, low enough to stay polite to quota. */
const THREAD_FETCH_CONCURRENCY = 10;

const attachment = z.object({ filename: z.string(), mimeType: z.string(), size: z.number() });

/**
 * On every hit, so it is kept small: the names of the signals present ([] when none, about 12
 * characters) and, only when one has a domain to name, a fenced detail.
 */
export const threadSummary = z.object({
  threadId: z.string(),
  subject: z.string().describe('fenced mail text'),
  from: z.string().describe('first message sender, fenced mail text'),
  date: z.string().describe('first message, ISO 8601'),
  messageCount: z.number(),
  unread: z.boolean().describe('from live labels'),
  last: z.object({ messageId: z.string(), date: z.string(), from: z.string() }),
  attachments: z.array(attachment),
  labels: z.array(z.string()),
  snippet: z.string().describe('fenced mail text'),
  signals: signalsSchema,
  signalDetails: signalDetailsSchema.optional(),
  omitted: z
    .partialRecord(z.enum(['attachments', 'labels']), z.number())
    .optional()
    .describe('attachments past 50 and labels past 30, counted'),
});

const accountOutcome = z.object({
  account: z.string(),
  ok: z.boolean(),
  threads: z.number().optional(),
  nextPageToken: z.string().optional().describe('pass with this account (not "all") for its next page'),
  error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).optional(),
});

export const search = defineTool({
  name: 'search',
  title: 'Search mail',
  tier: 'read',
  access: 'read',
  description:
    'Search threads with Gmail query syntax (from: to: subject: label: in: is: category: has:attachment filename: newer_than: older_than: after: before: larger: smaller: list: rfc822msgid:, OR, {}, (), -, "phrases"). Spam and trash excluded unless named. Read-state, location and category predicates are re-checked on live labels; stale hits are dropped and counted.',
  input: z.strictObject({
    query: z.string().max(2000).default('in:inbox').describe('Gmail search query'),
    maxResults: z.number().int().min(1).max(50).default(10),
    pageToken: z.string().max(500).optional(),
  }),
  output: z.object({
    threads: z.array(
      threadSummary.extend({
        account: z.string().optional().describe('account "all": the account it is in'),
      }),
    ),
    nextPageToken: z.string().optional(),
    reusedChecks: reusedChecksField,
    uncheckedPlaces: uncheckedPlacesField,
    verification: z.object({
      predicates: z.array(z.string()).describe('label-state predicates re-checked on live labels'),
      indexHits: z.number(),
      dropped: z.number().describe('index hits whose live labels contradict the query'),
      checkedBy: z
        .array(
          z.object({
            predicate: z.string(),
            by: z.enum(['server', 'local', 'none']),
            recall: z
              .literal('limited')
              .optional()
              .describe('the server matched raw bytes: mail with this text encoded is never found'),
          }),
        )
        .optional()
        .describe(
          'IMAP: per predicate, whether the server, a local check on fetched mail, or nothing checked it',
        ),
    }),
    usage,
    accounts: z.array(accountOutcome).optional().describe('account "all": how each account answered'),
    note: z.string().optional(),
  }),
  fanOut: (parts) => mergeAccountSearches(parts),
  async handle(ctx, args) {
    const node = parseQuery(args.query);
    const { senderDomains, summarizeThread } = await mailReaders();
    const before = ctx.mailbox.usage();
    const searchOptions = {
      maxResults: args.maxResults,
      signal: ctx.signal,
      ...(args.pageToken ? { pageToken: args.pageToken } : {}),
    };
    const [page, labels] = await Promise.all([
      ctx.mailbox.searchThreads(args.query, searchOptions),
      labelMap(ctx.mailbox, ctx.clock.now(), ctx.signal),
    ]);
    // One failed read fails the search, a thread gone since the listing too.
    const read = await readListedThreads(
      ctx.mailbox,
      page.items.map((t) => t.id),
      { format: 'full', signal: ctx.signal },
      { concurrency: readConcurrency(ctx.mailbox, THREAD_FETCH_CONCURRENCY), gone: 'fail' },
    );
    const threads = uniqueById(read.filter((t): t is MailThread => t !== undefined));
    const outcome = verifyThreads(node, threads);
    const after = ctx.mailbox.usage();
    const f = ctx.fence;
    const references = senderDomains(outcome.kept);
    return {
      threads: outcome.kept.map((t) => {
        const s = summarizeThread(t, labels, (n) => f.wrap(n), references);
        return {
          ...s,
          subject: f.wrap(s.subject),
          from: f.wrap(s.from),
          snippet: f.wrap(s.snippet),
          last: { ...s.last, from: f.wrap(s.last.from) },
          attachments: s.attachments.map((a) => ({
            ...a,
            filename: fenceOrEmpty(f, a.filename),
            mimeType: f.wrap(a.mimeType),
          })),
          ...(s.signalDetails ? { signalDetails: fenceSignalDetails(s.signalDetails, f) } : {}),
        };
      }),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      verification: {
        predicates: outcome.predicates,
        indexHits: page.items.length,
        dropped: outcome.dropped.length,
        ...(page.checks ? { checkedBy: page.checks } : {}),
      },
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
      ...limitedRecallNote(page.checks),
    };
  },
});

/** Says which predicates the server could only match on raw bytes, so a miss is not an absence. */
function limitedRecallNote(checks: ReadonlyArray<{ predicate: string; recall?: 'limited' }> | undefined) {
  const limited = (checks ?? []).filter((c) => c.recall === 'limited').map((c) => c.predicate);
  if (limited.length === 0) return {};
  return {
    note:
      `recall limited for ${limited.join(', ')}: this server matches search words against the raw message, ` +
      'so mail whose subject, name or body is encoded (RFC 2047 words, base64 or quoted-printable parts, ' +
      'which non-ASCII text almost always is) is not found. Narrow by sender, date or folder instead to see everything.',
  };
}

interface SearchPart<T> {
  threads: T[];
  nextPageToken?: string | undefined;
  verification: { predicates: string[]; indexHits: number; dropped: number };
  usage: { requests: number; quotaUnits: number };
}

const ALL_NOTE =
  'account "all": each account\'s first page (up to maxResults each), merged newest first. The merged list has no pageToken; to see more, search one account with its accounts[].nextPageToken.';

/** account "all": one list, newest activity first (as Gmail orders threads), each hit tagged. */
export function mergeAccountSearches<T extends { last: { date: string } }>(
  parts: ReadonlyArray<FanOutPart<SearchPart<T>>>,
) {
  const threads = parts
    .flatMap((p) => (p.ok ? p.result.threads.map((t) => ({ ...t, account: p.account })) : []))
    // ISO 8601 in UTC sorts as text; Array.prototype.sort is stable, so ties keep account order.
    .sort((a, b) => (a.last.date < b.last.date ? 1 : a.last.date > b.last.date ? -1 : 0));
  const ok = parts.flatMap((p) => (p.ok ? [p.result] : []));
  return {
    threads,
    verification: {
      predicates: [...new Set(ok.flatMap((r) => r.verification.predicates))],
      indexHits: ok.reduce((n, r) => n + r.verification.indexHits, 0),
      dropped: ok.reduce((n, r) => n + r.verification.dropped, 0),
    },
    usage: {
      requests: ok.reduce((n, r) => n + r.usage.requests, 0),
      quotaUnits: ok.reduce((n, r) => n + r.usage.quotaUnits, 0),
    },
    accounts: parts.map((p) =>
      p.ok
        ? {
            account: p.account,
            ok: true,
            threads: p.result.threads.length,
            ...(p.result.nextPageToken ? { nextPageToken: p.result.nextPageToken } : {}),
          }
        : { account: p.account, ok: false, error: p.error },
    ),
    note: ALL_NOTE,
  };
}
