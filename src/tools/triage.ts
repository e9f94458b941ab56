import { z } from 'zod';
import { uniqueById } from '../mail/unique.js';
import { invalidInput } from '../mail/errors.js';
import type * as FollowUps from '../mail/follow-ups.js';
import { parseQuery } from '../mail/query/index.js';
import type * as Triage from '../mail/triage.js';
import type { MailThread } from '../mail/types.js';
import { verifyThreads } from '../mail/verify.js';
import type { ThreadReadOptions } from '../providers/mailbox.js';
import { defineTool, readConcurrency } from './common/define.js';
import type { ToolContext } from './common/define.js';
import { shownLabel } from '../mail/label-names.js';
import { labelMap } from './common/labels-cache.js';
import { readListedThreads } from './common/thread-reads.js';
import { reusedChecksField, signalsSchema, uncheckedPlacesField, usage } from './common/schemas.js';

/** Thread reads in flight at once: the same politeness as search. */
const THREAD_FETCH_CONCURRENCY = 10;
const DAY_MS = 86_400_000;

/**
 * The reasoning modules pull in the charset and HTML stack, which tools load on first call
 * (lazy.ts). follow_ups' fan-out merge is synchronous and runs only after at least one account's
 * handle() succeeded; handle() loads the module before its first request, so it is there then.
 */
let followUpsModule: typeof FollowUps | undefined;
const loadFollowUps = async (): Promise<typeof FollowUps> =>
  (followUpsModule ??= await import('../mail/follow-ups.js'));
function loadedFollowUps(): typeof FollowUps {
  if (!followUpsModule) throw new Error('follow_ups: merge before any account ran');
  return followUpsModule;
}
const loadTriage = (): Promise<typeof Triage> => import('../mail/triage.js');

/** Thread ids as the index lists them, newest first, at most `max`. */
async function listIds(
  ctx: ToolContext,
  query: string,
  max: number,
): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  let more = false;
  do {
    const page = await ctx.mailbox.searchThreads(query, {
      maxResults: Math.min(500, max - ids.length),
      signal: ctx.signal,
      ...(pageToken ? { pageToken } : {}),
    });
    const room = max - ids.length;
    more ||= page.items.length > room;
    ids.push(...page.items.slice(0, room).map((t) => t.id));
    pageToken = page.nextPageToken;
  } while (pageToken && ids.length < max);
  return { ids, more: more || pageToken !== undefined };
}

/**
 * Reads threads concurrently (bounded); a thread gone since the listing is left out, not an
 * error. `then` may read a thread again (in the same slot, so the bound holds and no phase
 * waits for the slowest read of the one before).
 */
async function readThreads(
  ctx: ToolContext,
  ids: readonly string[],
  options: Omit<ThreadReadOptions, 'signal'>,
  what: string,
  then?: (t: MailThread) => Promise<MailThread>,
): Promise<MailThread[]> {
  let done = 0;
  const read = await readListedThreads(
    ctx.mailbox,
    ids,
    { ...options, signal: ctx.signal },
    {
      concurrency: readConcurrency(ctx.mailbox, THREAD_FETCH_CONCURRENCY),
      then: async (found) => {
        const t = found && then ? await then(found) : found;
        await ctx.progress(++done, ids.length, what);
        return t;
      },
    },
  );
  return uniqueById(read.filter((t): t is MailThread => t !== undefined));
}

const scan = (query: string, list: { ids: string[]; more: boolean }, checked: { dropped: unknown[] }) => ({
  query,
  indexHits: list.ids.length,
  corrected: checked.dropped.length,
  moreMatched: list.more,
});

const spent = (ctx: ToolContext, before: { requests: number; quotaUnits: number }) => {
  const after = ctx.mailbox.usage();
  return { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits };
};

