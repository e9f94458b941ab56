/**
 * What a reader sees of a message: decoded part text, HTML rendered as readable text, the body
 * choice among alternatives, the attachment list and a Gmail-like snippet. HTML rendering, and
 * why it drops hidden text, is in html-text.ts.
 */

import { decodeCharset, headerValue } from './headers.js';
import { htmlToReadableText, renderHtml } from './html-text.js';
import type { HiddenPiece } from './html-text.js';
import type { EmptyBodyReason } from './body-notes.js';
import { contentDispositionOf, contentTypeOf, parseRawMessage } from './mime.js';
import type { Header, MimeNode } from './types.js';

// ---------------------------------------------------------------------------------------------
// Part text

/** Charset declared by an HTML document itself (HTML §4.2.5.5 meta charset / http-equiv). */
function sniffHtmlCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 4096)).toString('latin1');
  const m = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head);
  return m?.[1];
}

/**
 * RFC 3676 format=flowed: a line ending in a space continues on the next line of the same
 * quote depth; a leading space is stuffing; "-- " (the signature separator) is never soft.
 * Undone so quote stripping and readers see whole paragraphs.
 */
function unflow(text: string, delSp: boolean): string {
  const out: string[] = [];
  let open: { depth: number; text: string } | undefined;
  for (const line of text.split('\n')) {
    const q = /^>+/.exec(line)?.[0].length ?? 0;
    let content = line.slice(q);
    if (content.startsWith(' ')) content = content.slice(1);
    const soft = content.endsWith(' ') && content !== '-- ';
    if (soft && delSp) content = content.slice(0, -1);
    if (open !== undefined && open.depth === q) {
      open.text += content;
    } else {
      if (open !== undefined) out.push(open.depth > 0 ? `${'>'.repeat(open.depth)} ${open.text}` : open.text);
      open = { depth: q, text: content };
    }
    if (!soft) {
      out.push(q > 0 ? `${'>'.repeat(q)} ${open.text}` : open.text);
      open = undefined;
    }
  }
  if (open !== undefined) out.push(open.depth > 0 ? `${'>'.repeat(open.depth)} ${open.text}` : open.text);
  return out.join('\n');
}

/**
 * A text part's bytes as text: charset from Content-Type (or, for HTML without one, from its
 * <meta>), decoded by decodeCharset (iconv-lite; ISO-2022-JP by src/mail/iso-2022-jp.ts; unknown → UTF-8 if
 * valid else windows-1252). BOM stripped, line breaks normalised to "\n", format=flowed undone.
 */
