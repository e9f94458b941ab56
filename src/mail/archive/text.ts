/**
 * Bytes → text, or "this is binary". Only the bytes decide: a byte-order mark names UTF-8 or
 * UTF-16; bytes that are valid UTF-8 are UTF-8; anything else is read as windows-1252 and marked
 * as a guess (it is what unlabelled non-UTF-8 text from Windows and older mail tools usually is,
 * and every byte decodes to something, so the guess is never fatal).
 */

import { decodeCharset, normalizeCharsetLabel } from '../headers.js';

/** The four the bytes can prove, or the label a plain-text part declared (lower case). */
export type TextCharset = string;

export interface DecodedText {
  text: string;
  charset: TextCharset;
  /** True when no BOM or valid UTF-8 proved the charset: windows-1252 was assumed. */
  guessedCharset: boolean;
}

/**
 * windows-1252 0x80–0x9F (WHATWG Encoding, index-windows-1252). Node 20's TextDecoder decodes
 * the "windows-1252" label as ISO-8859-1 and turns these into C1 controls (docs/facts.md measured
 * the same of postal-mime), so the table is ours. The five unassigned bytes become U+FFFD.
 */
const CP1252_HIGH =
  '\u20AC\uFFFD\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\uFFFD\u017D\uFFFD' +
  '\uFFFD\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\uFFFD\u017E\u0178';

const UNASSIGNED_1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

export function decodeWindows1252(bytes: Uint8Array): string {
  const units = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    units[i] = b >= 0x80 && b <= 0x9f ? CP1252_HIGH.charCodeAt(b - 0x80) : b;
  }
  return new TextDecoder('utf-16le').decode(units);
}

/** Controls that do not belong in text: C0 other than TAB, LF, FF, CR and ESC (ANSI colours in logs); DEL. */
function isControlByte(b: number): boolean {
  return (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b) || b === 0x7f;
}

/**
 * Share of bytes that are not text allowed before the content counts as binary. Real text has
 * none; compressed or encrypted data has about one in eight (32 of 256 byte values are C0).
 */
const MAX_CONTROL_RATIO = 0.02;
/** A NUL this early means binary (the heuristic git and grep use). */
const NUL_WINDOW = 8192;

function looksBinaryBytes(bytes: Uint8Array, windows1252: boolean): boolean {
  const nulWindow = Math.min(bytes.length, NUL_WINDOW);
  for (let i = 0; i < nulWindow; i++) if (bytes[i] === 0) return true;
  let bad = 0;
  for (const b of bytes) {
    if (isControlByte(b) || (windows1252 && UNASSIGNED_1252.has(b))) bad++;
  }
  return bytes.length > 0 && bad / bytes.length > MAX_CONTROL_RATIO;
}

function looksBinaryText(text: string): boolean {
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x80 && isControlByte(c)) || c === 0xfffd) bad++;
  }
  return text.length > 0 && bad / text.length > MAX_CONTROL_RATIO;
}

function normalise(text: string): string {
  return (text.startsWith('\uFEFF') ? text.slice(1) : text).replace(/\r\n?/g, '\n');
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Labels that say nothing the bytes do not: judged by the bytes alone. */
const UNINFORMATIVE = new Set(['', 'us-ascii', 'ascii', 'utf-8', 'utf8', 'unknown-8bit', 'x-unknown']);

/**
 * The text the bytes hold, or undefined when they are binary. A charset the sender declared
 * (a text part's Content-Type) is tried first and judged on the decoded text, as a mail reader
 * does: Shift_JIS and ISO-2022 text are full of bytes that read as controls or unassigned
 * windows-1252 when judged raw. NULs still mean binary.
 */
export function decodeTextBytes(bytes: Uint8Array, declared?: string): DecodedText | undefined {
  const label = normalizeCharsetLabel(declared);
  if (!UNINFORMATIVE.has(label) && bytes.length > 0) {
    const head = bytes.subarray(0, NUL_WINDOW);
    const text = head.includes(0) ? undefined : decodeCharset(bytes, label);
    if (text !== undefined && !looksBinaryText(text))
      return { text: normalise(text), charset: label, guessedCharset: false };
  }
  return decodeByBytes(bytes);
}

function decodeByBytes(bytes: Uint8Array): DecodedText | undefined {
  const [b0, b1, b2] = [bytes[0], bytes[1], bytes[2]];
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    const charset = b0 === 0xff ? 'utf-16le' : 'utf-16be';
    const text = new TextDecoder(charset, { ignoreBOM: true }).decode(bytes.subarray(2));
    return looksBinaryText(text) ? undefined : { text: normalise(text), charset, guessedCharset: false };
  }
  const bom = b0 === 0xef && b1 === 0xbb && b2 === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  let text: string | undefined;
  try {
    text = utf8Strict.decode(body);
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    return looksBinaryBytes(body, false)
      ? undefined
      : { text: normalise(text), charset: 'utf-8', guessedCharset: false };
  }
  if (bom) {
    // The BOM says UTF-8; a few bad sequences are damage, not another charset.
    const lenient = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body);
    return looksBinaryText(lenient)
      ? undefined
      : { text: normalise(lenient), charset: 'utf-8', guessedCharset: false };
  }
  if (looksBinaryBytes(body, true)) return undefined;
  return { text: normalise(decodeWindows1252(body)), charset: 'windows-1252', guessedCharset: true };
}
