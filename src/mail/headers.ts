/**
 * Header reading: charset decoding shared by the MIME layer, RFC 2047 encoded-words, and
 * RFC 5322 address lists. Header values are stored as they stand in the message (see
 * `Header.value` in types.ts); everything here decodes on read, so every provider's headers go
 * through the same code.
 */
import iconv from 'iconv-lite';

import { decodeIso2022Jp } from './iso-2022-jp.js';
import { decodeIso2022Kr } from './iso-2022-kr.js';
import type { Header } from './types.js';

const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Lenient = new TextDecoder('utf-8');

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** True when the bytes are well-formed UTF-8 (pure ASCII included). */
export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    utf8Strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Length of the well-formed UTF-8 sequence at `i` (Unicode §3.9 Table 3-7), 0 when there is none. */
function utf8SequenceAt(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const b = bytes[i + k];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (b0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b0 >= 0xe1 && b0 <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xf1 && b0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/**
 * Bytes with no usable charset label (raw 8-bit headers, unlabelled bodies): one decoder for
 * both. Well-formed UTF-8 sequences are UTF-8 (RFC 6532 made raw UTF-8 legal in headers, and it
 * is what unlabelled modern mail is); every other 8-bit byte is windows-1252, which is what
 * unlabelled 8-bit Western mail nearly always is and which, unlike ISO-8859-1, gives the
 * 0x80–0x9F bytes their printable meaning (€, curly quotes, dashes). Decided run by run, so one
 * stray byte in UTF-8 text costs one character, not the whole header ("Привет \xFF" stays
 * "Привет ÿ"), and a Latin-1 subject behind a UTF-8 list tag reads right in both halves.
 */
export function decodeUnlabelled(bytes: Uint8Array, header = false): string {
  if (isValidUtf8(bytes)) return utf8Lenient.decode(bytes);
  const buf = asBuffer(bytes);
  let out = '';
  let i = 0;
  while (i < buf.length) {
    let j = i;
    // A run of well-formed UTF-8 (ASCII included)…
    while (j < buf.length) {
      const n = utf8SequenceAt(buf, j);
      if (n === 0) break;
      j += n;
    }
    if (j > i) out += buf.toString('utf8', i, j);
    i = j;
    // …then a run of bytes that start no well-formed sequence.
    while (j < buf.length && utf8SequenceAt(buf, j) === 0) j++;
    // Dovecot hands a NUL byte in a header out as 0x80 (measured: "nul\x80in\x80subject"), where
    // Gmail drops it; a stray 0x80 in a header therefore reads as the NUL it stood for, removed
    // like every control, so both providers show the same subject. A UTF-8 € (E2 82 AC) is a
    // well-formed sequence and never reaches this run.
    const run = header ? buf.subarray(i, j).filter((b) => b !== 0x80) : buf.subarray(i, j);
    if (j > i) out += iconv.decode(Buffer.from(run), 'windows-1252');
    i = j;
  }
  return out;
}

/**
 * Label → decoder name. Follows the WHATWG Encoding Standard where mail is mislabelled in
 * practice: ISO-8859-1/US-ASCII labels are decoded as windows-1252, Shift_JIS as its Microsoft
 * superset cp932 (①, ㈱ and NEC/IBM extensions), GB2312/GBK as GB18030, EUC-KR as cp949.
 */
const CHARSET_ALIASES: ReadonlyMap<string, string> = new Map([
  ['iso-8859-1', 'windows-1252'],
  ['iso8859-1', 'windows-1252'],
  ['iso_8859-1', 'windows-1252'],
  ['latin1', 'windows-1252'],
  ['l1', 'windows-1252'],
  ['cp819', 'windows-1252'],
  ['shift_jis', 'cp932'],
  ['shift-jis', 'cp932'],
  ['sjis', 'cp932'],
  ['x-sjis', 'cp932'],
  ['ms_kanji', 'cp932'],
  ['csshiftjis', 'cp932'],
  ['windows-31j', 'cp932'],
  ['gb2312', 'gb18030'],
  ['gbk', 'gb18030'],
  ['x-gbk', 'gb18030'],
  ['euc-cn', 'gb18030'],
  ['euc-kr', 'cp949'],
  ['ks_c_5601-1987', 'cp949'],
  ['big5', 'big5-hkscs'],
]);

/** Labels that say nothing about 8-bit bytes: ASCII ones (8-bit bytes prove them wrong). */
const UNLABELLED = new Set([
  '',
  'us-ascii',
  'ascii',
  'ansi_x3.4-1968',
  'iso646-us',
  'default',
  'unknown',
  'x-unknown',
]);

/**
 * UTF-7 (RFC 2152) still arrives in old mail, so it is decoded (iconv-lite's utf7; the IMAP
 * mailbox-name variant of RFC 3501 §5.1.3 too). Text it smuggles past byte-level inspection is
 * no risk here: every result is decoded first, then stripped of invisible characters and fenced.
 */
const UTF7 = /^(?:x-)?(?:unicode-1-1-)?utf-?7$/;
const UTF7_IMAP = /^(?:x-)?utf-?7-?imap$/;

/** ISO-2022-JP family: decoded by iso-2022-jp.ts (iconv-lite has no codec for it). */
const ISO_2022_JP = /^(?:iso-?2022-?jp(?:-[0-9a-z]+)?|csiso2022jp|jis)$/;
/** ISO-2022-KR: decoded by iso-2022-kr.ts (iconv-lite has none either). */
const ISO_2022_KR = /^(?:iso-?2022-?kr|csiso2022kr)$/;

function sniffBom(bytes: Uint8Array): { encoding: string; skip: number } | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', skip: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', skip: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', skip: 2 };
  return undefined;
}

/** Lower-cased charset label without quotes, spaces or an RFC 2231 `*lang` suffix. */
export function normalizeCharsetLabel(charset: string | undefined): string {
  if (charset === undefined) return '';
  return charset
    .trim()
    .replace(/^["']|["']$/g, '')
    .replace(/\*.*$/, '')
    .trim()
    .toLowerCase();
}

/**
 * Decodes bytes in the given charset to text. A byte-order mark wins over the label (WHATWG
 * "decode" algorithm) and is stripped. Unknown, missing or ASCII labels fall back to
 * decodeUnlabelled (UTF-8 runs, other bytes windows-1252). A declared UTF-8 that is not well-formed keeps its label
 * and gets U+FFFD for the broken bytes: guessing another charset for the whole part would
 * garble the well-formed rest.
 */
export function decodeCharset(bytes: Uint8Array, charset?: string): string {
  const bom = sniffBom(bytes);
  if (bom) return iconv.decode(asBuffer(bytes.subarray(bom.skip)), bom.encoding, { stripBOM: true });
  const label = normalizeCharsetLabel(charset);
  if (UNLABELLED.has(label)) return decodeUnlabelled(bytes);
  if (label === 'utf-8' || label === 'utf8') return utf8Lenient.decode(bytes);
  if (ISO_2022_JP.test(label)) return decodeIso2022Jp(bytes);
  if (ISO_2022_KR.test(label)) return decodeIso2022Kr(bytes);
  if (UTF7.test(label)) return iconv.decode(asBuffer(bytes), 'utf7');
  if (UTF7_IMAP.test(label)) return iconv.decode(asBuffer(bytes), 'utf7imap');
  const name = CHARSET_ALIASES.get(label) ?? label;
  if (!iconv.encodingExists(name)) return decodeUnlabelled(bytes);
  return iconv.decode(asBuffer(bytes), name);
}

/**
 * Header text that reached us as one char per byte (8-bit bytes read as latin1, which is how
 * parsers keep unknown bytes intact) is given its real meaning: UTF-8 when the bytes are
 * well-formed UTF-8 (RFC 6532), else windows-1252. Strings already holding characters above
 * U+00FF are decoded text and are left alone.
 */
export function repair8bit(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\u0080-\u00ff]/.test(s) || /[^\u0000-\u00ff]/.test(s)) return s;
  return decodeUnlabelled(Buffer.from(s, 'latin1'), true);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=/g;

/** The decoder name a label resolves to, for encoding a character back into it. */
function encoderName(charset: string): string | undefined {
  const label = normalizeCharsetLabel(charset);
  if (UNLABELLED.has(label) || label === 'utf-8' || label === 'utf8') return undefined;
  const name = CHARSET_ALIASES.get(label) ?? label;
  return iconv.encodingExists(name) && !UTF7.test(label) && !UTF7_IMAP.test(label) ? name : undefined;
}

/**
 * The bytes a non-ASCII character inside an encoded word stood for. Raw 8-bit bytes inside a
 * word are bytes of the word's charset (RFC 2047 forbids them, mailers write them anyway); by the
 * time a header reaches this as text they were read as UTF-8 or Latin-1, so the character is
 * put back into the word's charset, and decoded once in it: =?iso-8859-1?Q?Fr\xF6sche?= is
 * "Frösche", never "FrÃ¶sche". A character the charset cannot hold keeps its UTF-8 bytes.
 */
function wordCharBytes(c: string, charset: string): Uint8Array {
  const name = encoderName(charset);
  if (name !== undefined) {
    const bytes = iconv.encode(c, name);
    if (iconv.decode(bytes, name) === c) return bytes;
  }
  return Buffer.from(c, 'utf8');
}

function decodeQ(text: string, charset: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '_') {
      // RFC 2047 §4.2 (2): underscore stands for SPACE in the Q encoding.
      out.push(0x20);
    } else if (c === '=' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      out.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c.charCodeAt(0) < 0x80) {
      out.push(c.charCodeAt(0));
    } else {
      const cp = text.codePointAt(i) as number;
      const ch = String.fromCodePoint(cp);
      for (const b of wordCharBytes(ch, charset)) out.push(b);
      i += ch.length - 1;
    }
  }
  return Uint8Array.from(out);
}

