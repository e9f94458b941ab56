/**
 * Just enough MIME writing for the demo corpus. Output is a "byte string": one char per byte
 * (latin1), which is how the sandbox and src/mail read a raw source, so 8-bit bodies in any
 * charset survive. Line ends are written as "\n" and turned into CRLF when a message is finished.
 */
import iconv from 'iconv-lite';
import { hash32 } from './rng.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** RFC 5322 §3.3 date-time in the sender's zone, e.g. "Mon, 30 Nov 2026 10:00:00 +0100". */
export function formatDate(ms: number, tzMinutes = 0): string {
  const d = new Date(ms + tzMinutes * 60_000);
  const abs = Math.abs(tzMinutes);
  const zone = `${tzMinutes < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}${pad2(abs % 60)}`;
  const time = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  return `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${time} ${zone}`;
}

/** iCalendar / compact UTC stamp: 20261130T090000Z. */
export function icsDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** UTF-8 text as a byte string (what an 8-bit UTF-8 header or body looks like on the wire). */
export function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * ISO-2022-JP (RFC 1468). iconv-lite has no encoder, so the JIS X 0208 code of each character
 * is taken from its EUC-JP form (EUC-JP is JIS X 0208 with the high bit of both bytes set) and
 * wrapped in ESC $ B … ESC ( B. Half-width katakana and JIS X 0212 are not part of the charset.
 */
export function encodeIso2022Jp(text: string): Buffer {
  const euc = iconv.encode(text, 'euc-jp');
  const out: number[] = [];
  let jis = false;
  for (let i = 0; i < euc.length; i++) {
    const b = euc[i] as number;
    if (b < 0x80) {
      if (jis) out.push(0x1b, 0x28, 0x42);
      jis = false;
      out.push(b);
      continue;
    }
    const b2 = euc[i + 1];
    if (b < 0xa1 || b2 === undefined || b2 < 0xa1) throw new Error(`not in JIS X 0208: ${text}`);
    if (!jis) out.push(0x1b, 0x24, 0x42);
    jis = true;
    out.push(b & 0x7f, b2 & 0x7f);
    i++;
  }
  if (jis) out.push(0x1b, 0x28, 0x42);
  return Buffer.from(out);
}

/** Text → bytes in `charset`; throws when the charset cannot hold the text, so the corpus never lies. */
export function encodeText(text: string, charset: string): Buffer {
  const cs = charset.toLowerCase();
  if (cs === 'utf-8' || cs === 'us-ascii') {
    const bytes = Buffer.from(text, 'utf8');
    if (cs === 'us-ascii' && bytes.some((b) => b > 0x7f)) throw new Error(`not ASCII: ${text}`);
    return bytes;
  }
  if (cs === 'iso-2022-jp') {
    if (iconv.decode(iconv.encode(text, 'euc-jp'), 'euc-jp') !== text) throw new Error(`euc-jp: ${text}`);
    return encodeIso2022Jp(text);
  }
  const bytes = iconv.encode(text, cs);
  if (iconv.decode(bytes, cs) !== text) throw new Error(`${charset} cannot hold: ${text}`);
  return bytes;
}

const isAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s);

function qWord(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x20) out += '_';
    else if (/[A-Za-z0-9!*+\-/]/.test(String.fromCharCode(b))) out += String.fromCharCode(b);
    else out += `=${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * RFC 2047 encoded-words. Text is split by whole characters (§5: an encoded-word must not split
 * a character) and each word kept within 75 chars.
 */
export function encodeWords(text: string, charset = 'UTF-8', mode: 'B' | 'Q' = 'B'): string {
  const word = (chunk: string): string => {
    const bytes = encodeText(chunk, charset);
    const payload = mode === 'B' ? bytes.toString('base64') : qWord(bytes);
    return `=?${charset}?${mode}?${payload}?=`;
  };
  const words: string[] = [];
  let chunk = '';
  for (const ch of text) {
    if (chunk !== '' && word(chunk + ch).length > 75) {
      words.push(word(chunk));
      chunk = ch;
    } else {
      chunk += ch;
    }
  }
  if (chunk !== '') words.push(word(chunk));
  return words.join(' ');
}

/** Unstructured header text: as is when printable ASCII, else UTF-8 encoded-words. */
export function headerText(text: string): string {
  return isAscii(text) ? text : encodeWords(text, 'UTF-8', 'B');
}

export interface Person {
  name: string;
  email: string;
  /** Sender's UTC offset in minutes, for the Date header. */
  tz?: number;
}

/** name-addr (RFC 5322 §3.4): quoted when the phrase holds specials, encoded when not ASCII. */
export function formatMailbox(p: Person): string {
  if (p.name === '') return p.email;
  if (!isAscii(p.name)) return `${encodeWords(p.name, 'UTF-8', 'Q')} <${p.email}>`;
  if (/[()<>[\]:;@\\,."]/.test(p.name)) return `"${p.name.replace(/(["\\])/g, '\\$1')}" <${p.email}>`;
  return `${p.name} <${p.email}>`;
}

export const formatMailboxes = (ps: readonly Person[]): string => ps.map(formatMailbox).join(', ');

