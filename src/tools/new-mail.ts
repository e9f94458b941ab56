import { z } from 'zod';
import { MailError, invalidInput } from '../mail/errors.js';
import { aboveGmailMark, compareArrivals, gmailMarkAt } from '../mail/inbox-mark.js';
import type { Arrival, GmailMark, ImapMark, InboxMark } from '../mail/inbox-mark.js';
import type { Label, MailMessage, MailThread } from '../mail/types.js';
import { uniqueById } from '../mail/unique.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { InboxMarkStore } from '../store/inbox-mark.js';
import type { ToolContext } from './common/define.js';
import { defineTool, readConcurrency } from './common/define.js';
import { labelMap } from './common/labels-cache.js';
import { readListedThreads } from './common/thread-reads.js';
import { mailReaders } from './common/lazy.js';
import { fenceSignalDetails, signalDetailsSchema, signalsSchema, usage } from './common/schemas.js';
import { headerValue, parseAddressList } from '../mail/headers.js';
import { matchSenderRule } from '../policy/write-policy.js';
import type { SenderRules } from '../policy/write-policy.js';

/*
 * The sweep loop's reads (issue: "new mail, listed once"): list_new_mail lists INBOX mail above
 * the account's mark, oldest first; mark_handled moves the mark; check_new_mail answers a gate
 * that runs without a model. The mark itself: src/mail/inbox-mark.ts (format), src/store/
 * inbox-mark.ts (file).
 */

/** Lines asked for by default (issue: 75). */
export const DEFAULT_LIMIT = 75;
/**
 * Clients cut tool results at about 20,000 characters. The structured result is kept under this
 * (the text copy adds the fence notice, about 150): when `limit` lines would not fit, the oldest
 * that fit are listed and `more` says the rest wait (bench/new-mail.mjs measures it).
 */
const RESULT_BUDGET = 19_500;
/** Gmail: inbox messages examined per call at most (a first run on a huge inbox). */
const GMAIL_SCAN_MAX = 2000;
const GMAIL_PAGE = 500;
const THREAD_READS = 10;
/** A line's snippet: enough to recognise the mail. */
const SNIPPET_MAX = 120;
/** From and Subject on a line: what a person takes in at a glance (get_thread has them whole). */
const FIELD_MAX = 80;
const cap = (t: string): string => (t.length > FIELD_MAX ? `${t.slice(0, FIELD_MAX - 1)}…` : t);

export interface NewMailRef {
  uid?: number;
  id: string;
  threadId: string;
  internalDate: number;
  /** The message itself, where the provider read it with the listing (IMAP: its INBOX copy). */
  message?: MailMessage;
}

export interface NewMailFound {
  provider: 'imap' | 'gmail';
  mark: InboxMark | undefined;
  /** IMAP: INBOX's UIDVALIDITY differs from the mark's. */
  reset: boolean;
  excludedDecided: number;
  total: number;
  items: NewMailRef[];
  newest: { uid?: number; messageId?: string; date?: string } | undefined;
  topic: string | null;
  /** Gmail: the scan stopped at GMAIL_SCAN_MAX inbox messages. */
  truncated: boolean;
  uidNext?: number;
  uidValidity?: string;
}

function marksOf(ctx: ToolContext): InboxMarkStore {
  if (!ctx.inboxMarks)
    throw new MailError('unsupported', 'this server keeps no new-mail marks (no config dir was given to it)');
  return ctx.inboxMarks;
}

async function readMark(ctx: ToolContext, provider: 'imap' | 'gmail'): Promise<InboxMark | undefined> {
  const store = marksOf(ctx);
  const mark = await store.read(ctx.mailbox.account);
  if (mark !== undefined && mark.provider !== provider)
    throw new MailError(
      'internal_error',
      `the new-mail mark ${store.pathFor(ctx.mailbox.account)} is for a ${mark.provider} account, but account "${ctx.mailbox.account}" is ${provider}. Delete the file; the next list_new_mail lists the whole inbox again.`,
      { retryable: false },
    );
  return mark;
}

