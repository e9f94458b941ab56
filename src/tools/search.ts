import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { parseQuery } from '../mail/query.js';
import { verifyThreads } from '../mail/verify.js';
import { defineTool } from './define.js';
import { labelMap } from './labels-cache.js';
import { mailReaders } from './lazy.js';

/** Thread reads in flight at once: enough to hide latency, low enough to stay polite to quota. */
const THREAD_FETCH_CONCURRENCY = 10;

const attachment = z.object({ filename: z.string(), mimeType: z.string(), size: z.number() });

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
});

export const usage = z.object({ requests: z.number(), quotaUnits: z.number() });

export const search = defineTool({
  name: 'search',
  title: 'Search mail',
  tier: 'read',
  access: 'read',
  description:
    'Search threads with Gmail query syntax (from: to: subject: label: in: is: category: has:attachment filename: newer_than: older_than: after: before: larger: smaller: list: rfc822msgid:, OR, {}, (), -, "phrases"). Spam and trash are excluded unless named. Read-state, location and category predicates are re-checked against each hit\'s live labels; stale index hits are dropped and counted.',
  input: z.strictObject({
    query: z.string().max(2000).default('in:inbox').describe('Gmail search query'),
    maxResults: z.number().int().min(1).max(50).default(10),
    pageToken: z.string().max(500).optional(),
  }),
  output: z.object({
    threads: z.array(threadSummary),
    nextPageToken: z.string().optional(),
    verification: z.object({
      predicates: z.array(z.string()).describe('label-state predicates re-checked on live labels'),
      indexHits: z.number(),
      dropped: z.number().describe('index hits whose live labels contradict the query'),
    }),
    usage,
  }),
  async handle(ctx, args) {
    const node = parseQuery(args.query);
    const { summarizeThread } = await mailReaders();
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
    const threads = await mapBounded(page.items, THREAD_FETCH_CONCURRENCY, (t) =>
      ctx.mailbox.getThread(t.id, { format: 'full', signal: ctx.signal }),
    );
    const outcome = verifyThreads(node, threads);
    const after = ctx.mailbox.usage();
    const f = ctx.fence;
    return {
      threads: outcome.kept.map((t) => {
        const s = summarizeThread(t, labels);
        return {
          ...s,
          subject: f.wrap(s.subject),
          from: f.wrap(s.from),
          snippet: f.wrap(s.snippet),
          last: { ...s.last, from: f.wrap(s.last.from) },
          attachments: s.attachments.map((a) => ({ ...a, filename: f.wrap(a.filename) })),
        };
      }),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      verification: {
        predicates: outcome.predicates,
        indexHits: page.items.length,
        dropped: outcome.dropped.length,
      },
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    };
  },
});
