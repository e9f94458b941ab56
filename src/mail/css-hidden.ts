/**
 * Which text of an HTML document a person would not see. Selectors are matched by css-select
 * (css-what parses them), style sheets and declarations parsed by css-tree, so a rule is read
 * the way a browser's error recovery reads it, not the way a regular expression guesses.
 *
 * The rule, as docs/reference.md's "hidden-text rule" states it: a text node is hidden when, in every
 * reference viewport (a 1280×800 desktop and a 375×667 phone, light mode, on white), an element
 * around it is display:none (also the `hidden` attribute, Outlook's mso-hide:all), has opacity
 * below 0.1 (multiplied down the tree), is scaled below 0.1 (transform, scale, zoom), is clipped
 * to nothing (clip: rect() of at most 1px on an absolutely positioned box; clip-path: inset(50%),
 * circle(0), ellipse(0 0)), is placed off-screen (left/top/right, margin-left/top or text-indent
 * at -999px or beyond), or is a box of at most 1px wide or high with overflow hidden; or when its
 * own computed style is visibility:hidden/collapse, a colour with alpha below 0.1, a font-size
 * below 2px, or a colour that, blended over the nearest ancestor's opaque background colour
 * (white when none is set), is within 8 per channel of it. Rules from <style> apply by cascade
 * (importance, inline, specificity, order); @media rules apply where their query matches the viewport (screen/all
 * and width/height/orientation features; print and unknown features do not match); @supports,
 * @layer and @container contents apply.
 */
import parseCss from 'css-tree/parser';
import type { CssNode } from 'css-tree/parser';
import colorNames from 'color-name';
import { compile } from 'css-select';
import { parse as parseSelector, stringify as stringifySelector } from 'css-what';
import type { Selector } from 'css-what';
import type { AnyNode, Element } from 'domhandler';

import type { HiddenReason } from './body-notes.js';

export { HIDDEN_REASONS } from './body-notes.js';
export type { HiddenReason } from './body-notes.js';

/** Past this many selectors a style sheet is not evaluated further (hostile sheets are huge). */
const MAX_SELECTORS = 1_000;

interface Viewport {
  width: number;
  height: number;
}
const VIEWPORTS: readonly Viewport[] = [
  { width: 1280, height: 800 },
  { width: 375, height: 667 },
];

/** Properties the decision reads; declarations of any other property are not kept. */
const RELEVANT = new Set([
  'display',
  'visibility',
  'opacity',
  'color',
  'font-size',
  'font',
  'transform',
  'scale',
  'zoom',
  'clip',
  'clip-path',
  'position',
  'left',
  'top',
  'right',
  'text-indent',
  'margin',
  'margin-left',
  'margin-top',
  'overflow',
  'overflow-x',
  'overflow-y',
  'width',
  'height',
  'max-width',
  'max-height',
  'background',
  'background-color',
  'background-image',
  'mso-hide',
]);

/** CSS escapes undone (CSS Syntax §4.3.7): css-tree keeps identifiers as written. */
function unescapeCss(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    let hex = '';
    while (hex.length < 6 && i + 1 < s.length && /[0-9a-fA-F]/.test(s[i + 1] as string)) hex += s[++i];
    if (hex !== '') {
      const cp = parseInt(hex, 16);
      out += cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
      if (/[ \t\n\r\f]/.test(s[i + 1] ?? '')) i++;
    } else if (i + 1 < s.length) {
      out += s[++i];
    }
  }
  return out;
}

interface Decl {
  property: string;
  value: CssNode[];
  important: boolean;
}

function valueNodes(v: CssNode['value']): CssNode[] {
  if (v === undefined || typeof v === 'string') return [];
  return v.children?.toArray() ?? [];
}

function declarationsOf(list: CssNode[]): Decl[] {
  const out: Decl[] = [];
  for (const d of list) {
    if (d.type !== 'Declaration' || d.property === undefined) continue;
    const property = unescapeCss(d.property).toLowerCase();
    if (!RELEVANT.has(property)) continue;
    out.push({ property, value: valueNodes(d.value), important: Boolean(d.important) });
  }
  return out;
}

const ignoreErrors = (): void => undefined;

