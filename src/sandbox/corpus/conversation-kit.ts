/**
 * A compact way to write ordinary conversations: who says what, with which files, in order.
 * Every conversation ends with somebody else's message, so the follow-up facts stay exact.
 */
import { docxDocument, pdfDocument, pngImage } from './archives.js';
import { HOUR, type CorpusBuilder, type ThreadOptions } from './builder.js';
import { attachment, mixed, plain, type Entity, type Person } from './mime.js';
import { OWNER } from './people.js';

export type File = { name: string; make: (modified: number) => Buffer };

export const pdf = (name: string, ...lines: string[]): File => ({ name, make: () => pdfDocument(lines) });
export const png = (name: string, ...bands: Array<[number, number, number]>): File => ({
  name,
  make: () => pngImage(48, 32, bands),
});
export const docx = (name: string, ...paras: string[]): File => ({
  name,
  make: (m) => docxDocument(paras, m),
});
export const csv = (name: string, rows: string[][]): File => ({
  name,
  make: () => Buffer.from(`${rows.map((r) => r.join(',')).join('\r\n')}\r\n`, 'utf8'),
});

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  csv: 'text/csv',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

function withFiles(text: string, files: File[], at: number): Entity {
  if (files.length === 0) return plain(text);
  return mixed(
    plain(text),
    ...files.map((f) =>
      attachment(f.name, TYPES[f.name.split('.').pop() ?? ''] ?? 'application/octet-stream', f.make(at)),
    ),
  );
}

/** [sender (OWNER = sent), text, files] in order; hours are the gaps after the first message. */
export type Step = [Person, string, File[]?];

export interface Conversation {
  key: string;
  subject: string;
  /** Days ago of the newest message. */
  days: number;
  steps: Step[];
  opts: ThreadOptions;
  unreadLast?: boolean;
  attachments?: boolean;
}

/** Writes each conversation as a thread; ones with files are listed under withAttachments. */
export function addConversationList(b: CorpusBuilder, list: readonly Conversation[]): void {
  for (const c of list) {
    const last = b.ago(c.days);
    const files = c.steps.some(([, , f]) => (f ?? []).length > 0);
    const key = b.thread(c.key, c.opts, (t) =>
      c.steps.forEach(([who, text, f], i) => {
        const at = last - (c.steps.length - 1 - i) * 3 * HOUR;
        const body = withFiles(`${text}\n`, f ?? [], at);
        const others = c.steps.map(([p]) => p).filter((p, j, all) => p !== who && all.indexOf(p) === j);
        const to = others.length ? others : [OWNER];
        const isLast = i === c.steps.length - 1;
        if (who === OWNER) t.send({ to, at, body, ...(i === 0 ? { subject: c.subject } : {}) });
        else
          t.receive({
            from: who,
            to,
            at,
            body,
            ...(i === 0 ? { subject: c.subject } : {}),
            unread: isLast && (c.unreadLast ?? false),
          });
      }),
    );
    if (files) b.add('withAttachments', key);
  }
}
