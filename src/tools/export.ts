import { z } from 'zod';
import type { ThreadExport } from '../mail/export-markdown.js';
import type { Fence } from '../mcp/untrusted.js';
import { resolveDownloadDir, sanitizeFileName } from '../store/downloads.js';
import { MailError } from '../mail/errors.js';
import { defineTool } from './common/define.js';
import { getThread } from './thread.js';

/**
 * The file is for people, who do not need the per-result fence markers a model does; invisible
 * and bidi characters are still removed (forPeopleDeep) before anything is written.
 */
const noFence: Fence = {
  nonce: '',
  wrap: (text: string) => text,
  wrapText: (text: string) => text,
  notice: () => '',
};

/** Bodies are exported whole; only a pathological one is cut (and marked bodyTruncated). */
const EXPORT_BODY_CHARS = 2_000_000;

const EXTENSION = { markdown: '.md', json: '.json' } as const;

/** The extension is always ours: a name like "x.command" or "x.html" must not make the export a program or a page. */
function withExtension(name: string, ext: string): string {
  return name.toLowerCase().endsWith(ext) ? name : `${name}${ext}`;
}

export const exportThread = defineTool({
  name: 'export_thread',
  title: 'Export a thread to a file',
  tier: 'manage',
  access: 'write',
  description:
    "Write a thread to a file in MAILWARDEN_DOWNLOAD_DIR (refused when unset) for a person to keep: markdown (each body in a fence the mail cannot close) or json (get_thread's view). Invisible and bidi characters are removed; no file is overwritten; every export goes to the action log.",
  input: z.strictObject({
    threadId: z.string().min(1).max(256),
    format: z.enum(['markdown', 'json']).default('markdown'),
    bodies: z.enum(['text', 'new', 'full']).default('text').describe("as get_thread's bodies"),
    saveAs: z.string().min(1).max(255).optional().describe('file name; default: the subject'),
  }),
  output: z.object({
    threadId: z.string(),
    format: z.enum(['markdown', 'json']),
    messageCount: z.number(),
    savedAs: z.string().describe('file name written, fenced'),
    path: z.string().describe('fenced'),
    directory: z.string().describe('MAILWARDEN_DOWNLOAD_DIR, resolved'),
    bytes: z.number(),
    sha256: z.string(),
    renamed: z.boolean().describe('the name was taken, so a numeric suffix was added'),
  }),
  async handle(ctx, args) {
    await resolveDownloadDir(ctx.downloads?.configured);
    const downloads = ctx.downloads;
    if (downloads === undefined) throw new MailError('internal_error', 'no download seam');
    // get_thread itself produces the view, so the export is exactly what get_thread shows
    // (sender authentication included) without a second copy of its logic.
    // Parsed by get_thread's own schema so its defaults apply; only the body cap is lifted.
    const threadArgs = getThread.input.parse({ threadId: args.threadId, bodies: args.bodies });
    const view = (await getThread.handle(
      { ...ctx, fence: noFence },
      { ...threadArgs, maxBodyChars: EXPORT_BODY_CHARS },
    )) as unknown as ThreadExport;
    const { forPeopleDeep, renderThreadMarkdown } = await import('../mail/export-markdown.js');
    const clean = forPeopleDeep(view);
    const content =
      args.format === 'markdown'
        ? renderThreadMarkdown(clean, new Date(ctx.clock.now()).toISOString())
        : `${JSON.stringify(clean, null, 2)}\n`;
    const ext = EXTENSION[args.format];
    const base = sanitizeFileName(args.saveAs ?? clean.subject);
    const saved = await downloads.save({
      name: base === '' ? '' : withExtension(base, ext),
      fallbackName: `thread-${args.threadId}${ext}`,
      data: Buffer.from(content, 'utf8'),
      account: ctx.mailbox.account,
      op: 'exportThread',
      threadIds: [clean.threadId],
      detail: { format: args.format, messages: clean.messages.length },
    });
    return {
      threadId: clean.threadId,
      format: args.format,
      messageCount: clean.messages.length,
      savedAs: ctx.fence.wrap(saved.fileName),
      path: ctx.fence.wrap(saved.path),
      directory: saved.directory,
      bytes: saved.bytes,
      sha256: saved.sha256,
      renamed: saved.renamed,
    };
  },
});
