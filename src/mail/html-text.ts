/**
 * HTML rendered as the text a person would read, with link targets shown.
 *
 * Security note: HTML mail routinely carries text no human sees — preheaders in
 * `display:none` blocks, zero-size or off-screen text, <style>/<script> content. That is a
 * classic place to hide prompt-injection text aimed at an AI reader, so this renderer drops
 * what a mail client would not show, and always shows where links really go.
 */
import { compile } from 'html-to-text';
import { Parser } from 'htmlparser2';
import type { FormatCallback, HtmlToTextOptions, SelectorDefinition } from 'html-to-text';

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
