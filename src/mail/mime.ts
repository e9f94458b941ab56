/**
 * RFC 822 source → MIME tree (RFC 2045/2046). Pure: bytes in, `MimeNode`s out. Transfer
 * encodings are removed here; charsets are decoded later (body.ts), so both providers share
 * one charset path.
 */
import { decodeCharset, decodeWords, headerTextFromBytes } from './headers.js';
import type { Header, MimeNode } from './types.js';

const CR = 0x0d;
const LF = 0x0a;

function toBuffer(raw: string | Uint8Array): Buffer {
  // One char = one byte, so a source read as latin1 (or binary) keeps its 8-bit bytes intact.
  if (typeof raw === 'string') return Buffer.from(raw, 'latin1');
  return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

/** Index just past the end of the line starting at `start` (past its LF), and the content end. */
function lineAt(buf: Buffer, start: number): { contentEnd: number; next: number } {
  const lf = buf.indexOf(LF, start);
  if (lf < 0) return { contentEnd: buf.length, next: buf.length };
  return { contentEnd: lf > start && buf[lf - 1] === CR ? lf - 1 : lf, next: lf + 1 };
}

/**
 * Header bytes → text, by headerTextFromBytes (headers.ts): RFC 6532 raw UTF-8 and legacy 8-bit
 * bytes read by the same decoder bodies use, 8-bit bytes inside encoded words kept for their own
 * charset. Values stay RFC 2047-encoded: `Header.value` is the value as it stands in the message.
 */
function headerText(bytes: Buffer): string {
  return headerTextFromBytes(bytes);
}

/** Splits a header block from its body at the first empty line (RFC 5322 §2.1). */
function splitEntity(buf: Buffer): { headers: Header[]; body: Buffer } {
  const headers: Header[] = [];
  let pos = 0;
  let current: Buffer[] | undefined;
  const flush = (): void => {
    if (current === undefined) return;
    // RFC 5322 §2.2.3: unfolding removes the CRLF before folding whitespace, nothing else.
    const line = Buffer.concat(current);
    current = undefined;
    const colon = line.indexOf(0x3a);
    if (colon <= 0) return;
    const name = line.subarray(0, colon).toString('latin1').trim();
    if (name === '' || /\s/.test(name)) return;
    headers.push({ name, value: headerText(line.subarray(colon + 1)).trim() });
  };
  while (pos < buf.length) {
    const { contentEnd, next } = lineAt(buf, pos);
    const line = buf.subarray(pos, contentEnd);
    if (line.length === 0) {
      flush();
      return { headers, body: buf.subarray(next) };
    }
    const first = line[0];
    if ((first === 0x20 || first === 0x09) && current !== undefined) {
      current.push(line);
    } else {
      // A new field. Lines without a "name:" (an mbox "From " separator) are dropped by flush.
      flush();
      current = [line];
    }
    pos = next;
  }
  flush();
  return { headers, body: buf.subarray(buf.length) };
}

// ---------------------------------------------------------------------------------------------
// Structured header values: Content-Type / Content-Disposition (RFC 2045 §5.1, RFC 2183, RFC 2231)

export interface ParsedStructuredHeader {
  /** Lower-case value before the first ';' ("text/html", "attachment"), "" when empty. */
  value: string;
  /** Parameters with lower-case names; RFC 2231 continuations and charsets already decoded. */
  params: Map<string, string>;
}

/** RFC 5322 §3.2.2 comments out (nested, escaped); each leaves a space so no tokens fuse. */
export function stripComments(s: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '\\' && i + 1 < s.length) {
      if (depth === 0) out += c + s[i + 1];
      i++;
    } else if (quoted) {
      out += c;
      if (c === '"') quoted = false;
    } else if (c === '(') {
      depth++;
    } else if (c === ')' && depth > 0) {
      if (--depth === 0) out += ' ';
    } else if (depth === 0) {
      if (c === '"') quoted = true;
      out += c;
    }
  }
  return out;
}