/** Quoted-printable (RFC 2045 §6.7) of bytes whose lines are separated by LF. */
export function qpEncode(bytes: Buffer): string {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x0a) continue;
    const line = bytes.subarray(start, i);
    start = i + 1;
    const tokens: string[] = [];
    line.forEach((b, j) => {
      const last = j === line.length - 1;
      const plain = (b >= 0x21 && b <= 0x7e && b !== 0x3d) || ((b === 0x20 || b === 0x09) && !last);
      tokens.push(plain ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`);
    });
    let cur = '';
    for (const t of tokens) {
      if (cur.length + t.length > 75) {
        lines.push(`${cur}=`);
        cur = '';
      }
      cur += t;
    }
    lines.push(cur);
  }
  return lines.join('\n');
}

export function base64Lines(bytes: Buffer | string): string {
  const b64 = (typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes).toString('base64');
  return (b64.match(/.{1,76}/g) ?? []).join('\n');
}

export type Header = [name: string, value: string];

export interface Entity {
  headers: Header[];
  /** Already transfer-encoded, one char per byte. */
  body: string;
}

export type TransferEncoding = '7bit' | '8bit' | 'quoted-printable' | 'base64';

export interface TextOptions {
  charset?: string;
  cte?: TransferEncoding;
  /** Extra Content-Type parameters, e.g. `method=REQUEST`. */
  params?: string;
}

/** A text/* leaf. The default transfer encoding is what a common mailer would pick. */
export function textEntity(subtype: string, text: string, opts: TextOptions = {}): Entity {
  const charset = opts.charset ?? 'UTF-8';
  const normalised = text.replace(/\r\n?/g, '\n').replace(/\n?$/, '\n');
  const bytes = encodeText(normalised, charset);
  const sevenBit = bytes.every((b) => b < 0x80) && normalised.split('\n').every((l) => l.length <= 900);
  const cte = opts.cte ?? (sevenBit ? '7bit' : 'quoted-printable');
  if (cte === '7bit' && !sevenBit) throw new Error('7bit body with 8-bit bytes or long lines');
  const body =
    cte === 'base64'
      ? base64Lines(bytes)
      : cte === 'quoted-printable'
        ? qpEncode(bytes)
        : bytes.toString('latin1');
  const params = opts.params ? `; ${opts.params}` : '';
  return {
    headers: [
      ['Content-Type', `text/${subtype}; charset="${charset}"${params}`],
      ['Content-Transfer-Encoding', cte],
    ],
    body,
  };
}

export const plain = (text: string, opts?: TextOptions): Entity => textEntity('plain', text, opts);
export const html = (markup: string, opts?: TextOptions): Entity => textEntity('html', markup, opts);

export interface AttachmentOptions {
  inline?: boolean;
  contentId?: string;
}

export function attachment(
  filename: string,
  type: string,
  bytes: Buffer,
  opts: AttachmentOptions = {},
): Entity {
  const ascii = isAscii(filename);
  // RFC 2231 for a non-ASCII name in the disposition, RFC 2047 in `name` as most mailers still do.
  const dispName = ascii
    ? `filename="${filename}"`
    : `filename*=UTF-8''${encodeURIComponent(filename).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
  const name = ascii ? `"${filename}"` : `"${encodeWords(filename)}"`;
  const headers: Header[] = [
    ['Content-Type', `${type}; name=${name}`],
    ['Content-Disposition', `${opts.inline ? 'inline' : 'attachment'}; ${dispName}`],
    ['Content-Transfer-Encoding', 'base64'],
  ];
  if (opts.contentId) headers.push(['Content-ID', `<${opts.contentId}>`]);
  headers.push(['X-Attachment-Id', `f_${hash32(filename + bytes.length).toString(36)}`]);
  return { headers, body: base64Lines(bytes) };
}

export function serializeEntity(e: Entity): string {
  return `${e.headers.map(([n, v]) => foldHeader(n, v)).join('\n')}\n\n${e.body}`;
}

/**
 * multipart/* with a boundary derived from the parts' headers without their digits, so it is as
 * deterministic as the parts and does not move when the dates in them do.
 */
export function multipart(subtype: string, parts: readonly Entity[], extraParams = ''): Entity {
  const inner = parts.map(serializeEntity);
  const shape = parts
    .map((p) =>
      p.headers
        .filter(([n]) => n !== 'X-Attachment-Id')
        .map(([n, v]) => `${n}:${v}`)
        .join('\n'),
    )
    .join('|')
    .replace(/[0-9]/g, '');
  const boundary = `000000000000${hash32(`${subtype}|${shape}`).toString(16).padStart(8, '0')}${hash32(shape).toString(16).slice(0, 4)}`;
  if (inner.some((p) => p.includes(`--${boundary}`))) throw new Error('boundary occurs in a part');
  const body = `${inner.map((p) => `--${boundary}\n${p.replace(/\n?$/, '\n')}`).join('')}--${boundary}--\n`;
  return { headers: [['Content-Type', `multipart/${subtype}; boundary="${boundary}"${extraParams}`]], body };
}

export const alternative = (...parts: Entity[]): Entity => multipart('alternative', parts);
export const mixed = (...parts: Entity[]): Entity => multipart('mixed', parts);

/**
 * Folds at spaces to keep lines near 78 chars (RFC 5322 §2.2.3). Values that already contain a
 * line break were folded by hand and are left alone.
 */
export function foldHeader(name: string, value: string): string {
  const line = `${name}: ${value}`;
  if (value.includes('\n') || line.length <= 78) return line;
  const out: string[] = [];
  const words = line.split(' ');
  // Never fold between the field name and the first word of its value.
  let cur = `${words.shift() ?? ''} ${words.shift() ?? ''}`;
  for (const word of words) {
    if (cur.length + 1 + word.length > 78) {
      out.push(cur);
      cur = ` ${word}`;
    } else {
      cur = `${cur} ${word}`;
    }
  }
  out.push(cur);
  return out.join('\n');
}
