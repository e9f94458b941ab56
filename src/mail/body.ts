/**
 * What a reader sees of a message: decoded part text, HTML rendered as readable text, the body
 * choice among alternatives, the attachment list and a Gmail-like snippet. HTML rendering, and
 * why it drops hidden text, is in html-text.ts.
 */

import { decodeCharset } from './headers.js';
import { htmlToReadableText } from './html-text.js';
import { contentDispositionOf, contentTypeOf } from './mime.js';
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
 * <meta>), decoded by decodeCharset (iconv-lite; ISO-2022-JP via libmime; unknown → UTF-8 if
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

export interface ExtractedBody {
  text: string;
  source: 'text' | 'html' | 'none';
}

interface Piece {
  text: string;
  source: 'text' | 'html';
}

function isMultipart(node: MimeNode): boolean {
  return node.mimeType.startsWith('multipart/');
}

/** Parts a reader would see as an attachment rather than as the message text. */
function isAttachmentPart(node: MimeNode): boolean {
  return node.filename !== '' || contentDispositionOf(node.headers).value === 'attachment';
}

function contentId(headers: readonly Header[]): string {
  const h = headers.find((x) => x.name.toLowerCase() === 'content-id');
  return (h?.value ?? '').trim().replace(/^<|>$/g, '');
}

function hasText(pieces: Piece[], source: Piece['source']): boolean {
  return pieces.some((p) => p.source === source && p.text.trim() !== '');
}

function collect(node: MimeNode, links: boolean): Piece[] {
  if (isMultipart(node)) {
    switch (node.mimeType) {
      case 'multipart/alternative': {
        // RFC 2046 §5.1.4 orders alternatives plainest first; text/plain is preferred (no HTML
        // tricks to render away), the richest HTML (last) otherwise. An empty text/plain stub
        // does not count.
        const options = node.children.map((c) => collect(c, links));
        return (
          options.find((p) => hasText(p, 'text')) ??
          [...options].reverse().find((p) => hasText(p, 'html')) ??
          options.find((p) => p.length > 0) ??
          []
        );
      }
      case 'multipart/related': {
        // RFC 2387 §3.2: the root is the part named by "start", else the first.
        const start = contentTypeOf(node.headers).params.get('start')?.replace(/^<|>$/g, '');
        const root =
          (start ? node.children.find((c) => contentId(c.headers) === start) : undefined) ?? node.children[0];
        return root === undefined ? [] : collect(root, links);
      }
      case 'multipart/signed': {
        // RFC 1847 §2.1: the first part is the content, the second the signature.
        const first = node.children[0];
        return first === undefined ? [] : collect(first, links);
      }
      case 'multipart/encrypted':
        return [];
      default:
        return node.children.flatMap((c) => collect(c, links));
    }
  }
  if (isAttachmentPart(node)) return [];
  if (node.mimeType === 'text/plain') return [{ text: decodePartText(node), source: 'text' }];
  if (node.mimeType === 'text/html') {
    return [{ text: htmlToReadableText(decodePartText(node), { links }), source: 'html' }];
  }
  return [];
}

function extract(root: MimeNode, links: boolean): ExtractedBody {
  const pieces = collect(root, links)
    .map((p) => ({ ...p, text: p.text.replace(/\s+$/, '') }))
    .filter((p) => p.text.trim() !== '');
  if (pieces.length === 0) return { text: '', source: 'none' };
  return {
    text: pieces.map((p) => p.text).join('\n\n'),
    // 'html' whenever any of it was rendered from HTML: the reader should know it was converted.
    source: pieces.some((p) => p.source === 'html') ? 'html' : 'text',
  };
}

/**
 * The message text: the text/plain alternative when there is one, else the HTML as readable
 * text; in multipart/mixed the inline text parts in order, attachments skipped.
 */
export function extractBody(root: MimeNode): ExtractedBody {
  return extract(root, true);
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
 * `Content-Disposition: attachment`, calendar invites, embedded messages (message/*), and any
 * other non-text leaf (a nameless PDF or inline image is not body text either). `inline` is
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
    const listed =
      node.filename !== '' ||
      disposition === 'attachment' ||
      node.mimeType === 'text/calendar' ||
      node.mimeType.startsWith('message/') ||
      !node.mimeType.startsWith('text/');
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
