/**
 * The one cleaner every string of a result passes: characters a person cannot see never reach
 * the model (docs/architecture.md, promise 5). The sets come from the Unicode data built into the regex
 * engine (`\p{…}`), never from a hand list, so a new Unicode version moves with Node:
 *
 * - General Category Cf (format: zero-width, bidi controls, tags, U+0600–0605, U+06DD, U+070F,
 *   U+0890, U+08E2, U+110BD, U+13430…, U+1BCA0…, U+1D173–1D17A…) and the other
 *   Default_Ignorable_Code_Point characters (variation selectors, Hangul fillers, the combining
 *   grapheme joiner): removed.
 * - Cc (C0 and C1 controls): removed, except TAB and LF. CR, CRLF, VT, FF, NEL (U+0085),
 *   LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029) are line breaks: in multi-line
 *   text they become LF, in single-line text a space.
 * - Lone UTF-16 surrogates (a broken decoder's output): U+FFFD.
 *
 * - Blank-rendering characters that are not default-ignorable. The set is UTS #18 Annex C's
 *   `blank` (White_Space minus the vertical ones: \p{Zs} and TAB) plus the graphic characters
 *   Unicode itself names as blank or filler and leaves out of Default_Ignorable_Code_Point
 *   (UnicodeData.txt: U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, U+16FE4
 *   KHITAN SMALL SCRIPT FILLER; the Hangul fillers are already default-ignorable). No property
 *   marks "renders as nothing" and no package in the dependency tree lists it, so that short
 *   name-derived set is the one hand-kept part. Kept as they are: SPACE, NO-BREAK SPACE and
 *   IDEOGRAPHIC SPACE (ordinary text uses them). The other Zs spaces and the two graphic blanks
 *   become SPACE, which is what a reader sees; the combining filler is removed.
 * - Runs: in single-line text every run of two or more blanks (TAB included) becomes one SPACE;
 *   in multi-line text a run longer than MAX_BLANK_RUN becomes one SPACE (indentation and
 *   aligned columns stay, a screen-wide gap that pushes words out of view does not).
 *
 * Emoji stay whole: ZERO WIDTH JOINER is kept only between two Extended_Pictographic characters
 * (👩‍💻, 👨‍👩‍👧) and VARIATION SELECTOR-16 only once, right after an Emoji character (❤️). Anywhere
 * else both are removed. Tag characters are removed even inside emoji tag sequences, so a
 * subdivision flag shows as its base 🏴: tags are exactly how ASCII is smuggled invisibly.
 */

// String.prototype.toWellFormed (ES2024) is in Node 20's V8, but not in the ES2023 lib this
// project compiles against; the same rule as a regex needs neither.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Line breaks other than LF (CRLF first, so it becomes one LF). */
// eslint-disable-next-line no-control-regex
const BREAKS = /\r\n|[\r\u000B\u000C\u0085\u2028\u2029]/g;

/** An LF with the spaces around it (single-line fields, after BREAKS made every break an LF). */
const LF_RUN = /[^\S\n]*\n\s*/g;

/** Everything hidden: Cc but TAB and LF, Cf, the other default-ignorables, the combining filler. */
const HIDDEN = /(?![\t\n])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u{16FE4}]/gu;

/** Blanks shown as a plain SPACE: the Zs spaces but the three kept, and the graphic blanks. */
const AS_SPACE = /(?![ \u00A0\u3000])[\p{Zs}\u2800\u{1D159}]/gu;

/** A run of blanks (after AS_SPACE: SPACE, NBSP, IDEOGRAPHIC SPACE, TAB). */
const BLANKS_SINGLE = /[ \t\u00A0\u3000]{2,}/g;
/** Longest run of blanks multi-line text keeps (a wide indented or aligned column fits). */
export const MAX_BLANK_RUN = 32;
const BLANKS_MULTI = new RegExp(`[ \\t\\u00A0\\u3000]{${MAX_BLANK_RUN + 1},}`, 'g');
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const EMOJI = /^\p{Emoji}$/u;
const SKIN_TONE = /^[\u{1F3FB}-\u{1F3FF}]$/u;

/** The code point that ends just before `end`, or "" at the start. */
function before(s: string, end: number): string {
  if (end <= 0) return '';
  const low = s.charCodeAt(end - 1);
  const high = end >= 2 ? s.charCodeAt(end - 2) : 0;
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
    ? s.slice(end - 2, end)
    : s.slice(end - 1, end);
}

/** The code point that starts at `at`, or "" at the end. */
function after(s: string, at: number): string {
  const cp = s.codePointAt(at);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** The character before `end`, stepping over one skin-tone modifier (and, for a joiner, one VS16). */
function baseBefore(s: string, end: number, skipVs16: boolean): string {
  let ch = before(s, end);
  if (skipVs16 && ch === '\uFE0F') {
    end -= 1;
    ch = before(s, end);
  }
  if (SKIN_TONE.test(ch)) ch = before(s, end - ch.length);
  return ch;
}

/** Whether this joiner or VS16 is part of an emoji sequence, judged on the original neighbours. */
function keptInEmoji(ch: string, at: number, s: string): boolean {
  if (ch === '\u200D') return PICTOGRAPH.test(baseBefore(s, at, true)) && PICTOGRAPH.test(after(s, at + 1));
  if (ch === '\uFE0F') return EMOJI.test(baseBefore(s, at, false));
  return false;
}

function stripHidden(s: string): string {
  return s.replace(HIDDEN, (ch: string, at: number) => (keptInEmoji(ch, at, s) ? ch : ''));
}

/** Lone surrogates → U+FFFD. */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/** Multi-line text (bodies, attachment text): line breaks become LF, hidden characters go. */
export function cleanText(s: string): string {
  return blanksAsSpace(s).replace(BLANKS_MULTI, ' ');
}

function blanksAsSpace(s: string): string {
  return stripHidden(wellFormed(s).replace(BREAKS, '\n')).replace(AS_SPACE, ' ');
}

/**
 * Single-line text (names, addresses, subjects, types, URLs): every line break, with the
 * spaces around it, becomes one space; hidden characters go.
 */
export function cleanLine(s: string): string {
  return blanksAsSpace(s).replace(LF_RUN, ' ').replace(BLANKS_SINGLE, ' ');
}

/** True when cleaning would change nothing (a fixpoint: what a result shows as is). */
export function isClean(s: string): boolean {
  return cleanLine(s) === s;
}