/** Splits on ';' outside quoted strings. */
function splitParams(s: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (quoted && c === '\\' && i + 1 < s.length) {
      cur += c + s[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return t.slice(1, -1).replace(/\\(.)/g, '$1');
  // An unterminated quote: keep what follows it rather than lose the value.
  if (t.startsWith('"')) return t.slice(1).replace(/\\(.)/g, '$1');
  return t;
}

function percentDecode(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '%' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of Buffer.from(c, 'utf8')) out.push(b);
    }
  }
  return Uint8Array.from(out);
}

interface Segment {
  index: number;
  encoded: boolean;
  value: string;
}

/**
 * Parses `value; a=b; c*=utf-8''x%20y; d*0="p"; d*1*=%41`. RFC 2231 §3 continuations are put
 * back in order; §4 extended values are percent-decoded in the charset named by the first
 * segment (later segments carry no charset of their own). A plain parameter and its
 * extended form may both appear (a fallback for old readers): the extended one wins.
 */
export function parseStructuredHeader(raw: string | undefined): ParsedStructuredHeader {
  const params = new Map<string, string>();
  if (raw === undefined) return { value: '', params };
  const [head = '', ...rest] = splitParams(stripComments(raw));
  const plain = new Map<string, string>();
  const extended = new Map<string, Segment[]>();
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1);
    const m = /^([^*]+)\*(?:(\d+)(\*)?)?$/.exec(key);
    if (m === null) {
      if (key !== '' && !plain.has(key)) plain.set(key, unquote(value));
      continue;
    }
    const name = m[1] as string;
    const segs = extended.get(name) ?? [];
    // "name*" alone is one encoded segment; "name*N" is plain, "name*N*" encoded.
    const encoded = m[2] === undefined || m[3] === '*';
    segs.push({ index: m[2] === undefined ? 0 : Number(m[2]), encoded, value: unquote(value) });
    extended.set(name, segs);
  }
  for (const [name, v] of plain) params.set(name, v);
  for (const [name, segs] of extended) {
    segs.sort((a, b) => a.index - b.index);
    let charset: string | undefined;
    const bytes: Uint8Array[] = [];
    segs.forEach((seg, i) => {
      let v = seg.value;
      if (seg.encoded && i === 0) {
        // charset'language'value — the charset and language may each be empty.
        const m = /^([^']*)'[^']*'(.*)$/s.exec(v);
        if (m !== null) {
          charset = m[1] || undefined;
          v = m[2] as string;
        }
      }
      bytes.push(seg.encoded ? percentDecode(v) : Buffer.from(v, 'utf8'));
    });
    params.set(name, decodeCharset(Buffer.concat(bytes), charset ?? 'utf-8'));
  }
  return { value: head.trim().toLowerCase(), params };
}

function firstHeader(headers: readonly Header[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  return headers.find((h) => h.name.toLowerCase() === wanted)?.value;
}

/** The parsed Content-Type of a node's headers (value "" when absent). */
export function contentTypeOf(headers: readonly Header[]): ParsedStructuredHeader {
  return parseStructuredHeader(firstHeader(headers, 'content-type'));
}

/** The parsed Content-Disposition of a node's headers (value "" when absent). */
export function contentDispositionOf(headers: readonly Header[]): ParsedStructuredHeader {
  return parseStructuredHeader(firstHeader(headers, 'content-disposition'));
}

// ---------------------------------------------------------------------------------------------
// Transfer encodings (RFC 2045 §6)

function decodeBase64(body: Buffer): Buffer {
  // §6.8: characters outside the alphabet are ignored; Node also tolerates missing padding.
  // A pad ends the data (§6.8: "=" only at the end): what follows a pad in the middle of the
  // stream is not decoded, as Python's email and most readers do, instead of Node's reading
  // on past it into garbage. A "=" where a quantum starts pads nothing and is skipped.
  const chars = body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, '');
  let n = 0;
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] !== '=') {
      n++;
      continue;
    }
    if (n % 4 >= 2) return Buffer.from(chars.slice(0, i).replaceAll('=', ''), 'base64');
  }
  return Buffer.from(chars.replaceAll('=', ''), 'base64');
}

