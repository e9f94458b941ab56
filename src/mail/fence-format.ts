/**
 * The shape of the fence src/mcp puts around mail-derived text: `⟦mail 1a2b3c⟧…⟦/mail 1a2b3c⟧`.
 * Pure, so the places that must read a fenced value back (an attachment name a model copied from
 * a result, the demo's display) share one definition with the code that writes it.
 */
import { cleanLine } from './invisible.js';

export const FENCE_OPEN = '\u27E6'; // ⟦
export const FENCE_CLOSE = '\u27E7'; // ⟧

/** Mail cannot write the fence brackets: inside a fence they read as plain brackets. */
export function fenceSafe(s: string): string {
  return s.replaceAll(FENCE_OPEN, '[').replaceAll(FENCE_CLOSE, ']');
}

/**
 * A single-line value exactly as a result shows it inside its fence (cleaned, brackets
 * replaced): what a file name must already be for the reported name to be the real one, and
 * what a name the model copies back is compared with.
 */
export function shownAs(s: string): string {
  return fenceSafe(cleanLine(s));
}

const FENCED = /\u27E6mail [0-9a-f]+\u27E7([\s\S]*?)\u27E6\/mail [0-9a-f]+\u27E7/g;
const WHOLE = /^\u27E6mail [0-9a-f]+\u27E7([\s\S]*)\u27E6\/mail [0-9a-f]+\u27E7$/;

/** The inner text of a string that is exactly one fenced value; anything else unchanged. */
export function unfence(s: string): string {
  const m = WHOLE.exec(s);
  return m ? (m[1] ?? '') : s;
}

/** Every fenced span replaced by its inner text (for showing a result to a person). */
export function stripFences(s: string): string {
  return s.replace(FENCED, '$1');
}
