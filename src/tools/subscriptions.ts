import { z } from 'zod';
import { mapBounded } from '../mail/async.js';
import { uniqueById } from '../mail/unique.js';
import { isMailError } from '../mail/errors.js';
import type { MailThread } from '../mail/types.js';
import {
  bodyUnsubscribeCandidates,
  findUnsubscribeHeaders,
  threadSenderMessage,
  UNSUBSCRIBE_HEADERS,
} from '../mail/unsubscribe.js';
import type { UnsubscribeHeaders } from '../mail/unsubscribe.js';
import type { Fence } from '../mcp/untrusted.js';
import { checkUrl } from '../net/guard.js';
import { domainOfAddress } from '../mail/domains.js';
import { parseAddressList } from '../mail/headers.js';
import { shownUrl } from '../mail/shown-url.js';
import { defineTool, readConcurrency } from './common/define.js';
import type { ToolContext } from './common/define.js';
import { usage } from './common/schemas.js';

/** Thread reads in flight at once (the same politeness as search). */
const THREAD_FETCH_CONCURRENCY = 10;

const mailto = z.object({
  address: z.string(),
  subject: z.string().optional(),
  body: z.string().optional(),
});

/** A URL from the header as the request it would make (mail/shown-url.ts); every string fenced. */
export const shownUrlSchema = z.object({
  url: z
    .string()
    .describe(
      'fenced: the request that would be made, as the URL parser serialises it (host in punycode, any other non-ASCII or control character percent-encoded), so nothing in it is hidden',
    ),
  host: z.string().optional().describe('fenced: the host requested (punycode)'),
  hostUnicode: z.string().optional().describe('fenced: the host as a person reads it, when it differs'),
  lookalike: z
    .literal(true)
    .optional()
    .describe(
      'the host imitates another name (confusable characters, mixed scripts, a bad A-label, or the sender’s own domain)',
    ),
  resembles: z.string().optional().describe('fenced: the name it passes for'),
  parses: z.literal(false).optional().describe('not a URL the parser accepts: nothing would be requested'),
});

/** Options as the message's own headers give them; every string is fenced mail text. */
export const unsubscribeOptions = z.object({
  oneClick: z.boolean().describe('RFC 8058 one-click: unsubscribe / bulk_unsubscribe can call it'),
  oneClickUrl: z.string().optional().describe('fenced: exactly the URL unsubscribe would POST to'),
  notOneClickBecause: z.string().optional(),
  https: z.array(shownUrlSchema).describe('https URIs in List-Unsubscribe; only oneClickUrl is ever called'),
  http: z.array(shownUrlSchema).describe('plain http URIs: reported, never called'),
  mailto: z.array(mailto).describe('for the human to send; mailwarden never sends mail'),
  omitted: z
    .partialRecord(z.enum(['https', 'http', 'mailto']), z.number())
    .optional()
    .describe('URIs past the first 10 of List-Unsubscribe, counted by kind'),
});

type Options = z.input<typeof unsubscribeOptions>;
type Shown = z.input<typeof shownUrlSchema>;

export function fencedUrl(raw: string, f: Fence, references: readonly string[]): Shown {
  const u = shownUrl(raw, references);
  return {
    url: f.wrap(u.url),
    ...(u.host === undefined ? {} : { host: f.wrap(u.host) }),
    ...(u.hostUnicode === undefined ? {} : { hostUnicode: f.wrap(u.hostUnicode) }),
    ...(u.lookalike ? { lookalike: true as const } : {}),
    ...(u.resembles === undefined ? {} : { resembles: f.wrap(u.resembles) }),
    ...(u.parses === false ? { parses: false as const } : {}),
  };
}

/** The sender's domain, the reference a lookalike host in its own URLs is judged against. */
function senderDomainOf(h: UnsubscribeHeaders): string[] {
  const from = h.message.headers.find((x) => x.name.toLowerCase() === 'from')?.value ?? '';
  const domain = domainOfAddress(parseAddressList(from)[0]?.address ?? '');
  return domain === '' ? [] : [domain];
}

