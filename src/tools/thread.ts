import { z } from 'zod';
import { MailError, invalidInput } from '../mail/errors.js';
import type { Authentication } from '../mail/auth-results.js';
import { DKIM_RESULTS, DMARC_RESULTS, SPF_RESULTS } from '../mail/vocabulary.js';
import type { MessageView } from '../mail/summary.js';
import type { Fence } from '../mcp/untrusted.js';
import { EMPTY_BODY_REASONS, HIDDEN_REASONS } from '../mail/body-notes.js';
import { MAX_THREAD_MESSAGES, OMITTED_KEYS } from '../mail/bounds.js';
import type { Label, MailMessage } from '../mail/types.js';
import { defineTool, fenceOrEmpty } from './common/define.js';
import type { ToolContext } from './common/define.js';
import { labelMap } from './common/labels-cache.js';
import { mailReaders } from './common/lazy.js';
import { reusedChecksField, uncheckedPlacesField } from './common/schemas.js';

// 'unknown' stands for anything else a report says: a verdict field never holds free text.
const SPF = [...SPF_RESULTS, 'unknown'] as const;
const DKIM = [...DKIM_RESULTS, 'unknown'] as const;
const DMARC = [...DMARC_RESULTS, 'unknown'] as const;

const authentication = z
  .object({
    unchecked: z.literal(true).optional().describe('no report by the receiving server: nothing was checked'),
    authservId: z.string().optional(),
    spf: z.enum(SPF).optional(),
    dkim: z.enum(DKIM).optional(),
    dmarc: z.enum(DMARC).optional(),
    mailedBy: z.string().optional().describe('smtp.mailfrom domain'),
    signedBy: z.string().optional().describe('passing DKIM signature domain'),
    dkimAligned: z.boolean().optional().describe('relaxed (RFC 7489); only when dkim=pass'),
    alsoReported: z
      .partialRecord(z.enum(['spf', 'dkim', 'dmarc']), z.array(z.enum(SPF)))
      .optional()
      .describe('other results the same report gave for a method'),
    headerFrom: z.string().optional().describe('absent when the message has several From addresses'),
    fromDomains: z.array(z.string()).optional().describe('several From addresses: every From domain'),
    dmarcDomain: z.string().optional().describe('the domain the dmarc verdict was checked for'),
    dmarcOther: z
      .object({ result: z.enum(DMARC), domain: z.string().optional() })
      .optional()
      .describe('a DMARC verdict about a domain other than the one From domain: never read as the sender’s'),
    returnPath: z.string().optional(),
    otherReports: z.number().describe('reports not read'),
  })
  .describe(
    'only the topmost Authentication-Results by the receiving server is read (RFC 8601 §5); verdicts are RFC 8601 result names or unknown; domains are fenced',
  );

function fencedAuth(a: Authentication, f: Fence): Authentication {
  const out: Authentication = { ...a };
  for (const k of ['mailedBy', 'signedBy', 'headerFrom', 'returnPath', 'dmarcDomain'] as const) {
    const v = a[k];
    if (v !== undefined) out[k] = f.wrap(v);
  }
  if (a.fromDomains) out.fromDomains = a.fromDomains.map((d) => f.wrap(d));
  if (a.dmarcOther?.domain !== undefined)
    out.dmarcOther = { ...a.dmarcOther, domain: f.wrap(a.dmarcOther.domain) };
  return out;
}

/** Counts of what the result caps (src/mail/bounds.ts) left out, by list; absent when nothing. */
export const omittedSchema = z
  .partialRecord(z.enum(OMITTED_KEYS), z.number())
  .optional()
  .describe('what the size caps left out, counted by list (e.g. headers: 49900); absent when nothing');