function hexVal(b: number | undefined): number {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57; // lower case is not canonical but is seen
  return -1;
}

function decodeQuotedPrintable(body: Buffer): Buffer {
  const out = Buffer.alloc(body.length);
  let o = 0;
  let pos = 0;
  while (pos < body.length) {
    const { contentEnd, next } = lineAt(body, pos);
    let end = contentEnd;
    // §6.7 rule 3: trailing whitespace was added in transport and is deleted.
    while (end > pos && (body[end - 1] === 0x20 || body[end - 1] === 0x09)) end--;
    let soft = false;
    for (let i = pos; i < end; i++) {
      const b = body[i] as number;
      if (b !== 0x3d) {
        out[o++] = b;
        continue;
      }
      if (i === end - 1) {
        // §6.7 rule 5: "=" at the end of a line is a soft line break.
        soft = true;
        break;
      }
      const hi = hexVal(body[i + 1]);
      const lo = hexVal(body[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out[o++] = hi * 16 + lo;
        i += 2;
      } else {
        out[o++] = b; // a malformed "=" is kept as text (§6.7 note on robust decoding)
      }
    }
    if (!soft) {
      // A hard line break stays as written (CRLF or bare LF; nothing on the last line).
      for (let i = contentEnd; i < next; i++) out[o++] = body[i] as number;
    }
    pos = next;
  }
  return out.subarray(0, o);
}

function decodeTransfer(body: Buffer, cte: string): Buffer {
  switch (cte) {
    case 'base64':
      return decodeBase64(body);
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    default:
      // 7bit / 8bit / binary are identities; an unknown encoding cannot be undone, so the bytes
      // are passed through as they stand (RFC 2045 §6.4 treats such parts as opaque data).
      return body;
  }
}

// ---------------------------------------------------------------------------------------------
// Multipart (RFC 2046 §5.1)

function isTransportPadding(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== 0x20 && buf[i] !== 0x09) return false;
  return true;
}

/**
 * Body parts between delimiter lines. The line break before a delimiter belongs to the
 * delimiter (§5.1.1), so it is not part of the preceding body. Preamble and epilogue are
 * dropped. A missing close-delimiter ends the last part at the end of the data; a delimiter
 * line must be "--boundary" plus only whitespace (or "--"), so a longer nested boundary that
 * starts with this one is not mistaken for it.
 */
function splitMultipart(body: Buffer, boundary: string): Buffer[] {
  const delim = Buffer.from(`--${boundary}`, 'latin1');
  const parts: Buffer[] = [];
  let partStart = -1;
  let search = 0;
  while (search <= body.length) {
    const at = body.indexOf(delim, search);
    if (at < 0) break;
    const atLineStart = at === 0 || body[at - 1] === LF;
    const { contentEnd, next } = lineAt(body, at);
    const after = at + delim.length;
    const close =
      body[after] === 0x2d && body[after + 1] === 0x2d && isTransportPadding(body, after + 2, contentEnd);
    if (!atLineStart || (!close && !isTransportPadding(body, after, contentEnd))) {
      search = at + 1;
      continue;
    }
    if (partStart >= 0) {
      let end = at;
      if (end > partStart && body[end - 1] === LF) end--;
      if (end > partStart && body[end - 1] === CR) end--;
      parts.push(body.subarray(partStart, Math.max(end, partStart)));
    }
    if (close) return parts;
    partStart = next;
    search = next;
  }
  if (partStart >= 0) parts.push(body.subarray(partStart));
  return parts;
}

/**
 * Nesting deeper than any real mailer produces is a crafted message; past this depth the
 * multiparts are not nested further but flattened, without recursion, into one
 * multipart/mixed of their leaves in document order (deepLeaves), so text at any depth is
 * still read and listed, and the stack cannot run out.
 */
