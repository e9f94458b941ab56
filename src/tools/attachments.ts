import { z } from 'zod';
import { DEFAULT_LIMITS, MiB, SKIP_REASONS } from '../mail/archive/limits.js';
import type { LocatedAttachment } from '../mail/archive/locate.js';
import { invalidInput, MailError } from '../mail/errors.js';
import type { MailThread } from '../mail/types.js';
import { resolveDownloadDir } from '../store/downloads.js';
import { defineTool, fenceOrEmpty } from './common/define.js';
import type { ToolContext } from './common/define.js';

/** Attachments download_attachment will hold in memory to save (Gmail accepts 25 MB per message). */
const MAX_DOWNLOAD_BYTES = 64 * MiB;

const which = {
  threadId: z.string().min(1).max(256).optional(),
  messageId: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('with partId, when the thread has several messages'),
  partId: z
    .string()
    .max(100)
    .optional()
    .describe('from get_thread\'s attachments; preferred ("": the message root)'),
  attachmentId: z.string().min(1).max(4000).optional().describe("from get_thread's attachments"),
  filename: z.string().min(1).max(1000).optional().describe('exact name, when unambiguous'),
};

interface Which {
  threadId?: string | undefined;
  messageId?: string | undefined;
  partId?: string | undefined;
  attachmentId?: string | undefined;
  filename?: string | undefined;
}

interface Fetched {
  thread: MailThread;
  found: LocatedAttachment;
  bytes: Uint8Array;
  filename: string;
}

/** Finds the attachment and fetches its bytes, refusing before the fetch when it is too big. */
async function fetchAttachment(
  ctx: ToolContext,
  args: Which,
  maxBytes: number,
  hint: string,
): Promise<Fetched> {
  if (args.threadId === undefined && args.messageId === undefined)
    throw invalidInput('threadId', 'give threadId or messageId');
  if (args.partId === undefined && args.attachmentId === undefined && args.filename === undefined)
    throw invalidInput('partId', 'name the attachment by partId, attachmentId or filename');
  const { locateAttachment } = await import('../mail/archive/locate.js');
  const threadId =
    args.threadId ?? (await ctx.mailbox.getMessageLabels(args.messageId as string, ctx.signal)).threadId;
  const thread = await ctx.mailbox.getThread(threadId, { format: 'full', signal: ctx.signal });
  const sel: Parameters<typeof locateAttachment>[1] = {};
  for (const k of ['messageId', 'partId', 'attachmentId', 'filename'] as const) {
    const v = args[k];
    if (v !== undefined) sel[k] = v;
  }
  const found = locateAttachment(thread, sel);
  const tooBig = (n: number): MailError =>
    new MailError(
      'unsupported',
      `the attachment is ${(n / MiB).toFixed(1)} MiB; ${hint} (limit ${maxBytes / MiB} MiB)`,
    );
  // Checked against the size the provider declares before a byte is fetched, and again after.
  if ((found.meta?.size ?? 0) > maxBytes) throw tooBig(found.meta?.size ?? 0);
  const id = found.node?.body === undefined ? (found.node?.attachmentId ?? found.attachmentId) : undefined;
  const bytes =
    found.node?.body ??
    (id === undefined
      ? new Uint8Array(0)
      : await ctx.mailbox.getAttachment(found.message.id, id, ctx.signal));
  if (bytes.byteLength > maxBytes) throw tooBig(bytes.byteLength);
  return { thread, found, bytes, filename: found.meta?.filename ?? '' };
}

const textEntry = z.object({
  name: z.string().describe('fenced'),
  size: z.number().describe('bytes, decompressed'),
  charset: z
    .string()
    .describe('utf-8, utf-16le/be or windows-1252 by the bytes; or the charset a text attachment declares'),
  guessedCharset: z
    .boolean()
    .describe('true: no declared charset, not UTF-8 and no BOM, read as windows-1252'),
  chars: z.number().describe('characters of text in the whole entry'),
  from: z.number().optional().describe('where in the entry this page starts'),
  text: z.string().optional().describe('fenced; present for entries on this page'),
});