const messageView = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  cc: z.string(),
  date: z.string(),
  subject: z.string(),
  unread: z.boolean(),
  labels: z.array(z.string()),
  body: z.string().optional().describe('fenced mail text'),
  bodySource: z.enum(['text', 'html', 'none']).optional(),
  quotedHistoryRemoved: z.boolean().optional(),
  bodyTruncated: z.boolean().optional(),
  emptyBodyReason: z
    .enum([...EMPTY_BODY_REASONS, 'only-quoted-history'])
    .optional()
    .describe(
      'why body is empty: no-text-part (see attachments), blank, all-hidden (see hiddenText), encrypted, not-fetched, only-quoted-history (bodies: new)',
    ),
  hiddenText: z
    .object({
      chars: z.number(),
      reasons: z.array(z.enum(HIDDEN_REASONS)),
      pieces: z
        .array(z.object({ reason: z.enum(HIDDEN_REASONS), text: z.string().describe('fenced') }))
        .optional()
        .describe('only with bodies: full and includeHidden: true'),
    })
    .optional()
    .describe('HTML text a person would not see (README: hidden-text rule): left out of body and counted'),
  headers: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
  attachments: z.array(
    z.object({
      filename: z.string(),
      mimeType: z.string(),
      size: z.number(),
      partId: z.string(),
      attachmentId: z.string().optional(),
    }),
  ),
  authentication,
  omitted: omittedSchema,
});

function fenced(v: MessageView, f: Fence): MessageView {
  const out: MessageView = {
    ...v,
    from: f.wrap(v.from),
    to: f.wrap(v.to),
    cc: v.cc === '' ? '' : f.wrap(v.cc),
    subject: f.wrap(v.subject),
    attachments: v.attachments.map((a) => ({
      ...a,
      filename: fenceOrEmpty(f, a.filename),
      mimeType: f.wrap(a.mimeType),
    })),
    authentication: fencedAuth(v.authentication, f),
  };
  if (v.body !== undefined) out.body = f.wrapText(v.body);
  if (v.hiddenText?.pieces)
    out.hiddenText = {
      ...v.hiddenText,
      pieces: v.hiddenText.pieces.map((p) => ({ ...p, text: f.wrap(p.text) })),
    };
  if (v.headers) out.headers = v.headers.map((h) => ({ name: f.wrap(h.name), value: f.wrap(h.value) }));
  return out;
}

/** Body parts a provider served by attachment id are fetched up to this size (inline text, an embedded message). */
const MAX_BODY_PART_BYTES = 5 * 1024 * 1024;

/**
 * Gmail serves every part with a file name by attachment id — an inline text part and a root
 * message/rfc822 included — so the body would be empty without these bytes. Fetched here (src/mail
 * does no I/O); a part too big or failing to fetch leaves the body's emptyBodyReason "not-fetched".
 */
async function fetchBodyParts(ctx: ToolContext, messages: readonly MailMessage[]): Promise<void> {
  const { bodyPartsToFetch } = await import('../mail/body.js');
  for (const m of messages) {
    for (const node of bodyPartsToFetch(m.root)) {
      if (node.attachmentId === undefined || node.size > MAX_BODY_PART_BYTES) continue;
      try {
        node.body = await ctx.mailbox.getAttachment(m.id, node.attachmentId, ctx.signal);
      } catch (e) {
        if (ctx.signal?.aborted) throw e;
      }
    }
  }
}

/** Reading options get_thread and get_message share. */
const readShape = {
  bodies: z.enum(['full', 'text', 'new', 'none']).default('text'),
  maxBodyChars: z.number().int().min(100).max(100_000).default(20_000).describe('per message'),
  includeHidden: z.boolean().default(false).describe('bodies full: also the hidden HTML text, fenced'),
};

interface ReadArgs {
  bodies: 'full' | 'text' | 'new' | 'none';
  maxBodyChars: number;
  includeHidden: boolean;
}

/** The one per-message rendering get_thread and get_message share: body parts fetched, then fenced. */
async function viewMessages(
  ctx: ToolContext,
  messages: readonly MailMessage[],
  args: ReadArgs,
  /** Started by the caller alongside its read (one labels.list, then cached a minute). */
  labelsRead: Promise<Map<string, Label>>,
): Promise<MessageView[]> {
  const { viewMessage, fitViews } = await mailReaders();
  const labels = await labelsRead;
  if (args.bodies !== 'none') await fetchBodyParts(ctx, messages);
  // Gmail's receiving server is mx.google.com; an IMAP account trusts only the authserv-id its
  // configuration names (accounts add --authserv-id), and without one every message is unchecked.
  const authservId = ctx.mailbox.trustedAuthservId;
  const views = messages.map((m) =>
    viewMessage(
      m,
      labels,
      (n) => ctx.fence.wrap(n),
      args.bodies,
      args.maxBodyChars,
      authservId,
      args.includeHidden,
    ),
  );
  fitViews(views);
  return views.map((v) => fenced(v, ctx.fence));
}