/** A style attribute's declarations. */
export function inlineDeclarations(style: string): Decl[] {
  if (style.trim() === '') return [];
  const ast = parseCss(style, { context: 'declarationList', onParseError: ignoreErrors });
  return declarationsOf(ast.children?.toArray() ?? []);
}

// ---------------------------------------------------------------------------------------------
// Values

type Rgba = [number, number, number, number];

function ident(n: CssNode | undefined): string | undefined {
  return n?.type === 'Identifier' && n.name !== undefined ? unescapeCss(n.name).toLowerCase() : undefined;
}

function numberOf(n: CssNode | undefined): number | undefined {
  if (n === undefined || typeof n.value !== 'string') return undefined;
  if (n.type !== 'Number' && n.type !== 'Percentage' && n.type !== 'Dimension') return undefined;
  const v = Number(n.value);
  return Number.isFinite(v) ? v : undefined;
}

/** A length in px; em/ex/ch against `fontPx`, vw/vh against the viewport. Percentages: undefined. */
function lengthPx(n: CssNode | undefined, fontPx: number, vp: Viewport): number | undefined {
  const v = numberOf(n);
  if (v === undefined || n === undefined) return undefined;
  if (n.type === 'Number') return v; // unitless zero (and, leniently, quirks-mode px)
  if (n.type !== 'Dimension') return undefined;
  const unit = unescapeCss(n.unit ?? '').toLowerCase();
  const per: Record<string, number> = {
    px: 1,
    pt: 4 / 3,
    pc: 16,
    in: 96,
    cm: 96 / 2.54,
    mm: 96 / 25.4,
    q: 96 / 101.6,
    em: fontPx,
    rem: 16,
    ex: fontPx / 2,
    ch: fontPx / 2,
    vw: vp.width / 100,
    vh: vp.height / 100,
    vmin: Math.min(vp.width, vp.height) / 100,
    vmax: Math.max(vp.width, vp.height) / 100,
  };
  const f = per[unit];
  return f === undefined ? undefined : v * f;
}

function args(n: CssNode): CssNode[] {
  return (n.children?.toArray() ?? []).filter((c) => c.type !== 'Operator' && c.type !== 'WhiteSpace');
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const a = s * Math.min(l, 1 - l);
  const f = (k: number): number => {
    const x = (k + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(x - 3, 9 - x, 1))));
  };
  return [f(0), f(8), f(4)];
}