/** Fenced options of the message that carries the header, judged by the static URL checks too. */
export function describeOptions(h: UnsubscribeHeaders, f: Fence): Options {
  let verdict = h.oneClick;
  let called: string | undefined;
  if (verdict.ok) {
    const c = checkUrl(verdict.url);
    if (!c.ok) verdict = { ok: false, reason: c.reason };
    else called = c.url.href;
  }
  const refs = senderDomainOf(h);
  return {
    oneClick: verdict.ok,
    ...(called !== undefined
      ? { oneClickUrl: f.wrap(called) }
      : verdict.ok
        ? {}
        : { notOneClickBecause: verdict.reason }),
    https: h.options.https.map((u) => fencedUrl(u, f, refs)),
    http: h.options.http.map((u) => fencedUrl(u, f, refs)),
    mailto: h.options.mailto.map((m) => ({
      address: f.wrap(m.address),
      ...(m.subject === undefined ? {} : { subject: f.wrap(m.subject) }),
      ...(m.body === undefined ? {} : { body: f.wrapText(m.body.slice(0, 500)) }),
    })),
    ...(h.options.omitted === undefined ? {} : { omitted: h.options.omitted }),
  };
}

function metadataRead(ctx: ToolContext, threadId: string): Promise<MailThread> {
  return ctx.mailbox.getThread(threadId, {
    format: 'metadata',
    metadataHeaders: UNSUBSCRIBE_HEADERS,
    signal: ctx.signal,
  });
}

export const listUnsubscribe = defineTool({
  name: 'list_unsubscribe',
  title: 'Unsubscribe options of a thread',
  tier: 'read',
  access: 'read',
  description:
    "How a thread's sender offers to unsubscribe, from its newest message with List-Unsubscribe: https and mailto URIs, and whether it offers RFC 8058 one-click (only then can unsubscribe act). Body links that look like unsubscribing are bodyCandidates, for the human only.",
  input: z.strictObject({ threadId: z.string().min(1).max(256) }),
  output: z.object({
    threadId: z.string(),
    source: z.enum(['header', 'body', 'none']).describe('where the options were found'),
    messageId: z.string().optional().describe('the message carrying List-Unsubscribe'),
    messageDate: z.string().optional(),
    from: z.string().optional().describe('fenced mail text'),
    newerMessagesWithoutHeader: z.number().optional().describe('messages after the one carrying the header'),
    options: unsubscribeOptions.optional(),
    bodyCandidates: z
      .array(shownUrlSchema.extend({ text: z.string().describe('fenced: the words around the link') }))
      .describe('never fetched'),
  }),
  async handle(ctx, args) {
    const thread = await metadataRead(ctx, args.threadId);
    const { header } = await import('../mail/summary.js');
    const h = findUnsubscribeHeaders(thread);
    if (h) {
      return {
        threadId: thread.id,
        source: 'header' as const,
        messageId: h.message.id,
        messageDate: new Date(h.message.internalDate).toISOString(),
        from: ctx.fence.wrap(header(h.message.headers, 'From')),
        newerMessagesWithoutHeader: h.newerMessages,
        options: describeOptions(h, ctx.fence),
        bodyCandidates: [],
      };
    }
    // No header anywhere: read the bodies (only now) to report links a human could follow.
    const full = await ctx.mailbox.getThread(args.threadId, { format: 'full', signal: ctx.signal });
    const { extractBody } = await import('../mail/body.js');
    const seen = new Set<string>();
    const candidates: Array<Shown & { text: string }> = [];
    for (const m of [...full.messages].reverse()) {
      if (m.labelIds.includes('SENT')) continue;
      const fromValue = m.headers.find((x) => x.name.toLowerCase() === 'from')?.value ?? '';
      const sender = domainOfAddress(parseAddressList(fromValue)[0]?.address ?? '');
      for (const c of bodyUnsubscribeCandidates(extractBody(m.root).text)) {
        if (seen.has(c.url) || candidates.length >= 5) continue;
        seen.add(c.url);
        candidates.push({
          ...fencedUrl(c.url, ctx.fence, sender === '' ? [] : [sender]),
          text: ctx.fence.wrap(c.text),
        });
      }
    }
    return {
      threadId: thread.id,
      source: candidates.length > 0 ? ('body' as const) : ('none' as const),
      bodyCandidates: candidates,
    };
  },
});

interface SenderGroup {
  address: string;
  name: string;
  threads: number;
  unread: number;
  first: number;
  last: number;
  newest: { threadId: string; at: number };
  withHeader?: { at: number; headers: UnsubscribeHeaders; threadId: string; listId: string };
}

