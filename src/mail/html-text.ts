/**
 * HTML rendered as the text a person would read, with link targets shown.
 *
 * Security note: HTML mail routinely carries text no human sees — preheaders in
 * `display:none` blocks, zero-size, transparent, clipped or off-screen text, <style>/<script>
 * content. That is a classic place to hide prompt-injection text aimed at an AI reader, so the
 * document is parsed once (htmlparser2), the style sheets applied to it (css-hidden.ts), and
 * every text node a person would not see is taken out of the tree — counted and kept aside with
 * its reason, never silently handed on — before the tree is rendered. Removing rather than
 * marking means no later parse can disagree about what was hidden.
 */
import { compile } from 'html-to-text';
import { DomUtils, parseDocument } from 'htmlparser2';
import { Element, Text } from 'domhandler';
import type { AnyNode, ParentNode } from 'domhandler';
import render from 'dom-serializer';
import type { FormatCallback, HtmlToTextOptions, SelectorDefinition } from 'html-to-text';
import { ROOT_STATE, elementState, styleContext, textHiddenBy } from './css-hidden.js';
import type { ElementState, HiddenReason } from './css-hidden.js';

export { HIDDEN_REASONS } from './css-hidden.js';
export type { HiddenReason } from './css-hidden.js';

/** Text a person would not see, with the reason, in document order. */
export interface HiddenPiece {
  reason: HiddenReason;
  text: string;
}

export interface RenderedHtml {
  text: string;
  hidden: HiddenPiece[];
  /** Nesting deeper than the renderer walks was flattened to its text (links kept). */
  flattened: boolean;
}

/** Elements whose content is never shown (and so never counted as hidden text either). */
const NOT_RENDERED = new Set(['head', 'title', 'style', 'script', 'template', 'object', 'embed', 'iframe']);

/**
 * html-to-text walks at most 200 levels; past FLATTEN_DEPTH the subtree is replaced by its text,
 * so deep nesting (a crafted message, or a broken mailer's unclosed tags) loses no words.
 */
const FLATTEN_DEPTH = 120;

const BLOCKS = new Set([
  'p',
  'div',
  'br',
  'tr',
  'td',
  'th',
  'li',
  'ul',
  'ol',
  'table',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'center',
  'section',
  'article',
  'header',
  'footer',
  'hr',
]);

function textOf(node: AnyNode): string {
  let out = '';
  const stack: AnyNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as AnyNode;
    if (n instanceof Text) out += n.data;
    else if (n instanceof Element) {
      if (NOT_RENDERED.has(n.name)) continue;
      if (n.name === 'img') out += ` ${n.attribs['alt'] ?? ''} `;
      else if (BLOCKS.has(n.name)) out += ' '; // words of two blocks stay two words
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as AnyNode);
    } else if ('children' in n) {
      for (let i = (n as ParentNode).children.length - 1; i >= 0; i--)
        stack.push((n as ParentNode).children[i] as AnyNode);
    }
  }
  return out;
}

/** A length attribute that makes a box of no size ("0", "0px", "0%"). */
const ZERO_LENGTH = /^\s*[+-]?0*(?:\.0*)?\s*(?:px|%|em|pt)?\s*$/i;

/** An element no mail reader shows, whatever the style sheets say. */
function elementHiddenBy(el: Element): HiddenReason | undefined {
  if (el.name === 'noscript') return 'noscript';
  if (el.name === 'svg') {
    const w = el.attribs['width'];
    const h = el.attribs['height'];
    if ((w !== undefined && ZERO_LENGTH.test(w)) || (h !== undefined && ZERO_LENGTH.test(h)))
      return 'zero-size-svg';
  }
  return undefined;
}

/** A closed <details> shows its first <summary> only (HTML §4.11.1): the children it folds away. */
function closedDetails(el: Element): Set<AnyNode> {
  const summary = el.children.find((c) => c instanceof Element && c.name === 'summary');
  return new Set(el.children.filter((c) => c !== summary));
}

/**
 * Takes hidden text out of the tree: whole elements hidden in every viewport, and text nodes whose
 * own style hides them in every viewport. Walks with an explicit stack (no recursion), so depth
 * cannot overflow it.
 */
