/**
 * What a reader sees of a message: decoded part text, HTML rendered as readable text, the body
 * choice among alternatives, the attachment list and a Gmail-like snippet.
 *
 * Security note: HTML mail routinely carries text no human sees — preheaders in
 * `display:none` blocks, zero-size or off-screen text, <style>/<script> content. That is a
 * classic place to hide prompt-injection text aimed at an AI reader, so the HTML renderer
 * drops what a mail client would not show, and always shows where links really go.
 */
import { compile } from 'html-to-text';
import { Parser } from 'htmlparser2';
import type { FormatCallback, HtmlToTextOptions, SelectorDefinition } from 'html-to-text';

import { decodeCharset } from './headers.js';
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
// HTML → readable text

/** CSS comments removed in one forward pass (an unclosed one runs to the end, as in CSS). */
function stripCssComments(css: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const open = css.indexOf('/*', i);
    if (open < 0) return out + css.slice(i);
    out += css.slice(i, open);
    const close = css.indexOf('*/', open + 2);
    if (close < 0) return out;
    i = close + 2;
  }
}

/** CSS escapes ("n\6f ne" is "none", CSS Syntax §4.3.7) undone, so escaping cannot hide a rule. */
function unescapeCss(css: string): string {
  return css.replace(
    /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(.))/g,
    (_, hex: string | undefined, ch: string | undefined) => {
      if (hex === undefined) return ch ?? '';
      const cp = parseInt(hex, 16);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
    },
  );
}

const ZERO = /^[-+]?(?:0+\.?0*|\.0+)(?:px|pt|em|rem|ex|ch|%|vh|vw)?$/;

/**
 * Declarations that make an element's text invisible in a mail client. Covers the usual
 * preheader and hiding tricks; colour-on-same-colour text is not detected.
 */
function hidesContent(css: string): boolean {
  const decl = new Map<string, string>();
  for (const d of unescapeCss(stripCssComments(css)).split(';')) {
    const colon = d.indexOf(':');
    if (colon < 0) continue;
    const prop = d.slice(0, colon).trim().toLowerCase();
    const value = d
      .slice(colon + 1)
      .replace(/!\s*important/i, '')
      .trim()
      .toLowerCase();
    decl.set(prop, value);
  }
  const get = (p: string): string => decl.get(p) ?? '';
  if (get('display') === 'none') return true;
  if (get('visibility') === 'hidden' || get('visibility') === 'collapse') return true;
  if (get('mso-hide') === 'all') return true; // Outlook's own "hidden"
  if (decl.has('opacity') && ZERO.test(get('opacity'))) return true;
  if (decl.has('font-size') && ZERO.test(get('font-size'))) return true;
  const clipped = get('overflow') === 'hidden';
  for (const p of ['max-height', 'height', 'max-width', 'width']) {
    if (clipped && decl.has(p) && ZERO.test(get(p))) return true;
  }
  // Off-screen text: text-indent:-9999px, position:absolute; left:-10000px …
  for (const p of ['text-indent', 'left', 'top', 'margin-left']) {
    const m = /^(-\d+(?:\.\d+)?)(px|pt|em|rem)?$/.exec(get(p));
    if (m !== null && Number(m[1]) <= (m[2] === 'em' || m[2] === 'rem' ? -100 : -999)) return true;
  }
  return false;
}

/**
 * Class and id names that top-level rules in <style> blocks hide (`.preheader{display:none}`).
 * Rules inside @media and other at-blocks are conditional (mobile-only layouts) and ignored;
 * only simple `.class`, `tag.class` and `#id` selectors are understood.
 */