/** Everything new above the mark; `limit` refs described (0: count only, the cheapest). */
export async function findNewMail(ctx: ToolContext, limit: number, read?: 'full'): Promise<NewMailFound> {
  const mb = ctx.mailbox;
  if (mb.inboxSince) {
    const mark = (await readMark(ctx, 'imap')) as ImapMark | undefined;
    const a = await mb.inboxSince(mark, {
      limit,
      signal: ctx.signal,
      ...(read === undefined ? {} : { read }),
    });
    return {
      provider: 'imap',
      mark,
      reset: a.reset,
      excludedDecided: a.excludedDecided,
      total: a.total,
      items: a.items,
      newest: a.newestUid === undefined ? undefined : { uid: a.newestUid },
      topic: a.newestUid === undefined ? null : `imap:${a.uidValidity}:${a.newestUid}`,
      truncated: false,
      uidNext: a.uidNext,
      uidValidity: a.uidValidity,
    };
  }
  const mark = (await readMark(ctx, 'gmail')) as GmailMark | undefined;
  const found = await gmailArrivals(ctx, mark);
  const newest = found.list.at(-1);
  return {
    provider: 'gmail',
    mark,
    reset: false,
    excludedDecided: 0,
    total: found.list.length,
    items: found.list.slice(0, limit),
    newest:
      newest === undefined
        ? undefined
        : { messageId: newest.id, date: new Date(newest.internalDate).toISOString() },
    topic: newest === undefined ? null : `gmail:${newest.id}`,
    truncated: found.truncated,
  };
}

/**
 * Gmail has no UIDs: the index is asked for inbox mail since the mark's second (after: takes
 * epoch seconds, inclusive), and each hit's live labels and internal date decide (a stale index
 * hit that left the inbox is not new mail).
 */
async function gmailArrivals(
  ctx: ToolContext,
  mark: GmailMark | undefined,
): Promise<{ list: NewMailRef[]; truncated: boolean }> {
  const mb = ctx.mailbox;
  const query = mark === undefined ? 'in:inbox' : `in:inbox after:${Math.floor(mark.internalDate / 1000)}`;
  const threadIds: string[] = [];
  let pageToken: string | undefined;
  let seen = 0;
  let truncated = false;
  do {
    const page = await mb.searchMessages(query, {
      maxResults: GMAIL_PAGE,
      signal: ctx.signal,
      ...(pageToken === undefined ? {} : { pageToken }),
    });
    for (const r of page.items) threadIds.push(r.threadId);
    seen += page.items.length;
    pageToken = page.nextPageToken;
    if (seen >= GMAIL_SCAN_MAX && pageToken !== undefined) {
      truncated = true;
      break;
    }
  } while (pageToken !== undefined);
  // A thread deleted between the search and the read is simply not new mail.
  const threads = await readListedThreads(
    mb,
    [...new Set(threadIds)],
    { format: 'metadata', metadataHeaders: [], signal: ctx.signal },
    { concurrency: readConcurrency(mb, THREAD_READS) },
  );
  const list = uniqueById(
    threads
      .flatMap((t) => t?.messages ?? [])
      .filter((m) => m.labelIds.includes('INBOX') && aboveGmailMark(mark, m))
      .map((m) => ({ id: m.id, threadId: m.threadId, internalDate: m.internalDate })),
  ).sort(compareArrivals);
  return { list, truncated };
}

function markView(mark: InboxMark | undefined) {
  if (mark === undefined) return null;
  return mark.provider === 'imap'
    ? { provider: 'imap' as const, uidValidity: mark.uidValidity, uid: mark.uid, updatedAt: mark.updatedAt }
    : {
        provider: 'gmail' as const,
        internalDate: new Date(mark.internalDate).toISOString(),
        ids: mark.ids.length,
        updatedAt: mark.updatedAt,
      };
}