export const listSubscriptions = defineTool({
  name: 'list_subscriptions',
  title: 'Who mails you in bulk',
  tier: 'read',
  access: 'read',
  description:
    "Group the threads matching a query (default newer_than:90d, at most maxThreads) by sender: thread and unread counts, date range, and the sender's unsubscribe options with the threadId to pass to unsubscribe. sendersFound counts senders before the topN cut.",
  input: z.strictObject({
    query: z.string().max(2000).default('newer_than:90d').describe('Gmail search query'),
    maxThreads: z.number().int().min(1).max(500).default(200),
    topN: z.number().int().min(1).max(100).default(25),
    listsOnly: z.boolean().default(false).describe('only senders with a List-Unsubscribe header'),
  }),
  output: z.object({
    senders: z.array(
      z.object({
        sender: z.string().describe('From address, fenced'),
        name: z.string().describe('display name, fenced'),
        threads: z.number(),
        unreadThreads: z.number(),
        firstDate: z.string(),
        lastDate: z.string(),
        newestThreadId: z.string(),
        listId: z.string().optional().describe('fenced'),
        unsubscribeThreadId: z.string().optional().describe('the thread whose headers gave the options'),
        unsubscribe: unsubscribeOptions.optional(),
      }),
    ),
    sendersFound: z.number(),
    threadsScanned: z.number(),
    moreThreadsMatched: z.boolean().describe('the query matched more than maxThreads'),
    usage,
  }),
  async handle(ctx, args) {
    const before = ctx.mailbox.usage();
    const ids: string[] = [];
    let pageToken: string | undefined;
    let cut = false;
    do {
      const page = await ctx.mailbox.searchThreads(args.query, {
        maxResults: Math.min(500, args.maxThreads - ids.length),
        signal: ctx.signal,
        ...(pageToken ? { pageToken } : {}),
      });
      const room = args.maxThreads - ids.length;
      cut ||= page.items.length > room;
      ids.push(...page.items.slice(0, room).map((t) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken && ids.length < args.maxThreads);
    let done = 0;
    const threads = await mapBounded(
      ids,
      readConcurrency(ctx.mailbox, THREAD_FETCH_CONCURRENCY),
      async (id) => {
        const t = await metadataRead(ctx, id).catch((e: unknown) => {
          // Gone between the search and the read (trashed elsewhere): not a sender to report.
          if (isMailError(e) && e.code === 'not_found') return undefined;
          throw e;
        });
        await ctx.progress(++done, ids.length, 'reading thread headers');
        return t;
      },
    );
    const groups = new Map<string, SenderGroup>();
    for (const t of uniqueById(threads.filter((x): x is NonNullable<typeof x> => x !== undefined))) {
      const m = threadSenderMessage(t);
      if (!m) continue;
      const fromRaw = m.headers.find((x) => x.name.toLowerCase() === 'from')?.value ?? '';
      const from = parseAddressList(fromRaw)[0] ?? { name: '', address: '' };
      const key = from.address.toLowerCase();
      const times = t.messages.filter((x) => !x.labelIds.includes('SENT')).map((x) => x.internalDate);
      const [lo, hi] = [Math.min(...times), Math.max(...times)];
      const g = groups.get(key) ?? {
        address: key,
        name: from.name,
        threads: 0,
        unread: 0,
        first: lo,
        last: hi,
        newest: { threadId: t.id, at: hi },
      };
      g.threads++;
      if (t.messages.some((x) => x.labelIds.includes('UNREAD'))) g.unread++;
      g.first = Math.min(g.first, lo);
      g.last = Math.max(g.last, hi);
      if (hi > g.newest.at) g.newest = { threadId: t.id, at: hi };
      const h = findUnsubscribeHeaders(t);
      if (h && (!g.withHeader || h.message.internalDate > g.withHeader.at)) {
        const listId = h.message.headers.find((x) => x.name.toLowerCase() === 'list-id')?.value ?? '';
        g.withHeader = { at: h.message.internalDate, headers: h, threadId: t.id, listId };
      }
      groups.set(key, g);
    }
    const ranked = [...groups.values()]
      .filter((g) => !args.listsOnly || g.withHeader !== undefined)
      .sort((a, b) => b.threads - a.threads || b.last - a.last);
    const after = ctx.mailbox.usage();
    const f = ctx.fence;
    return {
      senders: ranked.slice(0, args.topN).map((g) => ({
        sender: f.wrap(g.address),
        name: f.wrap(g.name),
        threads: g.threads,
        unreadThreads: g.unread,
        firstDate: new Date(g.first).toISOString(),
        lastDate: new Date(g.last).toISOString(),
        newestThreadId: g.newest.threadId,
        ...(g.withHeader
          ? {
              unsubscribeThreadId: g.withHeader.threadId,
              unsubscribe: describeOptions(g.withHeader.headers, f),
              ...(g.withHeader.listId ? { listId: f.wrap(g.withHeader.listId.slice(0, 300)) } : {}),
            }
          : {}),
      })),
      sendersFound: ranked.length,
      threadsScanned: threads.filter((t) => t !== undefined).length,
      moreThreadsMatched: pageToken !== undefined || cut,
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    };
  },
});