/** A colour value: named, #hex, rgb()/rgba()/hsl()/hsla(); undefined when not a colour. */
function colourOf(n: CssNode | undefined): Rgba | 'current' | undefined {
  if (n === undefined) return undefined;
  const name = ident(n);
  if (name !== undefined) {
    if (name === 'transparent') return [0, 0, 0, 0];
    if (name === 'currentcolor') return 'current';
    const rgb = colorNames[name];
    return rgb === undefined ? undefined : [rgb[0], rgb[1], rgb[2], 1];
  }
  if (n.type === 'Hash' && typeof n.value === 'string') {
    let h = n.value.toLowerCase();
    if (!/^[0-9a-f]+$/.test(h)) return undefined;
    if (h.length === 3 || h.length === 4) h = [...h].map((c) => c + c).join('');
    if (h.length !== 6 && h.length !== 8) return undefined;
    const at = (i: number): number => parseInt(h.slice(i, i + 2), 16);
    return [at(0), at(2), at(4), h.length === 8 ? at(6) / 255 : 1];
  }
  if (n.type === 'Function' && n.name !== undefined) {
    const fn = unescapeCss(n.name).toLowerCase();
    const a = args(n);
    const alphaNode = a[3];
    const alpha =
      alphaNode === undefined
        ? 1
        : alphaNode.type === 'Percentage'
          ? (numberOf(alphaNode) ?? 100) / 100
          : (numberOf(alphaNode) ?? 1);
    if (fn === 'rgb' || fn === 'rgba') {
      const ch = a.slice(0, 3).map((c) => {
        const v = numberOf(c) ?? 0;
        return c.type === 'Percentage' ? (v * 255) / 100 : v;
      });
      if (ch.length < 3) return undefined;
      return [ch[0] as number, ch[1] as number, ch[2] as number, alpha];
    }
    if (fn === 'hsl' || fn === 'hsla') {
      const [h, s, l] = a.slice(0, 3).map((c) => numberOf(c) ?? 0);
      if (l === undefined) return undefined;
      return [...hslToRgb(h ?? 0, (s ?? 0) / 100, l / 100), alpha];
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Style sheets

interface Rule {
  match: (el: Element) => boolean;
  specificity: [number, number, number];
  order: number;
  decls: Decl[];
  /** Per viewport: does the rule's @media condition hold there. */
  applies: boolean[];
}

function specificityOf(sel: Selector[]): [number, number, number] {
  let a = 0;
  let b = 0;
  let c = 0;
  for (const t of sel) {
    if (t.type === 'attribute') {
      if (t.name === 'id' && t.action === 'equals') a++;
      else b++;
    } else if (t.type === 'pseudo') {
      if (Array.isArray(t.data)) {
        if (t.name !== 'where') {
          const inner = t.data.map(specificityOf).reduce((m, s) => (cmpSpec(s, m) > 0 ? s : m), [0, 0, 0]);
          a += inner[0];
          b += inner[1];
          c += inner[2];
        }
      } else b++;
    } else if (t.type === 'tag' || t.type === 'pseudo-element') c++;
  }
  return [a, b, c];
}

function cmpSpec(x: readonly number[], y: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

function usesHas(sel: Selector[]): boolean {
  return sel.some(
    (t) => t.type === 'pseudo' && (t.name === 'has' || (Array.isArray(t.data) && t.data.some(usesHas))),
  );
}

function featureHolds(name: string, value: CssNode | null | undefined, vp: Viewport): boolean {
  const n = name
    .toLowerCase()
    .replace(/^(min|max)-/, '')
    .replace(/^device-/, '');
  const bound = /^min-/.test(name.toLowerCase()) ? 'min' : /^max-/.test(name.toLowerCase()) ? 'max' : 'eq';
  if (n === 'width' || n === 'height') {
    const actual = n === 'width' ? vp.width : vp.height;
    if (value === null || value === undefined) return actual > 0;
    const v = lengthPx(value, 16, vp);
    if (v === undefined) return false;
    return bound === 'min' ? actual >= v : bound === 'max' ? actual <= v : actual === v;
  }
  if (n === 'orientation') {
    const o = ident(value ?? undefined);
    return o === (vp.width >= vp.height ? 'landscape' : 'portrait');
  }
  if (n === 'prefers-color-scheme') return ident(value ?? undefined) === 'light';
  if (n === 'color') return true;
  return false;
}

function compare(a: number, op: string, b: number): boolean {
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '=':
      return a === b;
    default:
      return false;
  }
}

const flip: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '=': '=' };

function rangeHolds(r: CssNode, vp: Viewport): boolean {
  // (width <= 600px), (600px >= width), (400px < width < 800px)
  const feature = (n: CssNode | null | undefined): number | undefined => {
    const id = ident(n ?? undefined);
    if (id === 'width' || id === 'device-width') return vp.width;
    if (id === 'height' || id === 'device-height') return vp.height;
    return undefined;
  };
  const len = (n: CssNode | null | undefined): number | undefined =>
    n === null || n === undefined ? undefined : lengthPx(n, 16, vp);
  const left = feature(r.left);
  const middle = feature(r.middle);
  const op1 = r.leftComparison ?? '';
  const op2 = r.rightComparison ?? '';
  if (left !== undefined) {
    const v = len(r.middle);
    return v !== undefined && compare(left, op1, v);
  }
  if (middle !== undefined) {
    const l = len(r.left);
    if (l === undefined || !compare(middle, flip[op1] ?? '', l)) return false;
    if (r.right === null || r.right === undefined) return true;
    const rv = len(r.right);
    return rv !== undefined && compare(middle, op2, rv);
  }
  return false;
}

function conditionHolds(c: CssNode, vp: Viewport): boolean {
  let result: boolean | undefined;
  let op: 'and' | 'or' = 'and';
  let negate = false;
  for (const part of c.children?.toArray() ?? []) {
    const word = ident(part);
    if (word === 'and' || word === 'or') {
      op = word;
      continue;
    }
    if (word === 'not') {
      negate = !negate;
      continue;
    }
    let v: boolean;
    if (part.type === 'Feature') v = featureHolds(part.name ?? '', part.value as CssNode | undefined, vp);
    else if (part.type === 'FeatureRange') v = rangeHolds(part, vp);
    else if (part.type === 'Condition') v = conditionHolds(part, vp);
    else v = false;
    if (negate) v = !v;
    negate = false;
    result = result === undefined ? v : op === 'and' ? result && v : result || v;
  }
  return result ?? true;
}

/** Whether an @media prelude matches a viewport (screen, light mode). */
function mediaMatches(prelude: CssNode | null | undefined, vp: Viewport): boolean {
  const list = prelude?.children?.toArray().find((n) => n.type === 'MediaQueryList');
  if (list === undefined) return false; // unparsable: a browser drops it
  return (list.children?.toArray() ?? []).some((q) => {
    if (q.type !== 'MediaQuery') return false;
    const type = (q.mediaType ?? 'all').toLowerCase();
    let ok = type === 'all' || type === 'screen';
    if (ok && q.condition) ok = conditionHolds(q.condition, vp);
    return q.modifier === 'not' ? !ok : ok;
  });
}

/** Rules of the style sheets that carry a relevant declaration, with their @media context. */
export function collectRules(sheets: readonly string[]): { rules: Rule[]; conditional: boolean } {
  const rules: Rule[] = [];
  let order = 0;
  let selectors = 0;
  let conditional = false;
  const visit = (nodes: CssNode[], applies: boolean[]): void => {
    for (const n of nodes) {
      if (selectors >= MAX_SELECTORS) return;
      if (n.type === 'Rule') {
        const decls = declarationsOf(n.block?.children?.toArray() ?? []);
        const prelude =
          n.prelude?.type === 'Raw' && typeof n.prelude.value === 'string' ? n.prelude.value : '';
        order++;
        if (decls.length === 0 || prelude.trim() === '') continue;
        let parsed: Selector[][];
        try {
          parsed = parseSelector(prelude);
        } catch {
          continue; // an invalid selector drops the whole rule, as in a browser
        }
        for (const sel of parsed) {
          if (usesHas(sel)) continue; // :has() is quadratic on hostile markup: not evaluated
          let match: (el: Element) => boolean;
          try {
            match = compile<AnyNode, Element>(stringifySelector([sel]), { xmlMode: false });
          } catch {
            continue; // unsupported pseudo-classes (:hover…): never matches, as for a reader
          }
          selectors++;
          rules.push({ match, specificity: specificityOf(sel), order, decls, applies });
        }
      } else if (n.type === 'Atrule' && n.block) {
        const name = (n.name ?? '').toLowerCase();
        const inner = n.block.children?.toArray() ?? [];
        if (name === 'media') {
          const here = VIEWPORTS.map((vp, i) => (applies[i] ?? false) && mediaMatches(n.prelude, vp));
          if (here.some((x, i) => x !== applies[i])) conditional = true;
          visit(inner, here);
        } else if (name === 'supports' || name === 'layer' || name === 'container' || name === 'scope') {
          visit(inner, applies);
        }
      }
    }
  };
  for (const css of sheets) {
    const ast = parseCss(css, { parseRulePrelude: false, onParseError: ignoreErrors });
    visit(
      ast.children?.toArray() ?? [],
      VIEWPORTS.map(() => true),
    );
  }
  return { rules, conditional };
}

// ---------------------------------------------------------------------------------------------
// Computed state down the tree

interface Cascaded {
  value: CssNode[];
  important: boolean;
  inline: boolean;
  specificity: readonly number[];
  order: number;
}

function wins(a: Cascaded, b: Cascaded | undefined): boolean {
  if (b === undefined) return true;
  if (a.important !== b.important) return a.important;
  if (a.inline !== b.inline) return a.inline;
  const s = cmpSpec(a.specificity, b.specificity);
  if (s !== 0) return s > 0;
  return a.order >= b.order;
}

export interface ElementState {
  /** Set when this element or an ancestor hides everything inside it. */
  subtree?: HiddenReason;
  visibilityHidden: boolean;
  colour: Rgba;
  fontPx: number;
  /** Nearest ancestor's opaque background; undefined when an image or gradient makes it unknowable. */
  background: [number, number, number] | undefined;
  opacity: number;
  scale: number;
}

export const ROOT_STATE: ElementState = {
  visibilityHidden: false,
  colour: [0, 0, 0, 1],
  fontPx: 16,
  background: [255, 255, 255],
  opacity: 1,
  scale: 1,
};

const FONT_KEYWORDS: Record<string, number> = {
  'xx-small': 9,
  'x-small': 10,
  small: 13,
  medium: 16,
  large: 18,
  'x-large': 24,
  'xx-large': 32,
  'xxx-large': 48,
};

function fontSize(nodes: CssNode[], parentPx: number, vp: Viewport): number | undefined {
  const n = nodes[0];
  if (n === undefined) return undefined;
  const word = ident(n);
  if (word !== undefined) {
    if (word === 'smaller') return parentPx / 1.2;
    if (word === 'larger') return parentPx * 1.2;
    return FONT_KEYWORDS[word];
  }
  if (n.type === 'Percentage') return ((numberOf(n) ?? 100) * parentPx) / 100;
  return lengthPx(n, parentPx, vp);
}

/** The size part of the `font` shorthand: the token before "/", else the first length. */
function fontShorthandSize(nodes: CssNode[]): CssNode[] {
  const slash = nodes.findIndex((n) => n.type === 'Operator' && n.value === '/');
  if (slash > 0) return [nodes[slash - 1] as CssNode];
  const size = nodes.find(
    (n) =>
      n.type === 'Dimension' ||
      n.type === 'Percentage' ||
      (n.type === 'Number' && numberOf(n) === 0) ||
      (ident(n) !== undefined && FONT_KEYWORDS[ident(n) as string] !== undefined),
  );
  return size === undefined ? [] : [size];
}

function scaleOf(nodes: CssNode[]): number {
  let s = 1;
  for (const n of nodes) {
    if (n.type !== 'Function' || n.name === undefined) continue;
    const fn = unescapeCss(n.name).toLowerCase();
    const v = args(n).map((a) => (a.type === 'Percentage' ? (numberOf(a) ?? 100) / 100 : numberOf(a)));
    if (fn === 'scale' || fn === 'scale3d') s *= Math.min(Math.abs(v[0] ?? 1), Math.abs(v[1] ?? v[0] ?? 1));
    else if (fn === 'scalex' || fn === 'scaley') s *= Math.abs(v[0] ?? 1);
    else if (fn === 'matrix' && v.length >= 4) {
      s *= Math.min(Math.hypot(v[0] ?? 1, v[1] ?? 0), Math.hypot(v[2] ?? 0, v[3] ?? 1));
    }
  }
  return s;
}

function clipRectHides(nodes: CssNode[], fontPx: number, vp: Viewport): boolean {
  const rect = nodes.find((n) => n.type === 'Function' && (n.name ?? '').toLowerCase() === 'rect');
  if (rect === undefined) return false;
  const [t, r, b, l] = args(rect).map((a) => (ident(a) === 'auto' ? undefined : lengthPx(a, fontPx, vp)));
  const height = t !== undefined && b !== undefined ? b - t : Infinity;
  const width = l !== undefined && r !== undefined ? r - l : Infinity;
  return height <= 1 || width <= 1;
}

function clipPathHides(nodes: CssNode[]): boolean {
  const fn = nodes.find((n) => n.type === 'Function');
  if (fn === undefined) return false;
  const name = (fn.name ?? '').toLowerCase();
  const a = args(fn);
  const first = a[0];
  if (name === 'inset') {
    // inset(50%) or more from each side leaves nothing.
    const pct = a.filter((x) => x.type === 'Percentage').map((x) => numberOf(x) ?? 0);
    if (pct.length > 0 && pct.every((p) => p >= 50)) return true;
    return false;
  }
  if (name === 'circle' || name === 'ellipse') {
    const r = numberOf(first);
    return first !== undefined && first.type !== 'Identifier' && r === 0;
  }
  return false;
}

function backgroundOf(
  decls: Map<string, Cascaded>,
  inherited: ElementState['background'],
): ElementState['background'] {
  const image = decls.get('background-image')?.value;
  const bg = decls.get('background')?.value;
  const hasImage = (nodes: CssNode[] | undefined): boolean =>
    (nodes ?? []).some(
      (n) => n.type === 'Url' || (n.type === 'Function' && /gradient|url|image/i.test(n.name ?? '')),
    );
  if (hasImage(bg) || (hasImage(image) && ident(image?.[0]) !== 'none')) return undefined;
  const bgc = decls.get('background-color')?.value[0];
  const c = bgc !== undefined ? colourOf(bgc) : bg?.map(colourOf).find((x) => x !== undefined);
  if (c === undefined || c === 'current') return inherited;
  if (c[3] >= 0.9) return [c[0], c[1], c[2]];
  if (c[3] <= 0.1) return inherited;
  return undefined; // translucent over something: not decidable here
}

/** Presentational hints of old HTML mail (bgcolor, <font color>), below every author rule. */
function presentational(el: Element): Decl[] {
  const out: Decl[] = [];
  const hint = (property: string, text: string): void => {
    out.push(...inlineDeclarations(`${property}: ${text}`).filter((d) => d.property === property));
  };
  const bg = el.attribs['bgcolor'];
  if (bg !== undefined && /^[#a-z0-9]+$/i.test(bg.trim())) hint('background-color', bg.trim());
  // <body background=…>, <td background=…>: an image behind the text makes its colour undecidable.
  if ((el.attribs['background'] ?? '').trim() !== '') hint('background-image', 'url(x)');
  const text = el.attribs['text'];
  if (el.name === 'body' && text !== undefined && /^[#a-z0-9]+$/i.test(text.trim()))
    hint('color', text.trim());
  const color = el.attribs['color'];
  if (el.name === 'font' && color !== undefined && /^[#a-z0-9]+$/i.test(color.trim()))
    hint('color', color.trim());
  if ('hidden' in el.attribs)
    out.push({
      property: 'display',
      value: [{ type: 'Identifier', name: 'hidden-attribute' }],
      important: false,
    });
  return out;
}

export interface StyleContext {
  rules: Rule[];
  /** Each element's own declarations (presentational hints, style attribute), parsed once. */
  own: WeakMap<Element, { hints: Decl[]; inline: Decl[] }>;
  /** Viewports whose answers differ (only the first when no @media rule changes anything). */
  viewports: number;
}

export function styleContext(sheets: readonly string[]): StyleContext {
  const { rules, conditional } = collectRules(sheets);
  return { rules, own: new WeakMap(), viewports: conditional ? VIEWPORTS.length : 1 };
}

/** An element's state in viewport `vi`, from its parent's. */
export function elementState(ctx: StyleContext, el: Element, parent: ElementState, vi: number): ElementState {
  const vp = VIEWPORTS[vi] as Viewport;
  const decls = new Map<string, Cascaded>();
  const offer = (d: Decl, c: Omit<Cascaded, 'value' | 'important'>): void => {
    const cand: Cascaded = { ...c, value: d.value, important: d.important };
    if (wins(cand, decls.get(d.property))) decls.set(d.property, cand);
  };
  let own = ctx.own.get(el);
  if (own === undefined) {
    const style = el.attribs['style'];
    own = { hints: presentational(el), inline: style === undefined ? [] : inlineDeclarations(style) };
    ctx.own.set(el, own);
  }
  for (const d of own.hints) offer(d, { inline: false, specificity: [-1, 0, 0], order: -1 });
  for (const r of ctx.rules) {
    if (!(r.applies[vi] ?? false) || !r.match(el)) continue;
    for (const d of r.decls) offer(d, { inline: false, specificity: r.specificity, order: r.order });
  }
  for (const d of own.inline) offer(d, { inline: true, specificity: [0, 0, 0], order: 0 });

  const v = (p: string): CssNode[] => decls.get(p)?.value ?? [];
  const word = (p: string): string | undefined => ident(v(p)[0]);

  const fontPx =
    fontSize(v('font-size'), parent.fontPx, vp) ??
    fontSize(fontShorthandSize(v('font')), parent.fontPx, vp) ??
    parent.fontPx;
  const colourValue = colourOf(v('color')[0]);
  const colour: Rgba = colourValue === undefined || colourValue === 'current' ? parent.colour : colourValue;
  const visibility = word('visibility');
  const state: ElementState = {
    visibilityHidden:
      visibility === 'hidden' || visibility === 'collapse'
        ? true
        : visibility === 'visible'
          ? false
          : parent.visibilityHidden,
    colour,
    fontPx,
    background: backgroundOf(decls, parent.background),
    opacity: parent.opacity,
    scale: parent.scale,
  };
  if (parent.subtree !== undefined) return { ...state, subtree: parent.subtree };

  const hide = (reason: HiddenReason): ElementState => ({ ...state, subtree: reason });
  const display = word('display');
  if (display === 'none') return hide('display-none');
  if (display === 'hidden-attribute') return hide('hidden-attribute');
  if (word('mso-hide') === 'all') return hide('mso-hide');
  const opacityNode = v('opacity')[0];
  if (opacityNode !== undefined) {
    const o = numberOf(opacityNode);
    if (o !== undefined) state.opacity *= opacityNode.type === 'Percentage' ? o / 100 : o;
  }
  if (state.opacity < 0.1) return hide('opacity');
  state.scale *= scaleOf(v('transform'));
  const scaleProp = v('scale')
    .map((n) => numberOf(n))
    .filter((n): n is number => n !== undefined);
  if (scaleProp.length > 0) state.scale *= Math.min(...scaleProp.map(Math.abs));
  const zoom = numberOf(v('zoom')[0]);
  if (zoom !== undefined && v('zoom')[0]?.type !== 'Dimension')
    state.scale *= v('zoom')[0]?.type === 'Percentage' ? zoom / 100 : zoom;
  if (state.scale < 0.1) return hide('scaled-to-zero');
  const position = word('position');
  const positioned = position === 'absolute' || position === 'fixed';
  if (positioned && clipRectHides(v('clip'), fontPx, vp)) return hide('clipped');
  if (clipPathHides(v('clip-path'))) return hide('clipped');
  const far = (p: string): boolean => {
    const px = lengthPx(v(p)[0], fontPx, vp);
    return px !== undefined && px <= -999;
  };
  if (positioned && (far('left') || far('top') || far('right'))) return hide('off-screen');
  if (far('text-indent') || far('margin-left') || far('margin-top')) return hide('off-screen');
  const margin = v('margin');
  const marginTop = lengthPx(margin[0], fontPx, vp);
  const marginLeft = lengthPx(margin[3] ?? margin[1] ?? margin[0], fontPx, vp);
  if ((marginTop ?? 0) <= -999 || (marginLeft ?? 0) <= -999) return hide('off-screen');
  const overflowHidden = ['overflow', 'overflow-x', 'overflow-y'].some((p) => {
    const w = word(p);
    return w === 'hidden' || w === 'clip';
  });
  if (overflowHidden) {
    for (const p of ['width', 'height', 'max-width', 'max-height']) {
      const px = lengthPx(v(p)[0], fontPx, vp);
      if (px !== undefined && px <= 1) return hide('zero-size-box');
    }
  }
  return state;
}

/** Why a text node whose parent element has `state` is hidden, if it is. */
export function textHiddenBy(state: ElementState): HiddenReason | undefined {
  if (state.subtree !== undefined) return state.subtree;
  if (state.visibilityHidden) return 'visibility-hidden';
  if (state.colour[3] < 0.1) return 'transparent-colour';
  if (state.fontPx < 2) return 'tiny-font';
  const bg = state.background;
  if (bg !== undefined) {
    // A translucent colour is seen blended over the background (alpha compositing).
    const a = Math.min(1, state.colour[3]);
    const diff = Math.max(
      ...[0, 1, 2].map((i) => a * Math.abs((state.colour[i] as number) - (bg[i] as number))),
    );
    if (diff <= 8) return 'same-colour-as-background';
  }
  return undefined;
}