const markSchema = z
  .object({
    provider: z.enum(['imap', 'gmail']),
    uidValidity: z.string().optional(),
    uid: z.number().optional().describe('IMAP: highest INBOX UID decided'),
    internalDate: z.string().optional().describe('Gmail: arrival time of the newest message decided'),
    ids: z.number().optional().describe('Gmail: ids decided at exactly that time'),
    updatedAt: z.string(),
  })
  .nullable()
  .describe('null: no mark yet, so the whole inbox counts as new');

// One line per message, kept small so 75 fit under the ~20,000 characters clients keep: the
// search summary's fields, with empty ones left out and the snippet only when asked.
const line = z.object({
  uid: z.number().optional().describe('IMAP: INBOX UID, for mark_handled'),
  messageId: z.string(),
  threadId: z.string().optional().describe('absent when it is the messageId (a thread of one, Gmail)'),
  date: z.string().describe('arrival, ISO 8601 to the minute (UTC)'),
  from: z.string().describe('fenced mail text'),
  subject: z.string().describe('fenced mail text'),
  snippet: z.string().optional().describe('snippets: true only; fenced mail text'),
  unread: z.literal(true).optional().describe('absent when read'),
  labels: z.array(z.string()).optional().describe('besides INBOX; absent when none'),
  omitted: z.object({ labels: z.number() }).optional().describe('labels past 30, counted'),
  attachments: z.number().optional().describe('how many; absent when none (get_thread lists them)'),
  messageCount: z.number().optional().describe('messages in its thread; absent when 1'),
  signals: signalsSchema.optional().describe('absent when none'),
  signalDetails: signalDetailsSchema.optional(),
  senderRule: z
    .object({ action: z.enum(['archive', 'spam']), rule: z.string() })
    .optional()
    .describe('the sender rule the next sweep would apply to it; absent when none matches'),
});

/**
 * The sender rules (policy.json senderRules) move mail only in the sweep — at start, on its timer
 * and in `mailwarden sweep-rules` — never from these read-only tools, whose annotation a client
 * may auto-approve. list_new_mail marks each line a rule would move (the next sweep's work);
 * the rules are matched here on the From address alone, without reading or writing anything.
 */
async function senderRulesOf(ctx: ToolContext): Promise<SenderRules | undefined> {
  if (ctx.gate === undefined) return undefined;
  const { archive, spam } = (await ctx.gate()).rules.senderRules;
  return archive.length + spam.length === 0 ? undefined : { archive, spam };
}

const RULES_NOTE =
  'sender rules move mail only in the sweep (at start, on its timer, mailwarden sweep-rules), never while listing; lines with senderRule are what the next sweep would move';

const rulesSchema = z
  .object({
    matched: z.number().describe('listed lines a sender rule would move (each has senderRule)'),
    note: z.string(),
  })
  .optional()
  .describe('the sender rules in policy.json (list_sender_rules shows them), matched, not applied');