const SIGNALS = signalsSchema.element.options;
const examples = z.array(z.string()).describe('newest threadIds, at most 3');
const tally = z.object({ threads: z.number(), examples });
const bucket = tally.extend({ unread: z.number() });
/** Records, not objects with a property per name: the schema then spells a bucket out once. */
const signalKey = z.enum(SIGNALS);
const verification = z.object({
  predicates: z.array(z.string()).describe('label-state predicates re-checked on live labels'),
  indexHits: z.number(),
  dropped: z.number().describe('index hits whose live labels contradict the query'),
});

export const triageDigest = defineTool({
  name: 'triage_digest',
  title: 'Digest of a slice of mail',
  tier: 'read',
  access: 'read',
  description:
    'Overview of the threads matching a query (default in:inbox, at most maxThreads), not a list: top senders with signals, label and age buckets, unread (live labels) and attachment counts, threads per signal, each with up to 3 example threadIds. readParts: false skips opening multipart mail (notJudged counts it).',
  input: z.strictObject({
    query: z.string().max(2000).default('in:inbox').describe('Gmail search query'),
    maxThreads: z.number().int().min(1).max(500).default(200),
    topSenders: z.number().int().min(1).max(50).default(10),
    readParts: z
      .boolean()
      .default(true)
      .describe('open multipart/mixed mail to find attachments and invites'),
  }),
  output: z.object({
    query: z.string(),
    threads: z.number().describe('threads judged'),
    moreThreadsMatched: z.boolean().describe('the query matched more than maxThreads'),
    asOf: z.string().describe('server clock; ages count back from it'),
    unread: tally.describe('threads with an unread message, by live labels'),
    attachments: tally.describe('threads with a non-inline attachment'),
    signals: z.record(signalKey, bucket).describe('threads per signal'),
    ages: z
      .record(z.enum(['today', 'thisWeek', 'thisMonth', 'older']), bucket)
      .describe('newest message: today < 1 day, thisWeek 1-7 days, thisMonth 7-30 days, older'),
    labels: z.array(bucket.extend({ label: z.string() })).describe('live labels, most threads first'),
    labelsFound: z.number(),
    senders: z.array(
      bucket.extend({
        address: z.string().describe('fenced'),
        name: z.string().describe('display name, fenced'),
        lastDate: z.string(),
        signals: z.partialRecord(signalKey, z.number()).describe('threads per signal (absent: none)'),
      }),
    ),
    sendersFound: z.number(),
    verification,
    reusedChecks: reusedChecksField,
    uncheckedPlaces: uncheckedPlacesField,
    notJudged: z.object({
      gone: z.number().describe('listed, then not found when read'),
      partsNotRead: z.number().describe('threads whose attachments and invites were not looked for'),
    }),
    usage,
  }),
  async handle(ctx, args) {
    const node = parseQuery(args.query);
    const triage = await loadTriage();
    const { senderDomains } = await import('../mail/signals.js');
    const before = ctx.mailbox.usage();
    const now = ctx.clock.now();
    const [listing, labels] = await Promise.all([
      listIds(ctx, args.query, args.maxThreads),
      labelMap(ctx.mailbox, now, ctx.signal),
    ]);
    const meta = { format: 'metadata' as const, metadataHeaders: triage.TRIAGE_HEADERS };
    // Where the top-level type can hide attachments or an invite, read the parts right away.
    const openParts = async (t: MailThread): Promise<MailThread> =>
      args.readParts && triage.threadNeedsParts(t)
        ? ((
            await readListedThreads(
              ctx.mailbox,
              [t.id],
              { format: 'full', signal: ctx.signal },
              { concurrency: 1 },
            )
          )[0] ?? t)
        : t;
    const read = await readThreads(ctx, listing.ids, meta, 'reading threads', openParts);
    const outcome = verifyThreads(node, read);
    const kept = outcome.kept;
    const references = senderDomains(kept);
    const digest = triage.aggregateDigest(
      kept.map((t) => triage.threadFacts(t, references)),
      {
        now,
        topSenders: args.topSenders,
        maxLabels: 30,
        labelName: (id) => shownLabel(labels.get(id), id, (n) => ctx.fence.wrap(n)),
      },
    );
    const f = ctx.fence;
    const { partsNotRead, ...counts } = digest;
    return {
      query: args.query,
      moreThreadsMatched: listing.more,
      asOf: new Date(now).toISOString(),
      ...counts,
      senders: digest.senders.map((s) => ({ ...s, address: f.wrap(s.address), name: f.wrap(s.name) })),
      verification: {
        predicates: outcome.predicates,
        indexHits: listing.ids.length,
        dropped: outcome.dropped.length,
      },
      notJudged: { gone: listing.ids.length - read.length, partsNotRead },
      usage: spent(ctx, before),
    };
  },
});

