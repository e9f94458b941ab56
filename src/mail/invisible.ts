/**
 * The one cleaner every string of a result passes: characters a person cannot see never reach
 * the model (DESIGN, "Mail is data"). The sets come from the Unicode data built into the regex
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

/** Everything hidden: Cc but TAB and LF, Cf, the other default-ignorables. */
const HIDDEN = /(?![\t\n])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
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
  return stripHidden(wellFormed(s).replace(BREAKS, '\n'));
}

/**
 * Single-line text (names, addresses, subjects, types, URLs): every line break, with the
 * spaces around it, becomes one space; hidden characters go.
 */
export function cleanLine(s: string): string {
  return cleanText(s).replace(LF_RUN, ' ');
}

/** True when cleaning would change nothing (a fixpoint: what a result shows as is). */
export function isClean(s: string): boolean {
  return cleanLine(s) === s;
}