export const listNewMail = defineTool({
  name: 'list_new_mail',
  title: 'List new inbox mail',
  tier: 'read',
  access: 'read',
  description:
    "INBOX messages above this account's mark, oldest first, one line each (up to `limit`, about 20,000 characters; `more`: some wait). Only mark_handled moves the mark. IMAP: by UID (a renumbered INBOX is listed again and says so), labels from flags and keywords only; Gmail: by arrival time. Moves nothing: a line a sender rule would move carries senderRule.",
  input: z.strictObject({
    limit: z.number().int().min(1).max(200).default(DEFAULT_LIMIT),
    snippets: z.boolean().default(false).describe('add snippets (~150 characters a line)'),
  }),
  output: z.object({
    mark: markSchema,
    reset: z
      .object({ reason: z.string(), excludedDecided: z.number() })
      .optional()
      .describe("INBOX's UIDVALIDITY changed: every UID is new, so the whole inbox is listed again"),
    total: z.number().describe('messages above the mark'),
    messages: z.array(line),
    more: z
      .boolean()
      .describe(
        'more are new than listed (`limit`, or the ~20,000-character result budget); mark these handled to see the rest',
      ),
    markHandled: z
      .object({ uid: z.number().optional(), messageId: z.string().optional() })
      .optional()
      .describe('pass to mark_handled once every listed message is decided'),
    truncated: z.boolean().optional().describe('Gmail: only the newest 2000 inbox messages were examined'),
    rules: rulesSchema,
    usage,
  }),
  async handle(ctx, args) {
    const before = ctx.mailbox.usage();
    const senderRules = await senderRulesOf(ctx);
    const found = await findNewMail(ctx, args.limit, 'full');
    const messages = await describeLines(ctx, found.items, args.snippets, senderRules);
    const matched = messages.filter((m) => m.senderRule !== undefined).length;
    const rules = senderRules === undefined ? undefined : { matched, note: RULES_NOTE };
    const after = ctx.mailbox.usage();
    const result = {
      mark: markView(found.mark),
      ...(found.reset
        ? {
            reset: {
              reason: `INBOX's UIDVALIDITY is ${found.uidValidity}, the mark's was ${(found.mark as ImapMark).uidValidity}: the server renumbered the inbox (a reset or a fresh sync), so the old mark says nothing; mail the mark remembers as decided is left out`,
              excludedDecided: found.excludedDecided,
            },
          }
        : {}),
      total: found.total,
      messages,
      more: false,
      ...(found.truncated ? { truncated: true } : {}),
      ...(rules === undefined ? {} : { rules }),
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    };
    // Fewer lines than `limit` rather than a result the client cuts off: the oldest that fit.
    while (messages.length > 1 && JSON.stringify(result).length > RESULT_BUDGET) messages.pop();
    const last = messages.at(-1);
    result.more = found.total > messages.length;
    return {
      ...result,
      ...(last === undefined
        ? {}
        : { markHandled: last.uid === undefined ? { messageId: last.messageId } : { uid: last.uid } }),
    };
  },
});

/** Labels every provider names the same way: no label list is needed to show them. */
const SYSTEM_LABELS: ReadonlySet<string> = new Set([
  'INBOX',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'SPAM',
  'TRASH',
]);