const MAX_DEPTH = 40;

/** Every leaf under a multipart, in document order, walked with an explicit stack. */
function deepLeaves(body: Buffer, boundary: string, partId: string): MimeNode[] {
  const out: MimeNode[] = [];
  const stack: Buffer[][] = [splitMultipart(body, boundary).reverse()];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Buffer[];
    const part = top.pop();
    if (part === undefined) {
      stack.pop();
      continue;
    }
    const e = splitEntity(part);
    const ct = contentTypeOf(e.headers);
    const inner = ct.params.get('boundary');
    if (ct.value.startsWith('multipart/') && inner !== undefined && inner !== '') {
      stack.push(splitMultipart(e.body, inner).reverse());
      continue;
    }
    const id = partId === '' ? String(out.length) : `${partId}.${out.length}`;
    out.push(buildNode(part, id, 'text/plain', MAX_DEPTH, e.headers, e.body));
  }
  return out;
}

function buildNode(
  buf: Buffer,
  partId: string,
  defaultType: string,
  depth: number,
  headers?: Header[],
  body?: Buffer,
): MimeNode {
  let hs = headers;
  let rest = body;
  if (hs === undefined || rest === undefined) {
    const e = splitEntity(buf);
    hs = e.headers;
    rest = e.body;
  }
  const ct = contentTypeOf(hs);
  // RFC 2045 §5.2: a missing or syntactically invalid Content-Type means text/plain (us-ascii);
  // RFC 2046 §5.1.5 makes message/rfc822 the default inside multipart/digest.
  let mimeType = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(ct.value)
    ? ct.value
    : defaultType;
  const boundary = ct.params.get('boundary');
  if (mimeType.startsWith('multipart/') && (boundary === undefined || boundary === '')) {
    // A multipart without a boundary cannot be split: it is invalid, hence text/plain (§5.2).
    mimeType = 'text/plain';
  }
  const disposition = contentDispositionOf(hs);
  const rawName = disposition.params.get('filename') ?? ct.params.get('name') ?? '';
  // Non-standard but common: RFC 2047 encoded-words inside a quoted filename parameter.
  const filename = decodeWords(rawName).trim();

  if (mimeType.startsWith('multipart/') && boundary !== undefined && depth >= MAX_DEPTH) {
    const children = deepLeaves(rest, boundary, partId);
    return { partId, mimeType: 'multipart/mixed', headers: hs, filename, size: 0, children };
  }
  if (mimeType.startsWith('multipart/') && boundary !== undefined) {
    const childDefault = mimeType === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
    const children = splitMultipart(rest, boundary).map((p, i) =>
      buildNode(p, partId === '' ? String(i) : `${partId}.${i}`, childDefault, depth + 1),
    );
    return { partId, mimeType, headers: hs, filename, size: 0, children };
  }
  const cte = (firstHeader(hs, 'content-transfer-encoding') ?? '').trim().toLowerCase();
  // message/rfc822 stays a leaf holding the embedded message's bytes: listed as an attachment
  // and parsed again on demand, never mistaken for the outer message's body.
  // Copied: a view would pin the whole source (or Node's shared pool) and alias the caller's bytes.
  const bytes = new Uint8Array(decodeTransfer(rest, cte));
  return { partId, mimeType, headers: hs, filename, size: bytes.byteLength, body: bytes, children: [] };
}

/**
 * Parses an RFC 822 message into its top-level headers and MIME tree. `raw` as a string is
 * read one char = one byte (latin1) so 8-bit sources survive. Part ids follow Gmail: "" for
 * the root, "0", "1" for its children, "0.1" for grandchildren.
 */
export function parseRawMessage(raw: string | Uint8Array): { headers: Header[]; root: MimeNode } {
  const buf = toBuffer(raw);
  const { headers, body } = splitEntity(buf);
  const root = buildNode(buf, '', 'text/plain', 0, headers, body);
  return { headers, root };
}