const followUp = z.object({
  threadId: z.string(),
  subject: z.string().describe('fenced'),
  counterpart: z.string().describe('fenced'),
  lastDate: z.string(),
  daysWaiting: z.number(),
  unread: z.boolean().optional().describe('awaitingYou and setAside: the last message is unread'),
  account: z.string().optional().describe('account "all": the account it is in'),
});
const scanned = z.object({
  query: z.string(),
  indexHits: z.number(),
  corrected: z.number().describe('index hits whose live labels contradict the query (e.g. archived since)'),
  moreMatched: z.boolean().describe('more than maxThreads matched; the oldest were not judged'),
});
const accountError = z.object({ code: z.string(), message: z.string() });
const followUpsOutput = z.object({
  owner: z.string().describe('the mailbox address (getProfile)'),
  asOf: z.string(),
  awaitingReply: z.array(
    followUp.extend({
      automatedRepliesAfter: z.number().optional().describe('auto-replies or bounces after yours'),
    }),
  ),
  awaitingYou: z.array(followUp),
  setAside: z
    .array(
      followUp.extend({
        reason: z.enum(['replyToMismatch', 'displayNameSpoof', 'lookalikeDomain', 'claimsYourAddress']),
      }),
    )
    .describe('asks for a reply but looks spoofed: judge the sender before answering'),
  scanned: z.object({ sent: scanned, inbox: scanned.extend({ bodiesRead: z.number() }) }),
  reusedChecks: reusedChecksField,
  notJudged: z.object({ gone: z.number().describe('listed, then not found when read') }),
  usage,
  accounts: z
    .array(z.object({ account: z.string(), ok: z.boolean(), error: accountError.optional() }))
    .optional(),
});

const NOT_BULK = '-category:promotions -category:social -category:updates -category:forums';

