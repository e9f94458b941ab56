/**
 * SEARCH text and header keys as gluon evaluates them (internal/state/mailbox_search.go,
 * buildSearchOpText/Body/Subject/From/To/Cc/Bcc/Header): a case-insensitive substring test on the
 * stored literal's raw bytes — TEXT on the whole literal (the added X-Pm-Gluon-Id header
 * included), BODY on what follows the header, a header key on the first field of that name,
 * unfolded but never decoded (rfc822.Header.Get). An encoded-word subject or a base64 body never
 * matches a non-ASCII term; 8-bit UTF-8 written raw does. Dovecot decodes both, so the bridge
 * front end evaluates these keys itself and hands Dovecot a UID set in their place.
 *
 * One deviation: case folding here is ASCII only, where Go's bytes.ToLower also folds non-ASCII
 * UTF-8 letters.
 */
import type { Token } from './wire.js';

/** Keys that take one argument, or two (HEADER); NOT and OR take keys, not arguments. */
const ARGS: Record<string, number> = {
  BCC: 1,
  BEFORE: 1,
  BODY: 1,
  CC: 1,
  FROM: 1,
  KEYWORD: 1,
  LARGER: 1,
  ON: 1,
  SENTBEFORE: 1,
  SENTON: 1,
  SENTSINCE: 1,
  SINCE: 1,
  SMALLER: 1,
  SUBJECT: 1,
  TEXT: 1,
  TO: 1,
  UID: 1,
  UNKEYWORD: 1,
  HEADER: 2,
};

const HEADER_KEYS = new Set(['BCC', 'CC', 'FROM', 'SUBJECT', 'TO']);

export interface TextKey {
  /** Index of the key's token in the list. */
  at: number;
  /** Tokens it spans (key and arguments). */
  span: number;
  key: 'TEXT' | 'BODY' | 'HEADER';
  /** Header field name (HEADER and the header shorthands). */
  field?: string;
  term: Buffer;
}

/** The text and header keys of a SEARCH whose criteria start at `from` (after CHARSET x). */
export function findTextKeys(tokens: Token[], from: number): TextKey[] {
  const out: TextKey[] = [];
  let i = from;
  const first = tokens[i];
  if (first?.t === 'atom' && first.v.toUpperCase() === 'CHARSET') i += 2;
  while (i < tokens.length) {
    const tok = tokens[i];
    if (tok?.t !== 'atom') {
      i++;
      continue;
    }
    const name = tok.v.toUpperCase();
    const args = ARGS[name] ?? 0;
    const arg = (k: number): Buffer => {
      const a = tokens[i + k];
      if (a?.t === 'str') return a.v;
      if (a?.t === 'atom') return Buffer.from(a.v, 'latin1');
      return Buffer.alloc(0);
    };
    if (name === 'TEXT' || name === 'BODY') out.push({ at: i, span: 2, key: name, term: arg(1) });
    else if (HEADER_KEYS.has(name)) out.push({ at: i, span: 2, key: 'HEADER', field: name, term: arg(1) });
    else if (name === 'HEADER') {
      out.push({ at: i, span: 3, key: 'HEADER', field: arg(1).toString('latin1'), term: arg(2) });
    }
    i += 1 + args;
  }
  return out;
}

function asciiLower(b: Buffer): string {
  return b.toString('latin1').replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function splitHeader(raw: Buffer): { header: Buffer; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { header: raw, body: Buffer.alloc(0) };
  return { header: raw.subarray(0, end + 2), body: raw.subarray(end + 4) };
}

/** The first field of that name, continuation lines joined, not decoded; '' when absent. */
function firstField(header: Buffer, field: string): string {
  const want = field.toLowerCase();
  const lines = header.toString('latin1').split('\r\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const colon = line.indexOf(':');
    if (colon <= 0 || /^[ \t]/.test(line) || line.slice(0, colon).trim().toLowerCase() !== want) continue;
    let value = line.slice(colon + 1);
    while (/^[ \t]/.test(lines[i + 1] ?? '')) value += lines[++i] ?? '';
    return value.trim();
  }
  return '';
}

export function matchesRaw(raw: Buffer, key: TextKey): boolean {
  const term = asciiLower(key.term);
  if (key.key === 'TEXT') return asciiLower(raw).includes(term);
  const { header, body } = splitHeader(raw);
  if (key.key === 'BODY') return asciiLower(body).includes(term);
  return asciiLower(Buffer.from(firstField(header, key.field ?? ''), 'latin1')).includes(term);
}

/** A UID set in IMAP syntax (runs as a:b). */
export function uidSet(uids: number[]): string {
  const sorted = [...new Set(uids)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    runs.push(i === j ? String(sorted[i]) : `${sorted[i]}:${sorted[j]}`);
    i = j + 1;
  }
  return runs.join(',');
}