function removeHidden(doc: ParentNode): HiddenPiece[] {
  const sheets: string[] = [];
  for (const el of DomUtils.getElementsByTagName('style', doc.children, true))
    sheets.push(DomUtils.textContent(el));
  const ctx = styleContext(sheets);
  const pieces: HiddenPiece[] = [];
  const removals: AnyNode[] = [];
  const anchors = new Set<Element>();
  const stack: Array<{ node: AnyNode; states: ElementState[]; anchor: Element | undefined }> =
    doc.children.map((node) => ({
      node,
      states: Array.from({ length: ctx.viewports }, () => ROOT_STATE),
      anchor: undefined,
    }));
  stack.reverse();
  const add = (reason: HiddenReason, text: string): void => {
    const t = text.replace(/\s+/g, ' ').trim();
    if (t === '') return;
    const last = pieces[pieces.length - 1];
    if (last !== undefined && last.reason === reason) last.text += ` ${t}`;
    else pieces.push({ reason, text: t });
  };
  while (stack.length > 0) {
    const { node, states, anchor } = stack.pop() as (typeof stack)[number];
    if (node instanceof Text) {
      if (node.data.trim() === '') continue;
      const reasons = states.map(textHiddenBy);
      if (reasons.every((r) => r !== undefined)) {
        add(reasons[0] as HiddenReason, node.data);
        removals.push(node);
        if (anchor !== undefined) anchors.add(anchor);
      }
      continue;
    }
    if (!(node instanceof Element)) continue;
    if (NOT_RENDERED.has(node.name)) continue;
    const own = states.map((s, i) => elementState(ctx, node, s, i));
    const subtree = own.map((s) => s.subtree);
    const visible = states.every((s) => s.subtree === undefined);
    const unshown = elementHiddenBy(node) ?? (subtree.every((r) => r !== undefined) ? subtree[0] : undefined);
    if (unshown !== undefined && visible) {
      add(unshown, textOf(node));
      removals.push(node);
      continue;
    }
    const a = node.name === 'a' ? node : anchor;
    const folded =
      node.name === 'details' && !('open' in node.attribs) ? closedDetails(node) : new Set<AnyNode>();
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i] as AnyNode;
      if (folded.has(child)) {
        add('closed-details', textOf(child));
        removals.push(child);
      } else stack.push({ node: child, states: own, anchor: a });
    }
  }
  for (const n of removals) DomUtils.removeElement(n);
  // A link whose every word was hidden would otherwise show its bare target.
  for (const a of anchors) {
    const hasImage = DomUtils.getElementsByTagName('img', a.children, true).length > 0;
    if (!hasImage && textOf(a).trim() === '') DomUtils.removeElement(a);
  }
  return pieces;
}

/** Replaces every subtree that starts at FLATTEN_DEPTH by its text, keeping line breaks and link targets. */
function flattenDeep(doc: ParentNode, showLinks: boolean): boolean {
  let flattened = false;
  const stack: Array<{ node: AnyNode; depth: number }> = doc.children.map((node) => ({ node, depth: 1 }));
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as (typeof stack)[number];
    if (!(node instanceof Element) || NOT_RENDERED.has(node.name)) continue;
    if (depth < FLATTEN_DEPTH) {
      for (const c of node.children) stack.push({ node: c, depth: depth + 1 });
      continue;
    }
    if (!node.children.some((c) => c instanceof Element)) continue;
    flattened = true;
    let text = '';
    const walk: Array<AnyNode | { close: Element }> = [...node.children].reverse();
    while (walk.length > 0) {
      const n = walk.pop() as AnyNode | { close: Element };
      if ('close' in n) {
        const href = showLinks && n.close.name === 'a' ? linkTarget(n.close.attribs['href'] ?? '') : '';
        if (href !== '') text += ` [${href}]`;
        if (BLOCKS.has(n.close.name)) text += '\n';
        continue;
      }
      if (n instanceof Text) text += n.data;
      else if (n instanceof Element && !NOT_RENDERED.has(n.name)) {
        if (n.name === 'img') text += n.attribs['alt'] ?? '';
        if (BLOCKS.has(n.name)) text += '\n';
        walk.push({ close: n });
        for (let i = n.children.length - 1; i >= 0; i--) walk.push(n.children[i] as AnyNode);
      }
    }
    const replacement = new Text(text.replace(/[ \t]*\n[ \t\n]*/g, '\n'));
    for (const c of [...node.children]) DomUtils.removeElement(c);
    DomUtils.appendChild(node, replacement);
  }
  return flattened;
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
    // flattenDeep keeps the tree shallower than this, so nothing is cut here.
    limits: { maxDepth: 200, ellipsis: '' },
    formatters: { mwLink: formatLink, mwImage: formatImage },
    selectors: [
      { selector: 'a', format: 'mwLink', options: { showLinks } },
      { selector: 'img', format: 'mwImage' },
      ...['head', 'title', 'style', 'script', 'template', 'object', 'embed', 'iframe'].map((selector) => ({
        selector,
        format: 'skip',
      })),
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
 * HTML rendered as readable text, and the text a person would not see. Link targets are kept
 * (`label [https://…]`, or just the URL when the label is the URL) because where a link goes is
 * what a reader needs to judge it. Images become their alt text. <style>, <script> and <head>
 * are not text; hidden text (css-hidden.ts has the rule) is left out of `text` and returned in
 * `hidden` with its reason.
 */
export function renderHtml(html: string, options: { links?: boolean } = {}): RenderedHtml {
  const showLinks = options.links ?? true;
  const convert = showLinks
    ? (withLinks ??= compile(converterOptions(true)))
    : (withoutLinks ??= compile(converterOptions(false)));
  const doc = parseDocument(html, { decodeEntities: true });
  const hidden = removeHidden(doc);
  const flattened = flattenDeep(doc, showLinks);
  const text = convert(render(doc, { encodeEntities: 'utf8' }))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text, hidden, flattened };
}

/** The visible text only (see renderHtml). */
export function htmlToReadableText(html: string, options: { links?: boolean } = {}): string {
  return renderHtml(html, options).text;
}
