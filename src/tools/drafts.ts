import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { MailError, invalidInput } from '../mail/errors.js';
import type { Address } from '../mail/headers.js';
import type { Header, MailMessage } from '../mail/types.js';
import type { DraftInput, DraftRef } from '../providers/mailbox.js';
import type { ToolContext } from './common/define.js';
import { defineTool } from './common/define.js';

/**
 * The drafts tier (opt-in, off by default): the one exception to "no send path" (docs/architecture.md,
 * promise 1). A draft waits in the Drafts folder until a person opens it and presses Send;
 * mailwarden has no tool and no allowed endpoint that sends one.
 */

/** The MIME/charset stack loads on first use, not at start-up (see lazy.ts). */
const drafting = () => import('../mail/draft.js');

const NOTE =
  'Saved in Drafts. mailwarden cannot send it: the user reviews it and sends it from their mail app.';
const address = z.string().min(3).max(320);
const recipients = (what: string) => z.array(address).max(50).default([]).describe(what);
const body = z.string().max(200_000).describe('plain text');

const draftOut = {
  draftId: z.string(),
  messageId: z.string(),
  threadId: z.string(),
  note: z.string(),
};

function draftsOf(ctx: ToolContext): (input: DraftInput, signal?: AbortSignal) => Promise<DraftRef> {
  const create = ctx.mailbox.createDraft;
  if (!create) {
    throw new MailError(
      'unsupported',
      `the ${ctx.mailbox.provider} account "${ctx.mailbox.account}" cannot save drafts`,
    );
  }
  return create.bind(ctx.mailbox);
}

function show(a: Address): string {
  return a.name === '' ? a.address : `${a.name} <${a.address}>`;
}

export const createDraft = defineTool({
  name: 'create_draft',
  title: 'Save a draft',
  tier: 'drafts',
  access: 'write',
  description:
    'Save a new plain-text email in Drafts for the user to review and send. mailwarden never sends mail. One address per list item ("a@b.example" or "Name <a@b.example>").',
  input: z.strictObject({
    to: z.array(address).min(1).max(50),
    cc: recipients('carbon copy'),
    bcc: recipients('blind copy (kept in the draft; removed when the user sends it)'),
    subject: z.string().max(500).default(''),
    body,
  }),
  output: z.object({
    ...draftOut,
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    subject: z.string(),
  }),
  async handle(ctx, args) {
    const d = await drafting();
    const save = draftsOf(ctx);
    const to = d.parseRecipients('to', args.to);
    const cc = d.parseRecipients('cc', args.cc);
    const bcc = d.parseRecipients('bcc', args.bcc);
    d.checkHeaderText('subject', args.subject);
    d.checkBodyText('body', args.body);
    const me = await ctx.mailbox.getProfile(ctx.signal);
    const from = { name: '', address: me.emailAddress };
    const raw = d.buildDraft({
      from,
      to,
      cc,
      bcc,
      subject: args.subject.trim(),
      body: args.body,
      date: ctx.clock.now(),
      messageId: d.newMessageId(randomUUID(), from),
    });
    const ref = await save({ raw }, ctx.signal);
    return {
      draftId: ref.id,
      messageId: ref.messageId,
      threadId: ref.threadId,
      to: to.map(show),
      cc: cc.map(show),
      bcc: bcc.map(show),
      subject: args.subject.trim(),
      note: NOTE,
    };
  },
});

/** A header as it stands (not RFC 2047-decoded: address parsing must see encoded commas intact). */
function rawHeader(headers: readonly Header[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  return headers.find((h) => h.name.toLowerCase() === wanted)?.value;
}

const PARENT_HEADERS = ['From', 'Reply-To', 'To', 'Cc', 'Subject', 'Message-ID', 'References', 'In-Reply-To'];

export const draftReply = defineTool({
  name: 'draft_reply',
  title: 'Draft a reply',
  tier: 'drafts',
  access: 'write',
  description:
    'Save a plain-text reply to a thread\'s latest message in Drafts, threaded (In-Reply-To, References, "Re:" subject) and addressed to its Reply-To or From; replyAll adds the other recipients except the user. The user reviews and sends it; mailwarden never sends mail.',
  input: z.strictObject({
    threadId: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'a thread id from search')
      .max(64),
    body,
    replyAll: z.boolean().default(false),
  }),
  output: z.object({
    ...draftOut,
    inReplyTo: z
      .string()
      .optional()
      .describe('Message-ID of the message replied to; absent when it has none'),
    to: z.array(z.string()).describe('fenced mail text'),
    cc: z.array(z.string()).describe('fenced mail text'),
    subject: z.string().describe('fenced mail text'),
    skippedRecipients: z
      .array(z.string())
      .describe('addresses in the message that cannot be written; fenced'),
  }),
  async handle(ctx, args) {
    const d = await drafting();
    const save = draftsOf(ctx);
    d.checkBodyText('body', args.body);
    const [me, thread] = await Promise.all([
      ctx.mailbox.getProfile(ctx.signal),
      ctx.mailbox.getThread(args.threadId, {
        format: 'metadata',
        metadataHeaders: PARENT_HEADERS,
        signal: ctx.signal,
      }),
    ]);
    // Earlier drafts in the thread are not what a reply answers.
    const parent: MailMessage | undefined = thread.messages
      .filter((m) => !m.labelIds.includes('DRAFT'))
      .at(-1);
    if (parent === undefined) throw invalidInput('threadId', 'the thread has no message to reply to');
    const h = (name: string) => rawHeader(parent.headers, name);
    const { headerValue } = await import('../mail/headers.js');
    const recipients = d.replyRecipients(
      { from: h('From'), replyTo: h('Reply-To'), to: h('To'), cc: h('Cc') },
      me.emailAddress,
      args.replyAll,
    );
    if (recipients.to.length === 0) {
      throw new MailError('invalid_input', 'the message has no address mailwarden can write a reply to', {
        field: 'threadId',
      });
    }
    const threading = d.replyThreading({
      messageId: h('Message-ID'),
      references: h('References'),
      inReplyTo: h('In-Reply-To'),
    });
    const subject = d.replySubject(d.cleanHeaderText(headerValue(parent.headers, 'Subject') ?? ''));
    const from = { name: '', address: me.emailAddress };
    const raw = d.buildDraft({
      from,
      to: recipients.to,
      cc: recipients.cc,
      bcc: [],
      subject,
      body: args.body,
      date: ctx.clock.now(),
      messageId: d.newMessageId(randomUUID(), from),
      ...(threading === undefined ? {} : threading),
    });
    const ref = await save({ raw, threadId: thread.id }, ctx.signal);
    const f = ctx.fence;
    return {
      draftId: ref.id,
      messageId: ref.messageId,
      threadId: ref.threadId,
      ...(threading === undefined ? {} : { inReplyTo: threading.inReplyTo }),
      to: recipients.to.map((a) => f.wrap(show(a))),
      cc: recipients.cc.map((a) => f.wrap(show(a))),
      subject: f.wrap(subject),
      skippedRecipients: recipients.skipped.map((a) => f.wrap(a)),
      note: NOTE,
    };
  },
});
