/**
 * Header reading: charset decoding shared by the MIME layer, RFC 2047 encoded-words, and
 * RFC 5322 address lists. Header values are stored as they stand in the message (see
 * `Header.value` in types.ts); everything here decodes on read, so every provider's headers go
 * through the same code.
 */
import iconv from 'iconv-lite';
import { decode as libmimeDecode } from 'libmime/lib/charset.js';

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

/**
 * Bytes with no usable charset label: UTF-8 when they are well-formed UTF-8 (RFC 6532 made raw
 * UTF-8 legal in headers, and it is what unlabelled modern mail is), otherwise windows-1252,
 * which is what unlabelled 8-bit Western mail nearly always is and which, unlike ISO-8859-1,
 * gives the 0x80–0x9F bytes their printable meaning (€, curly quotes, dashes).
 */
function decodeUnlabelled(bytes: Uint8Array): string {
  if (isValidUtf8(bytes)) return utf8Lenient.decode(bytes);
  return iconv.decode(asBuffer(bytes), 'windows-1252');
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
 * UTF-7 is refused: it lets a sender smuggle text past anything that inspects the raw bytes
 * (libmime refuses it for the same reason); Gmail does not render it either.
 */
const REFUSED = /^(?:x-)?(?:unicode-1-1-)?utf-?7(?:-imap)?$/;

/** ISO-2022-JP family: iconv-lite has no codec for it; libmime decodes it (encoding-japanese). */
const ISO_2022_JP = /^(?:iso-?2022-?jp(?:-[0-9a-z]+)?|csiso2022jp|jis)$/;

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
 * "decode" algorithm) and is stripped. Unknown, missing, ASCII or refused labels fall back to
 * UTF-8-if-valid-else-windows-1252. A declared UTF-8 that is not well-formed keeps its label
 * and gets U+FFFD for the broken bytes: guessing another charset for the whole part would
 * garble the well-formed rest.
 */
export function decodeCharset(bytes: Uint8Array, charset?: string): string {
  const bom = sniffBom(bytes);
  if (bom) return iconv.decode(asBuffer(bytes.subarray(bom.skip)), bom.encoding, { stripBOM: true });
  const label = normalizeCharsetLabel(charset);
  if (UNLABELLED.has(label) || REFUSED.test(label)) return decodeUnlabelled(bytes);
  if (label === 'utf-8' || label === 'utf8') return utf8Lenient.decode(bytes);
  if (ISO_2022_JP.test(label)) return libmimeDecode(asBuffer(bytes), 'ISO-2022-JP');
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
  return decodeUnlabelled(Buffer.from(s, 'latin1'));
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=/g;

function decodeQ(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '_') {
      // RFC 2047 §4.2 (2): underscore stands for SPACE in the Q encoding.
      out.push(0x20);
    } else if (c === '=' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      out.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of Buffer.from(c, 'utf8')) out.push(b);
    }
  }
  return Uint8Array.from(out);
}

function decodeB(text: string): Uint8Array {
  return Buffer.from(text.replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
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
    const bytes = (m[2] ?? '').toUpperCase() === 'B' ? decodeB(m[3] ?? '') : decodeQ(m[3] ?? '');
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