export const readAttachment = defineTool({
  name: 'read_attachment',
  title: 'Read an attachment as text',
  tier: 'read',
  access: 'read',
  description:
    'Text of an attachment: plain text (txt, csv, json, xml, ics…), gzip, or zip entries; the format is judged by the bytes, never the name. Binary, encrypted, oversize and nested-archive entries are listed in skipped (download_attachment saves a binary). list: entry names only; entry: a name or glob. Writes nothing.',
  input: z.strictObject({
    ...which,
    list: z.boolean().default(false),
    entry: z.string().min(1).max(500).optional(),
    offset: z.number().int().min(0).default(0).describe('nextOffset of the last page'),
    maxChars: z.number().int().min(1000).max(100_000).default(30_000),
  }),
  output: z.object({
    threadId: z.string(),
    messageId: z.string(),
    partId: z.string().optional(),
    filename: z.string().describe('fenced'),
    mimeType: z.string().describe('as declared by the sender, fenced; not used to judge the format'),
    size: z.number(),
    format: z.enum(['text', 'gzip', 'zip']),
    detected: z.string().describe('what the bytes are, by signature'),
    entries: z.array(textEntry),
    skipped: z.array(
      z.object({
        name: z.string().describe('fenced'),
        size: z.number(),
        reason: z.enum(SKIP_REASONS),
        detail: z.string().optional(),
      }),
    ),
    listing: z
      .array(
        z.object({
          name: z.string().describe('fenced'),
          size: z.number().describe('declared'),
          compressedSize: z.number().optional(),
          encrypted: z.boolean().optional(),
        }),
      )
      .optional(),
    notSelectedNames: z.array(z.string()).optional().describe('entries the entry pattern left out, fenced'),
    omittedEntries: z.number().optional().describe('entries past the 50-entry limit, not read'),
    totalChars: z.number(),
    offset: z.number(),
    nextOffset: z.number().optional(),
  }),
  async handle(ctx, args) {
    const got = await fetchAttachment(
      ctx,
      args,
      DEFAULT_LIMITS.archiveBytes,
      'read_attachment reads attachments up to 20 MiB; download_attachment saves larger ones',
    );
    const [{ readAttachmentText }, { storeDecompressors }, { declaredCharset }] = await Promise.all([
      import('../mail/archive/read.js'),
      import('../store/zip.js'),
      import('../mail/archive/locate.js'),
    ]);
    const read = await readAttachmentText(
      got.bytes,
      {
        name: got.filename || 'attachment',
        list: args.list,
        ...(args.entry === undefined ? {} : { entry: args.entry }),
        offset: args.offset,
        maxChars: args.maxChars,
        limits: DEFAULT_LIMITS,
        ...declaredCharset(got.found),
      },
      storeDecompressors,
    );
    const f = ctx.fence;
    return {
      threadId: got.thread.id,
      messageId: got.found.message.id,
      ...(got.found.meta ? { partId: got.found.meta.partId } : {}),
      filename: fenceOrEmpty(f, got.filename),
      mimeType: f.wrap(got.found.meta?.mimeType ?? ''),
      size: got.bytes.byteLength,
      ...read,
      entries: read.entries.map((e) => ({
        ...e,
        name: f.wrap(e.name),
        ...(e.text === undefined ? {} : { text: f.wrapText(e.text) }),
      })),
      skipped: read.skipped.map((s) => ({ ...s, name: f.wrap(s.name) })),
      ...(read.listing ? { listing: read.listing.map((l) => ({ ...l, name: f.wrap(l.name) })) } : {}),
      ...(read.notSelectedNames ? { notSelectedNames: read.notSelectedNames.map((n) => f.wrap(n)) } : {}),
    };
  },
});

export const downloadAttachment = defineTool({
  name: 'download_attachment',
  title: 'Save an attachment to the download directory',
  tier: 'manage',
  access: 'write',
  description:
    'Save an attachment\'s bytes as a file in MAILWARDEN_DOWNLOAD_DIR (refused when unset). The name (the attachment\'s, or saveAs) is made one safe path segment; an existing file is never overwritten ("name (1).ext"). Files are 0600; every save goes to the action log.',
  input: z.strictObject({
    ...which,
    saveAs: z.string().min(1).max(255).optional().describe('file name to use instead of the attachment name'),
  }),
  output: z.object({
    threadId: z.string(),
    messageId: z.string(),
    partId: z.string().optional(),
    filename: z.string().describe("the attachment's own name, fenced"),
    savedAs: z.string().describe('file name written, fenced'),
    path: z.string().describe('fenced'),
    directory: z.string().describe('MAILWARDEN_DOWNLOAD_DIR, resolved'),
    bytes: z.number(),
    sha256: z.string(),
    detected: z.string().describe('what the bytes are, by signature'),
    renamed: z.boolean().describe('the name was taken, so a numeric suffix was added'),
  }),
  async handle(ctx, args) {
    // Before any quota is spent: a call that cannot write should fail at once.
    await resolveDownloadDir(ctx.downloads?.configured);
    const downloads = ctx.downloads;
    if (downloads === undefined) throw new MailError('internal_error', 'no download seam');
    const got = await fetchAttachment(ctx, args, MAX_DOWNLOAD_BYTES, 'too big to save through mailwarden');
    const { sniff } = await import('../mail/archive/sniff.js');
    const s = sniff(got.bytes);
    const partId = got.found.meta?.partId;
    const saved = await downloads.save({
      name: args.saveAs ?? got.filename,
      fallbackName: `attachment-${got.found.message.id}-${partId ?? 'part'}.bin`,
      data: got.bytes,
      account: ctx.mailbox.account,
      op: 'saveAttachment',
      threadIds: [got.thread.id],
      messageIds: [got.found.message.id],
      detail: { ...(partId === undefined ? {} : { partId }), detected: s.what },
    });
    const f = ctx.fence;
    return {
      threadId: got.thread.id,
      messageId: got.found.message.id,
      ...(partId === undefined ? {} : { partId }),
      filename: fenceOrEmpty(f, got.filename),
      savedAs: f.wrap(saved.fileName),
      path: f.wrap(saved.path),
      directory: saved.directory,
      bytes: saved.bytes,
      sha256: saved.sha256,
      detected: s.what,
      renamed: saved.renamed,
    };
  },
});