async function describeLines(
  ctx: ToolContext,
  items: readonly NewMailRef[],
  snippets: boolean,
  senderRules: SenderRules | undefined,
) {
  if (items.length === 0) return [];
  const mb = ctx.mailbox;
  const { senderDomains, summarizeThread } = await mailReaders();
  const byThread = new Map<string, MailThread>();
  // Read with the listing (IMAP): each line is its own message, so no conversation is read; the
  // label names are asked only when a message carries a user label.
  const inline = items.every((i) => i.message !== undefined);
  const userLabels = items.some((i) => i.message?.labelIds.some((l) => !SYSTEM_LABELS.has(l)) === true);
  const [threads, labels] = await Promise.all([
    inline
      ? Promise.resolve([])
      : readListedThreads(
          mb,
          [...new Set(items.map((i) => i.threadId))],
          { format: 'full', signal: ctx.signal },
          { concurrency: readConcurrency(mb, THREAD_READS) },
        ),
    !inline || userLabels
      ? labelMap(mb, ctx.clock.now(), ctx.signal)
      : Promise.resolve(new Map<string, Label>()),
  ]);
  for (const t of threads) if (t) byThread.set(t.id, t);
  if (inline)
    for (const i of items) {
      const known = byThread.get(i.threadId);
      const m = i.message as MailMessage;
      if (known === undefined) byThread.set(i.threadId, { id: i.threadId, messages: [m] });
      else known.messages.push(m);
    }
  const references = senderDomains([...byThread.values()]);
  const f = ctx.fence;
  return items.flatMap((item) => {
    const thread = byThread.get(item.threadId);
    const m: MailMessage | undefined = thread?.messages.find((x) => x.id === item.id);
    // Gone between the listing and the read (another client moved it): not shown, still counted.
    if (thread === undefined || m === undefined) return [];
    const s = summarizeThread({ id: thread.id, messages: [m] }, labels, (n) => f.wrap(n), references);
    const snippet = s.snippet.length > SNIPPET_MAX ? `${s.snippet.slice(0, SNIPPET_MAX - 1)}…` : s.snippet;
    // summarizeThread already capped the labels (bounds.ts); the count of the rest rides along.
    const others = s.labels.filter((l) => l !== 'INBOX');
    const address = parseAddressList(headerValue(m.headers, 'From') ?? '')[0]?.address;
    const rule =
      senderRules === undefined || address === undefined ? undefined : matchSenderRule(senderRules, address);
    return [
      {
        ...(item.uid === undefined ? {} : { uid: item.uid }),
        messageId: m.id,
        ...(thread.id === m.id ? {} : { threadId: thread.id }),
        date: s.date.replace(/:\d{2}\.\d{3}Z$/, 'Z'),
        from: f.wrap(cap(s.from)),
        subject: f.wrap(cap(s.subject)),
        ...(snippets ? { snippet: f.wrap(snippet) } : {}),
        ...(s.unread ? { unread: true as const } : {}),
        ...(others.length > 0 ? { labels: others } : {}),
        ...(s.attachments.length > 0
          ? { attachments: s.attachments.length + (s.omitted?.attachments ?? 0) }
          : {}),
        ...(s.omitted?.labels === undefined ? {} : { omitted: { labels: s.omitted.labels } }),
        ...(!inline && thread.messages.length > 1 ? { messageCount: thread.messages.length } : {}),
        ...(s.signals.length > 0 ? { signals: s.signals } : {}),
        ...(s.signalDetails ? { signalDetails: fenceSignalDetails(s.signalDetails, f) } : {}),
        ...(rule === undefined ? {} : { senderRule: rule }),
      },
    ];
  });
}

export const markHandled = defineTool({
  name: 'mark_handled',
  title: 'Mark new mail handled',
  tier: 'manage',
  access: 'write',
  description:
    "Move this account's new-mail mark past one message (`uid` on IMAP, or `messageId`): list_new_mail stops listing it and all before it. Refused: a uid at or above INBOX's UIDNEXT, or a backwards move without allowBackwards. Changes no mail.",
  input: z.strictObject({
    uid: z.number().int().min(1).max(0xffffffff).optional().describe('IMAP: INBOX UID from list_new_mail'),
    messageId: z.string().min(1).max(256).optional(),
    allowBackwards: z.boolean().default(false),
  }),
  output: z.object({
    mark: markSchema,
    previous: markSchema,
    moved: z.enum(['forward', 'backward', 'unchanged']),
    usage: usage.describe('provider requests (IMAP: commands) this answer cost'),
  }),
  async handle(ctx, args) {
    if ((args.uid === undefined) === (args.messageId === undefined))
      throw invalidInput('uid', 'pass exactly one of uid and messageId');
    const store = marksOf(ctx);
    const mb = ctx.mailbox;
    const before = mb.usage();
    const now = ctx.clock.now();
    const backwards = (what: string): MailError =>
      invalidInput(
        args.uid === undefined ? 'messageId' : 'uid',
        `${what}: the mark would move backwards, and mail between would be listed again. Pass allowBackwards: true if that is what you want.`,
      );
    let next: InboxMark;
    let previous: InboxMark | undefined;
    let order: number;
    if (mb.uidMarkAt) {
      previous = (await readMark(ctx, 'imap')) as ImapMark | undefined;
      const target = args.uid === undefined ? { messageId: args.messageId as string } : { uid: args.uid };
      const at = await mb.uidMarkAt(target, ctx.signal);
      const same = previous?.uidValidity === at.uidValidity ? previous : undefined;
      order = same === undefined ? 1 : Math.sign(at.uid - same.uid);
      if (order < 0 && !args.allowBackwards)
        throw backwards(`UID ${at.uid} is below the mark's ${same?.uid}`);
      next = {
        version: 1,
        provider: 'imap',
        account: mb.account,
        uidValidity: at.uidValidity,
        uid: at.uid,
        decided: at.decided,
        updatedAt: new Date(now).toISOString(),
      };
    } else {
      if (args.messageId === undefined)
        throw invalidInput('uid', 'this Gmail account has no UIDs; pass the messageId from list_new_mail');
      previous = (await readMark(ctx, 'gmail')) as GmailMark | undefined;
      const m = await gmailArrival(mb, args.messageId, ctx.signal);
      const was: Arrival | undefined =
        previous === undefined
          ? undefined
          : { internalDate: previous.internalDate, id: previous.ids.at(-1) ?? '' };
      order = was === undefined ? 1 : previous?.ids.includes(m.id) ? 0 : Math.sign(compareArrivals(m, was));
      if (order < 0 && !args.allowBackwards)
        throw backwards(`that message arrived ${new Date(m.internalDate).toISOString()}, before the mark`);
      next = gmailMarkAt(mb.account, m, order < 0 ? undefined : previous, now);
    }
    await store.write(next);
    const after = mb.usage();
    return {
      mark: markView(next),
      previous: markView(previous),
      moved: order > 0 ? ('forward' as const) : order < 0 ? ('backward' as const) : ('unchanged' as const),
      usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    };
  },
});