export const followUps = defineTool({
  name: 'follow_ups',
  title: 'Who owes whom a reply',
  tier: 'read',
  access: 'read',
  description:
    'awaitingReply: threads you wrote last, olderThanDays or more ago (within withinDays), to someone else, unanswered (auto-replies and notes to self do not count). awaitingYou: inbox threads whose last message is a person asking you something. Judged on live labels; spoofed-looking requests are setAside. Newest first.',
  input: z.strictObject({
    olderThanDays: z.number().int().min(0).max(365).default(3),
    withinDays: z.number().int().min(1).max(366).default(30).describe('look back this far for both lists'),
    maxThreads: z.number().int().min(1).max(500).default(200).describe('per list'),
  }),
  output: followUpsOutput,
  // The parts are handle()'s own results, which are FollowUpsResult values.
  fanOut: (parts) => loadedFollowUps().mergeFollowUps(parts as readonly FollowUps.AccountPart[]),
  async handle(ctx, args) {
    if (args.withinDays <= args.olderThanDays)
      throw invalidInput('withinDays', `must be more than olderThanDays (${args.olderThanDays})`);
    const fu = await loadFollowUps();
    const { senderDomains } = await import('../mail/signals.js');
    const before = ctx.mailbox.usage();
    const now = ctx.clock.now();
    // Epoch seconds (Gmail accepts them in after:/before:) keep the window on the server's clock.
    const sec = (ms: number): number => Math.floor(ms / 1000);
    const since = `after:${sec(now - args.withinDays * DAY_MS)}`;
    const sentQuery = `in:sent ${since} before:${sec(now - args.olderThanDays * DAY_MS) + 1}`;
    const inboxQuery = `in:inbox ${since}`;
    // Every listed thread is read once: its senders are the references a lookalike is compared
    // with, so even bulk mail is read. A thread whose last word can wait on you is outside the
    // bulk categories (follow-ups.ts skips those), so the index's list of such threads is read
    // with bodies at once instead of twice; the live labels decide as before.
    const [profile, sentList, inboxList, personalList] = await Promise.all([
      ctx.mailbox.getProfile(ctx.signal),
      listIds(ctx, sentQuery, args.maxThreads),
      listIds(ctx, inboxQuery, args.maxThreads),
      listIds(ctx, `${inboxQuery} ${NOT_BULK}`, args.maxThreads),
    ]);
    const personal = new Set(personalList.ids);
    const ids = [...new Set([...sentList.ids, ...inboxList.ids])];
    const meta = { format: 'metadata' as const, metadataHeaders: fu.FOLLOW_UP_HEADERS };
    const withBodies = ids.filter((id) => personal.has(id));
    const byId = new Map(
      [
        ...(await readThreads(ctx, withBodies, { format: 'full' }, 'reading last messages')),
        ...(await readThreads(
          ctx,
          ids.filter((id) => !personal.has(id)),
          meta,
          'reading last messages',
        )),
      ].map((t) => [t.id, t]),
    );
    const pick = (list: string[]) => list.flatMap((id) => byId.get(id) ?? []);
    const sent = verifyThreads(parseQuery(sentQuery), pick(sentList.ids));
    const inbox = verifyThreads(parseQuery(inboxQuery), pick(inboxList.ids));
    const jc = { owner: profile.emailAddress, now, references: senderDomains([...byId.values()]) };
    const window = { olderThanDays: args.olderThanDays, withinDays: args.withinDays };

    const awaitingReply = sent.kept.flatMap((t) => {
      const v = fu.judgeAwaitingReply(t, jc, window);
      return 'item' in v ? [v.item] : [];
    });
    const awaitingYou: FollowUps.FollowUpItem[] = [];
    const setAside: Array<FollowUps.FollowUpItem & { reason: FollowUps.Suspicion }> = [];
    const needBodies: string[] = [];
    const take = (v: FollowUps.YouVerdict, t: MailThread): void => {
      if (v.kind === 'awaiting') awaitingYou.push(v.item);
      else if (v.kind === 'setAside') setAside.push({ ...v.item, reason: v.reason });
      else if (v.kind === 'needsBody') needBodies.push(t.id);
    };
    for (const t of inbox.kept)
      take(fu.judgeAwaitingYou(t, jc, { withinDays: args.withinDays, bodies: personal.has(t.id) }), t);
    const full = await readThreads(ctx, needBodies, { format: 'full' }, 'reading questions');
    for (const t of full) take(fu.judgeAwaitingYou(t, jc, { withinDays: args.withinDays, bodies: true }), t);

    const f = ctx.fence;
    const show = <T extends FollowUps.FollowUpItem>(items: T[]): T[] =>
      fu
        .newestFirst(items)
        .map((i) => ({ ...i, subject: f.wrap(i.subject), counterpart: f.wrap(i.counterpart) }));
    return {
      owner: profile.emailAddress,
      asOf: new Date(now).toISOString(),
      awaitingReply: show(awaitingReply),
      awaitingYou: show(awaitingYou),
      setAside: show(setAside),
      scanned: {
        sent: scan(sentQuery, sentList, sent),
        inbox: { ...scan(inboxQuery, inboxList, inbox), bodiesRead: withBodies.length + full.length },
      },
      notJudged: { gone: ids.length - byId.size + (needBodies.length - full.length) },
      usage: spent(ctx, before),
    };
  },
});