function decodeB(text: string): Uint8Array {
  return Buffer.from(text.replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
}

/**
 * A raw header line's bytes as text, the one way both providers read them: outside encoded
 * words, decodeUnlabelled (UTF-8 runs, other 8-bit bytes windows-1252); inside a Q word, raw
 * 8-bit bytes are kept as the bytes they are (written =XX), so decodeWords decodes them once,
 * in the word's own charset. Encoded words stay encoded: a Header value is the value as it
 * stands in the message.
 */
export function headerTextFromBytes(bytes: Uint8Array): string {
  const buf = asBuffer(bytes);
  if (!buf.some((b) => b >= 0x80)) return buf.toString('latin1');
  const view = buf.toString('latin1');
  let out = '';
  let last = 0;
  for (const m of view.matchAll(ENCODED_WORD)) {
    out += decodeUnlabelled(buf.subarray(last, m.index), true);
    const [word = '', charset = '', mode = '', text = ''] = m;
    let body = '';
    for (const ch of text) {
      const b = ch.charCodeAt(0);
      // Base64 has no 8-bit letters: decoders skip them, so they are dropped here.
      if (b >= 0x80) body += mode.toUpperCase() === 'Q' ? `=${b.toString(16).toUpperCase()}` : '';
      else body += ch;
    }
    out += word === '' ? '' : `=?${charset}?${mode}?${body}?=`;
    last = m.index + word.length;
  }
  return out + decodeUnlabelled(buf.subarray(last), true);
}

/**
 * Decodes RFC 2047 encoded-words anywhere in `s` (leniently: also inside quoted strings and
 * glued to other text, as real mailers produce them). Whitespace between two encoded-words is
 * dropped (§6.2). Consecutive words in the same charset are joined as bytes before decoding,
 * because encoders split multi-byte characters (and ISO-2022-JP escape sequences) across words.
 * Raw 8-bit bytes outside encoded-words are repaired first (see repair8bit).
 */
export function decodeWords(s: string): string {
  const input = repair8bit(s);
  let out = '';
  let pendingCharset: string | undefined;
  let pending: Uint8Array[] = [];
  let last = 0;
  const flush = (): void => {
    if (pendingCharset !== undefined) out += decodeCharset(Buffer.concat(pending), pendingCharset);
    pendingCharset = undefined;
    pending = [];
  };
  for (const m of input.matchAll(ENCODED_WORD)) {
    const between = input.slice(last, m.index);
    const charset = normalizeCharsetLabel(m[1]);
    const bytes = (m[2] ?? '').toUpperCase() === 'B' ? decodeB(m[3] ?? '') : decodeQ(m[3] ?? '', charset);
    if (pendingCharset !== undefined && /^[ \t\r\n]*$/.test(between)) {
      if (charset !== pendingCharset) flush();
    } else {
      flush();
      out += between;
    }
    pendingCharset = charset;
    pending.push(bytes);
    last = m.index + m[0].length;
  }
  flush();
  return out + input.slice(last);
}

/** First header with that name (case-insensitive), decoded; undefined when absent. */
export function headerValue(headers: readonly Header[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  const h = headers.find((x) => x.name.toLowerCase() === wanted);
  return h === undefined ? undefined : decodeWords(h.value);
}

/** Every header with that name (case-insensitive), decoded, in message order. */
export function headerValues(headers: readonly Header[], name: string): string[] {
  const wanted = name.toLowerCase();
  return headers.filter((x) => x.name.toLowerCase() === wanted).map((x) => decodeWords(x.value));
}

// ---------------------------------------------------------------------------------------------
// Addresses (RFC 5322 §3.4)

export interface Address {
  name: string;
  address: string;
}

interface Piece {
  /** As written (quotes kept), for rebuilding an addr-spec with a quoted local part. */
  raw: string;
  /** Quotes and escapes removed, for display names. */
  text: string;
  quoted: boolean;
  /** Whitespace (or a comment, RFC 5322 CFWS) came before it: a word boundary. */
  spaced: boolean;
}

interface Word {
  raw: string;
  text: string;
  /** Some unquoted part holds '@': the word is an addr-spec, not part of a phrase. */
  isAddr: boolean;
}

function readDelimited(s: string, start: number, open: string, close: string): { text: string; end: number } {
  // Quoted strings and comments both use backslash quoting (RFC 5322 §3.2.1); comments nest.
  let depth = 1;
  let text = '';
  let i = start + 1;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '\\' && i + 1 < s.length) {
      text += s[++i];
    } else if (c === close && --depth === 0) {
      return { text, end: i + 1 };
    } else {
      if (open !== close && c === open) depth++;
      text += c;
    }
  }
  return { text, end: i };
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function toWords(pieces: Piece[]): Word[] {
  const words: Word[] = [];
  for (const p of pieces) {
    const prev = words[words.length - 1];
    const addrish = !p.quoted && p.text.includes('@');
    if (prev && !p.spaced) {
      prev.raw += p.raw;
      prev.text += p.text;
      prev.isAddr ||= addrish;
    } else {
      words.push({ raw: p.raw, text: p.text, isAddr: addrish });
    }
  }
  return words;
}

/** Drops an obsolete source route (RFC 5322 §4.4 obs-route: "@a,@b:user@host"). */
function cleanAngle(s: string): string {
  return s.replace(/\s+/g, '').replace(/^(?:@[^:,]*,?)+:/, '');
}

/**
 * Parses an address header (From, To, Cc, Reply-To…) into name/address pairs, in order.
 * Groups are flattened into their members ("undisclosed-recipients:;" yields nothing); a
 * comment stands in for a missing display name; an entry with no addr-spec keeps its text as
 * name with address "". Display names are RFC 2047 decoded after tokenising, so an encoded
 * comma cannot split an entry.
 */
export function parseAddressList(value: string): Address[] {
  const s = repair8bit(value);
  const out: Address[] = [];
  let pieces: Piece[] = [];
  let comments: string[] = [];
  let angle: string | undefined;
  let spaced = false;

  const finish = (): void => {
    const words = toWords(pieces);
    let name = '';
    let address = '';
    if (angle !== undefined) {
      address = cleanAngle(angle);
      name = words.map((w) => w.text).join(' ');
    } else {
      let at = -1;
      for (let i = words.length - 1; i >= 0; i--) {
        if (words[i]?.isAddr) {
          at = i;
          break;
        }
      }
      if (at >= 0) {
        address = (words[at] as Word).raw;
        name = words
          .filter((_, i) => i !== at)
          .map((w) => w.text)
          .join(' ');
      } else {
        name = words.map((w) => w.text).join(' ');
      }
    }
    if (collapse(name) === '' && comments.length > 0) name = comments.join(' ');
    name = collapse(decodeWords(name));
    if (name !== '' || address !== '') out.push({ name, address });
    pieces = [];
    comments = [];
    angle = undefined;
    spaced = false;
  };

  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '"') {
      const r = readDelimited(s, i, '"', '"');
      pieces.push({ raw: s.slice(i, r.end), text: r.text, quoted: true, spaced });
      spaced = false;
      i = r.end;
    } else if (c === '(') {
      const r = readDelimited(s, i, '(', ')');
      const text = collapse(r.text);
      if (text !== '') comments.push(text);
      spaced = true;
      i = r.end;
    } else if (c === '<') {
      const end = s.indexOf('>', i + 1);
      angle = s.slice(i + 1, end < 0 ? s.length : end);
      spaced = true;
      i = end < 0 ? s.length : end + 1;
    } else if (c === ',' || c === ';') {
      finish();
      i++;
    } else if (c === ':' && angle === undefined) {
      // RFC 5322 §3.4 group: "display-name : mailbox-list ;" — the group's own name is not an
      // address; its members follow.
      pieces = [];
      comments = [];
      spaced = false;
      i++;
    } else if (/\s/.test(c)) {
      spaced = true;
      i++;
    } else {
      let j = i;
      while (j < s.length && !/[\s"(<,;:]/.test(s[j] as string)) j++;
      if (j === i) j++; // a stray ':' after an angle-addr, or '>' on its own
      const raw = s.slice(i, j);
      pieces.push({ raw, text: raw, quoted: false, spaced });
      spaced = false;
      i = j;
    }
  }
  finish();
  return out;
}

/**
 * `Name <address>` for display, quoting the name when it holds RFC 5322 specials. Not
 * RFC 2047-encoded: mailwarden shows addresses, it never writes them into outgoing headers.
 */
export function formatAddress(a: { name: string; address: string }): string {
  const name = collapse(a.name);
  const address = a.address.trim();
  if (name === '') return address;
  if (address === '') return name;
  const shown = /[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/(["\\])/g, '\\$1')}"` : name;
  return `${shown} <${address}>`;
}