async function gmailArrival(mb: Mailbox, messageId: string, signal: AbortSignal): Promise<Arrival> {
  const ref = await mb.getMessageLabels(messageId, signal);
  const thread = await mb.getThread(ref.threadId, { format: 'metadata', metadataHeaders: [], signal });
  const m = thread.messages.find((x) => x.id === messageId);
  if (m === undefined)
    throw new MailError('not_found', `no message ${messageId.slice(0, 40)} in this account`);
  return { id: m.id, internalDate: m.internalDate };
}

export const checkNewMailOutput = z.object({
  wake: z.boolean().describe('there is new mail, and its newest is not sinceTopic'),
  found: z.number().describe('messages above the mark'),
  newest: z
    .object({ uid: z.number().optional(), messageId: z.string().optional(), date: z.string().optional() })
    .nullable(),
  topic: z.string().nullable().describe('names the newest new message; pass as sinceTopic next time'),
  reset: z.boolean().optional().describe("IMAP: INBOX's UIDVALIDITY changed since the mark"),
  usage: usage.describe('provider requests (IMAP: commands) this answer cost'),
});
export type CheckNewMail = z.infer<typeof checkNewMailOutput>;

/** The gate's answer: the tool and `mailwarden check-new-mail` share it. */
export async function checkNewMail(ctx: ToolContext, sinceTopic: string | undefined): Promise<CheckNewMail> {
  const before = ctx.mailbox.usage();
  const found = await findNewMail(ctx, 0);
  const after = ctx.mailbox.usage();
  return {
    usage: { requests: after.requests - before.requests, quotaUnits: after.quotaUnits - before.quotaUnits },
    wake: found.total > 0 && found.topic !== sinceTopic,
    found: found.total,
    newest: found.newest ?? null,
    topic: found.topic,
    ...(found.reset ? { reset: true } : {}),
  };
}

export const checkNewMailTool = defineTool({
  name: 'check_new_mail',
  title: 'Check for new mail (gate)',
  tier: 'read',
  access: 'read',
  description:
    'Compact answer for a gate run without a model: {wake, found, newest, topic}. wake is false when nothing is new or the newest is still `sinceTopic` (the topic the last wake saw).',
  input: z.strictObject({ sinceTopic: z.string().max(200).optional() }),
  output: checkNewMailOutput,
  handle: (ctx, args) => checkNewMail(ctx, args.sinceTopic),
});