export const getThread = defineTool({
  name: 'get_thread',
  title: 'Read a thread',
  tier: 'read',
  access: 'read',
  description:
    "Read a thread's messages, oldest first (at most the newest 100). bodies: text (default; HTML as text with link targets), new (without quoted history), full (plus the headers), none. lastN / afterMessageId pick messages (messageCount, omittedMessages: always given); what the size caps leave out is counted in omitted. Never marks mail read.",
  input: z.strictObject({
    threadId: z.string().min(1).max(256),
    bodies: readShape.bodies,
    lastN: z.number().int().min(1).max(100).optional().describe('only the newest N messages'),
    afterMessageId: z.string().min(1).max(256).optional().describe('only messages after this one'),
    maxBodyChars: readShape.maxBodyChars,
    includeHidden: readShape.includeHidden,
  }),
  output: z.object({
    threadId: z.string(),
    subject: z.string(),
    messageCount: z.number(),
    omittedMessages: z.number(),
    messages: z.array(messageView),
    reusedChecks: reusedChecksField,
    uncheckedPlaces: uncheckedPlacesField,
  }),
  async handle(ctx, args) {
    if (args.includeHidden && args.bodies !== 'full')
      throw invalidInput('includeHidden', 'includeHidden needs bodies: "full"');
    const { header } = await mailReaders();
    const labels = labelMap(ctx.mailbox, ctx.clock.now(), ctx.signal);
    labels.catch(() => undefined);
    const thread = await ctx.mailbox.getThread(args.threadId, { format: 'full', signal: ctx.signal });
    let messages = thread.messages;
    if (args.afterMessageId !== undefined) {
      const at = messages.findIndex((m) => m.id === args.afterMessageId);
      if (at < 0)
        throw invalidInput(
          'afterMessageId',
          `message ${args.afterMessageId} is not in thread ${args.threadId}`,
        );
      messages = messages.slice(at + 1);
    }
    messages = messages.slice(-(args.lastN ?? MAX_THREAD_MESSAGES));
    const first = thread.messages[0];
    return {
      threadId: thread.id,
      subject: ctx.fence.wrap(first ? header(first.headers, 'Subject') : ''),
      messageCount: thread.messages.length,
      omittedMessages: thread.messages.length - messages.length,
      messages: await viewMessages(ctx, messages, args, labels),
    };
  },
});

/** The message, by messages.get where the provider has it, else from its thread. */
async function readMessage(ctx: ToolContext, messageId: string): Promise<MailMessage> {
  const options = { format: 'full' as const, signal: ctx.signal };
  if (ctx.mailbox.getMessage) return ctx.mailbox.getMessage(messageId, options);
  const { threadId } = await ctx.mailbox.getMessageLabels(messageId, ctx.signal);
  const thread = await ctx.mailbox.getThread(threadId, options);
  const m = thread.messages.find((x) => x.id === messageId);
  if (m === undefined)
    throw new MailError('not_found', `message ${messageId.slice(0, 40)} is no longer in its thread`);
  return m;
}

export const getMessage = defineTool({
  name: 'get_message',
  title: 'Read one message',
  tier: 'read',
  access: 'read',
  description:
    'Read one message by id (from search, get_thread or list_new_mail) with the fields get_thread gives each message; bodies as in get_thread. Reading never marks mail read.',
  input: z.strictObject({
    messageId: z.string().min(1).max(256),
    ...readShape,
  }),
  output: z.object({
    threadId: z.string(),
    message: messageView,
    reusedChecks: reusedChecksField,
    uncheckedPlaces: uncheckedPlacesField,
  }),
  async handle(ctx, args) {
    if (args.includeHidden && args.bodies !== 'full')
      throw invalidInput('includeHidden', 'includeHidden needs bodies: "full"');
    const labels = labelMap(ctx.mailbox, ctx.clock.now(), ctx.signal);
    labels.catch(() => undefined);
    const m = await readMessage(ctx, args.messageId);
    const [view] = await viewMessages(ctx, [m], args, labels);
    return { threadId: m.threadId, message: view as MessageView };
  },
});
