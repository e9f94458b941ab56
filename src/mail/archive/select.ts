/**
 * Choosing entries by name or glob, and paging text across entries by character offset.
 */
import { shownAs, unfence } from '../fence-format.js';

/**
 * `*` and `?` stay within one path segment, `**` crosses segments (as in shells and .gitignore).
 * Matching ignores case: archive tools on Windows and macOS do, and a model that types
 * "report.XML" means the report.
 */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] !== '*') re += '[^/]*';
      else if (pattern[i + 2] === '/') {
        re += '(?:.*/)?'; // "**/x" matches "x" at the top as well as deeper down
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'is');
}

const GLOB_CHARS = /[*?]/;

/**
 * A predicate over entry names: an exact name, or a glob. A pattern without "/" is also tried
 * against the last path segment, so "*.xml" finds "reports/2026/a.xml". A name matches as it is
 * and as results show it (fence-format shownAs: invisible characters and line breaks cleaned,
 * fence brackets replaced), so a name the model copies from a listing, fence and all, finds it.
 */
export function entryMatcher(pattern: string | undefined): (name: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true;
  const wanted = shownAs(unfence(pattern.trim()));
  const matches = one(wanted);
  return (name) => matches(name) || matches(shownAs(name));
}

function one(pattern: string): (name: string) => boolean {
  const base = (name: string): string => name.slice(name.lastIndexOf('/') + 1);
  const segmentOnly = !pattern.includes('/');
  if (!GLOB_CHARS.test(pattern)) {
    const want = pattern.toLowerCase();
    return (name) => name.toLowerCase() === want || (segmentOnly && base(name).toLowerCase() === want);
  }
  const re = globToRegExp(pattern);
  return (name) => re.test(name) || (segmentOnly && re.test(base(name)));
}

export interface PageSlice {
  /** Index into the texts that were paged. */
  index: number;
  /** Character range [from, to) within that text. */
  from: number;
  to: number;
}

export interface Page {
  slices: PageSlice[];
  totalChars: number;
  /** Where the next page starts; absent on the last page. */
  nextOffset?: number;
}

/** Moves a cut back by one when it would split a UTF-16 surrogate pair. */
function safeCut(text: string, at: number): number {
  if (at <= 0 || at >= text.length) return at;
  const c = text.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/**
 * One page of `maxChars` characters from the texts laid end to end; `offset` counts characters
 * (UTF-16 code units) from the start of the first text.
 */
export function pageTexts(texts: readonly string[], offset: number, maxChars: number): Page {
  const totalChars = texts.reduce((n, t) => n + t.length, 0);
  const slices: PageSlice[] = [];
  let start = 0;
  let budget = maxChars;
  let end = offset;
  for (let index = 0; index < texts.length && budget > 0; index++) {
    const text = texts[index] as string;
    const from = Math.max(0, offset - start);
    start += text.length;
    if (from >= text.length) continue;
    let to = Math.min(text.length, from + budget);
    if (to < text.length) to = Math.max(from + 1, safeCut(text, to));
    slices.push({ index, from, to });
    budget -= to - from;
    end = start - text.length + to;
  }
  const page: Page = { slices, totalChars };
  if (end < totalChars && slices.length > 0) page.nextOffset = end;
  return page;
}