function hiddenSelectors(styleBlocks: readonly string[]): { classes: Set<string>; ids: Set<string> } {
  const classes = new Set<string>();
  const ids = new Set<string>();
  for (const block of styleBlocks) {
    const css = stripCssComments(block).replace(/<!--|-->/g, '');
    let depth = 0;
    let start = 0;
    for (let i = 0; i < css.length; i++) {
      const c = css[i];
      if (c === '{') {
        if (depth === 0) {
          const prelude = css.slice(start, i).trim();
          const ruleEnd = css.indexOf('}', i);
          if (!prelude.startsWith('@') && ruleEnd > 0 && hidesContent(css.slice(i + 1, ruleEnd))) {
            for (const sel of unescapeCss(prelude).split(',')) {
              const m = /^[a-z0-9]*([.#])([\w-]+)$/i.exec(sel.trim());
              if (m !== null) (m[1] === '.' ? classes : ids).add(m[2] as string);
            }
          }
        }
        depth++;
      } else if (c === '}') {
        depth = Math.max(0, depth - 1);
        if (depth === 0) start = i + 1;
      } else if (c === ';' && depth === 0) {
        start = i + 1; // @import …; / @charset …;
      }
    }
  }
  return { classes, ids };
}

const HIDDEN_MARK = 'data-mailwarden-hidden';

/**
 * Marks every start tag whose element a mail client would not show, for a 'skip' selector.
 * The tags are found with htmlparser2 — the tokenizer html-to-text itself parses with — so
 * comments, raw text and quoting cannot make this pass see different tags than the renderer
 * (a hand-rolled scanner can be desynchronised to smuggle a hidden block past it).
 */
function markHidden(html: string): string {
  const tags: Array<{ start: number; attribs: Record<string, string> }> = [];
  const styleBlocks: string[] = [];
  let inStyle = false;
  const parser = new Parser(
    {
      onopentag(name, attribs, isImplied) {
        // An implied tag has no source text (and no attributes) to mark.
        if (!isImplied) tags.push({ start: parser.startIndex, attribs });
        if (name === 'style') {
          inStyle = true;
          styleBlocks.push('');
        }
      },
      ontext(text) {
        if (inStyle) styleBlocks[styleBlocks.length - 1] += text;
      },
      onclosetag(name) {
        if (name === 'style') inStyle = false;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  const { classes, ids } = hiddenSelectors(styleBlocks);
  let out = '';
  let copied = 0;
  for (const { start, attribs } of tags) {
    const hidden =
      'hidden' in attribs ||
      hidesContent(attribs['style'] ?? '') ||
      (attribs['class'] ?? '').split(/\s+/).some((c) => classes.has(c)) ||
      ids.has((attribs['id'] ?? '').trim());
    if (!hidden) continue;
    let nameEnd = start + 1;
    while (nameEnd < html.length && !/[\s/>]/.test(html[nameEnd] as string)) nameEnd++;
    out += `${html.slice(copied, nameEnd)} ${HIDDEN_MARK}`;
    copied = nameEnd;
  }
  return out + html.slice(copied);
}

function comparableTarget(s: string): string {
  return s
    .replace(/\s+/g, '')
    .toLowerCase()
    .replace(/^(?:https?:\/\/|mailto:)/, '')
    .replace(/^www\./, '')
    .replace(/\/+$/, '');
}

/** Where a link goes, as shown to the reader; "" for in-page anchors and inline data/script. */
function linkTarget(href: string): string {
  const h = href.trim();
  if (h === '' || h.startsWith('#')) return '';
  if (/^(?:data|javascript|vbscript|cid):/i.test(h)) return '';
  return h.replace(/^mailto:/i, '');
}

const formatLink: FormatCallback = (elem, walk, builder, options) => {
  const target = options['showLinks'] === true ? linkTarget(elem.attribs?.['href'] ?? '') : '';
  if (target === '') {
    walk(elem.children, builder);
    return;
  }
  let text = '';
  builder.pushWordTransform((w) => {
    text += w;
    return w;
  });
  walk(elem.children, builder);
  builder.popWordTransform();
  // The target is always shown (a label can lie about where it goes), once: not repeated when
  // the label already is the URL.
  if (text === '') builder.addInline(target, { noWordTransform: true });
  else if (comparableTarget(text) !== comparableTarget(target)) {
    builder.addInline(` [${target}]`, { noWordTransform: true });
  }
};

const formatImage: FormatCallback = (elem, _walk, builder) => {
  // Alt text only: image URLs (tracking pixels, multi-kilobyte data: URIs) are noise to a reader.
  const alt = (elem.attribs?.['alt'] ?? '').trim();
  if (alt !== '') builder.addInline(alt);
};

function converterOptions(showLinks: boolean): HtmlToTextOptions {
  const block = (selector: string, lines = 1): SelectorDefinition => ({
    selector,
    format: 'block',
    options: { leadingLineBreaks: lines, trailingLineBreaks: lines },
  });
  return {
    wordwrap: false,
    // A crafted document nested thousands deep would overflow the stack; nothing legible lives
    // that deep, and what is cut is dropped, never shown.
    limits: { maxDepth: 200, ellipsis: '' },
    formatters: { mwLink: formatLink, mwImage: formatImage },
    selectors: [
      { selector: 'a', format: 'mwLink', options: { showLinks } },
      { selector: 'img', format: 'mwImage' },
      ...['head', 'title', 'style', 'script', 'template', 'object', 'embed', 'iframe'].map((selector) => ({
        selector,
        format: 'skip',
      })),
      { selector: `[${HIDDEN_MARK}]`, format: 'skip' },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
        selector,
        format: 'heading',
        options: { leadingLineBreaks: 2, trailingLineBreaks: 1, uppercase: false },
      })),
      { selector: 'ul', format: 'unorderedList', options: { itemPrefix: '- ' } },
      // Newsletters lay out with tables: each row and cell on its own line reads in order.
      block('tr'),
      block('td'),
      block('th'),
      block('center'),
    ],
  };
}

let withLinks: ((html: string) => string) | undefined;
let withoutLinks: ((html: string) => string) | undefined;

/**
 * HTML rendered as readable text. Link targets are kept (`label [https://…]`, or just the URL
 * when the label is the URL) because where a link goes is what a reader needs to judge it.
 * Images become their alt text. <style>, <script>, <head> and elements a client would hide
 * (display:none preheaders, zero-size/invisible/off-screen text, `hidden`) are dropped.
 */
export function htmlToReadableText(html: string, options: { links?: boolean } = {}): string {
  const showLinks = options.links ?? true;
  const convert = showLinks
    ? (withLinks ??= compile(converterOptions(true)))
    : (withoutLinks ??= compile(converterOptions(false)));
  return convert(markHidden(html))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
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