export function decodePartText(node: MimeNode): string {
  const bytes = node.body ?? new Uint8Array(0);
  const ct = contentTypeOf(node.headers);
  let charset = ct.params.get('charset');
  if ((charset === undefined || charset === '') && node.mimeType === 'text/html')
    charset = sniffHtmlCharset(bytes);
  let text = decodeCharset(bytes, charset);
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  text = text.replace(/\r\n?/g, '\n');
  if (node.mimeType === 'text/plain' && ct.params.get('format')?.toLowerCase() === 'flowed') {
    text = unflow(text, ct.params.get('delsp')?.toLowerCase() === 'yes');
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Body choice

export { EMPTY_BODY_REASONS } from './body-notes.js';
export type { EmptyBodyReason } from './body-notes.js';

export interface ExtractedBody {
  text: string;
  source: 'text' | 'html' | 'none';
  /** Text a person would not see (HTML parts of the body only), in order, with reasons. */
  hidden: HiddenPiece[];
  /** Set exactly when `text` is empty. */
  emptyReason?: EmptyBodyReason;
}

interface Piece {
  text: string;
  source: 'text' | 'html';
  hidden: HiddenPiece[];
}

/** What a walk noticed besides text, for the empty-body reason. */
interface Walk {
  links: boolean;
  textParts: number;
  encrypted: boolean;
  missing: boolean;
  /** Embedded messages opened so far on this path (a chain of them is bounded). */
  embedded: number;
}

/** An embedded message inside an embedded message… is shown this many levels deep, then listed only. */
const MAX_EMBEDDED = 3;

function isMultipart(node: MimeNode): boolean {
  return node.mimeType.startsWith('multipart/');
}

function isBodyText(node: MimeNode): boolean {
  return node.mimeType === 'text/plain' || node.mimeType === 'text/html';
}

/**
 * Parts a reader would see as an attachment rather than as the message text. A plain or HTML
 * text part that is not marked `Content-Disposition: attachment` is what mail clients display,
 * file name (`filename=` or `name=`) or not (RFC 2183 §2.1: inline is the default), so it is
 * body text, and listed as an attachment too when it has a name.
 */
function isAttachmentPart(node: MimeNode): boolean {
  const disposition = contentDispositionOf(node.headers).value;
  if (disposition === 'attachment') return true;
  if (isBodyText(node)) return false;
  return node.filename !== '';
}

/** A message/rfc822 that is the body: the whole message, or a part marked inline. */
function isShownMessage(node: MimeNode): boolean {
  if (node.mimeType !== 'message/rfc822' && node.mimeType !== 'message/global') return false;
  return node.partId === '' || contentDispositionOf(node.headers).value === 'inline';
}

function contentId(headers: readonly Header[]): string {
  const h = headers.find((x) => x.name.toLowerCase() === 'content-id');
  return (h?.value ?? '').trim().replace(/^<|>$/g, '');
}

function hasText(pieces: Piece[], source: Piece['source']): boolean {
  return pieces.some((p) => p.source === source && p.text.trim() !== '');
}

function oneLineHeader(headers: readonly Header[], name: string): string {
  return (headerValue(headers, name) ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * An embedded message shown as body: its own From/To/Cc/Date/Subject, the names of its
 * attachments (they are inside the embedded message, read it as an attachment to get them),
 * then its body.
 */
function embeddedPiece(node: MimeNode, w: Walk): Piece[] {
  // A provider may hand the embedded message over already parsed, as the part's one child
  // (the inner message's root, with the inner headers); otherwise its bytes are parsed here.
  const child = node.body === undefined ? node.children[0] : undefined;
  if (node.body === undefined && child === undefined) {
    if (node.attachmentId !== undefined) w.missing = true;
    return [];
  }
  w.textParts++;
  const inner =
    node.body !== undefined
      ? parseRawMessage(node.body)
      : { headers: (child as MimeNode).headers, root: child as MimeNode };
  const lines = ['---------- Embedded message ----------'];
  for (const name of ['From', 'To', 'Cc', 'Date', 'Subject']) {
    const v = oneLineHeader(inner.headers, name);
    if (v !== '') lines.push(`${name}: ${v}`);
  }
  const files = listAttachments(inner.root).map(
    (a) => `${a.filename === '' ? '(no name)' : a.filename} (${a.mimeType}, ${a.size} bytes)`,
  );
  if (files.length > 0) lines.push(`Attachments: ${files.join(', ')}`);
  const body = extractWith(inner.root, { ...w, embedded: w.embedded + 1 });
  w.encrypted ||= body.emptyReason === 'encrypted';
  const text = body.text === '' ? `(empty body: ${body.emptyReason ?? 'no-text-part'})` : body.text;
  return [
    {
      text: `${lines.join('\n')}\n\n${text}`,
      source: body.source === 'html' ? 'html' : 'text',
      hidden: body.hidden,
    },
  ];
}

function collect(node: MimeNode, w: Walk): Piece[] {
  if (isMultipart(node)) {
    switch (node.mimeType) {
      case 'multipart/alternative': {
        // RFC 2046 §5.1.4 orders alternatives plainest first; text/plain is preferred (no HTML
        // tricks to render away), the richest HTML (last) otherwise. An empty text/plain stub
        // does not count; an HTML part whose every word is hidden still says so.
        const options = node.children.map((c) => collect(c, w));
        return (
          options.find((p) => hasText(p, 'text')) ??
          [...options].reverse().find((p) => hasText(p, 'html')) ??
          options.find((p) => p.some((x) => x.hidden.length > 0)) ??
          options.find((p) => p.length > 0) ??
          []
        );
      }
      case 'multipart/related': {
        // RFC 2387 §3.2: the root is the part named by "start", else the first.
        const start = contentTypeOf(node.headers).params.get('start')?.replace(/^<|>$/g, '');
        const root =
          (start ? node.children.find((c) => contentId(c.headers) === start) : undefined) ?? node.children[0];
        return root === undefined ? [] : collect(root, w);
      }
      case 'multipart/signed': {
        // RFC 1847 §2.1: the first part is the content, the second the signature.
        const first = node.children[0];
        return first === undefined ? [] : collect(first, w);
      }
      case 'multipart/encrypted':
        w.encrypted = true;
        return [];
      default:
        return node.children.flatMap((c) => collect(c, w));
    }
  }
  if (node.mimeType === 'application/pkcs7-mime' || node.mimeType === 'application/x-pkcs7-mime') {
    // S/MIME (RFC 8551 §3.2): enveloped data cannot be read without the key.
    if (!/signed-data/i.test(contentTypeOf(node.headers).params.get('smime-type') ?? '')) w.encrypted = true;
  }
  if (isShownMessage(node) && w.embedded < MAX_EMBEDDED) return embeddedPiece(node, w);
  if (isAttachmentPart(node) || !isBodyText(node)) return [];
  if (node.body === undefined) {
    if (node.attachmentId !== undefined) w.missing = true;
    return [];
  }
  w.textParts++;
  if (node.mimeType === 'text/plain') return [{ text: decodePartText(node), source: 'text', hidden: [] }];
  const html = renderHtml(decodePartText(node), { links: w.links });
  return [{ text: html.text, source: 'html', hidden: html.hidden }];
}

function extractWith(root: MimeNode, w: Walk): ExtractedBody {
  const all = collect(root, w);
  const hidden = all.flatMap((p) => p.hidden);
  const pieces = all
    .map((p) => ({ ...p, text: p.text.replace(/\s+$/, '') }))
    .filter((p) => p.text.trim() !== '');
  if (pieces.length === 0) {
    const emptyReason: EmptyBodyReason = w.encrypted
      ? 'encrypted'
      : w.missing
        ? 'not-fetched'
        : hidden.length > 0
          ? 'all-hidden'
          : w.textParts > 0
            ? 'blank'
            : 'no-text-part';
    return { text: '', source: 'none', hidden, emptyReason };
  }
  return {
    text: pieces.map((p) => p.text).join('\n\n'),
    // 'html' whenever any of it was rendered from HTML: the reader should know it was converted.
    source: pieces.some((p) => p.source === 'html') ? 'html' : 'text',
    hidden,
  };
}

function extract(root: MimeNode, links: boolean): ExtractedBody {
  return extractWith(root, { links, textParts: 0, encrypted: false, missing: false, embedded: 0 });
}

/**
 * The message text: the text/plain alternative when there is one, else the HTML as readable
 * text; in multipart/mixed the inline text parts in order, attachments skipped; a message that
 * is an embedded message (message/rfc822 at the root, or inline) shows that message, headers
 * first.
 */
export function extractBody(root: MimeNode): ExtractedBody {
  return extract(root, true);
}

/**
 * Leaves whose bytes the body needs but the provider left behind an attachment id (Gmail serves
 * every part with a file name that way, an inline text part or a root message/rfc822 included).
 * A tool fetches these before reading the body; src/mail does no I/O.
 */
export function bodyPartsToFetch(root: MimeNode): MimeNode[] {
  const out: MimeNode[] = [];
  const walk = (node: MimeNode): void => {
    if (isMultipart(node)) {
      node.children.forEach(walk);
      return;
    }
    if (node.body !== undefined || node.attachmentId === undefined || node.children.length > 0) return;
    if (isShownMessage(node) || (isBodyText(node) && !isAttachmentPart(node))) out.push(node);
  };
  walk(root);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Attachments and snippet

export interface AttachmentMeta {
  partId: string;
  filename: string;
  mimeType: string;
  size: number;
  attachmentId?: string;
  inline: boolean;
}

/**
 * Leaves a reader would call attachments: anything with a filename or
 * `Content-Disposition: attachment` (an inline text part with a file name is body text and
 * listed too), and every leaf that is not plain or HTML text. `inline` is
 * true for `Content-Disposition: inline` and for Content-ID parts of multipart/related
 * (embedded images) without a disposition.
 */
export function listAttachments(root: MimeNode): AttachmentMeta[] {
  const out: AttachmentMeta[] = [];
  const walk = (node: MimeNode, parentType: string): void => {
    if (isMultipart(node)) {
      for (const c of node.children) walk(c, node.mimeType);
      return;
    }
    const disposition = contentDispositionOf(node.headers).value;
    // Everything but plain and HTML text is listed (calendar invites, embedded messages,
    // text/enriched, text/rfc822-headers, a nameless PDF…): what the body does not show must be
    // reachable by read_attachment, root part ("") included.
    const listed = node.filename !== '' || disposition === 'attachment' || !isBodyText(node);
    if (!listed) return;
    const inline =
      disposition === 'inline' ||
      (disposition === '' && parentType === 'multipart/related' && contentId(node.headers) !== '');
    const meta: AttachmentMeta = {
      partId: node.partId,
      filename: node.filename,
      mimeType: node.mimeType,
      size: node.size,
      inline,
    };
    if (node.attachmentId !== undefined) meta.attachmentId = node.attachmentId;
    out.push(meta);
  };
  walk(root, '');
  return out;
}

/** Gmail-like snippet: the body text without link targets, whitespace collapsed, first `max` characters. */
export function snippetOf(root: MimeNode, max = 200): string {
  const text = extract(root, false).text.replace(/\s+/g, ' ').trim();
  // Code points, not UTF-16 units, so a surrogate pair is never cut in half.
  return Array.from(text).slice(0, max).join('');
}

export { htmlToReadableText };
