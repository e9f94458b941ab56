import { invalidInput } from './errors.js';
import { parseAddressList } from './headers.js';
import type { Address } from './headers.js';

/**
 * RFC 822 sources for drafts (the opt-in drafts tier): new messages and replies, plain text,
 * UTF-8. Pure; the caller supplies the date and the Message-ID. Every header value is checked
 * for line breaks before anything is built, so no input can add a header (Bcc:, a second To:)
 * or end the header block early.
 */

export interface DraftSpec {
  from: Address;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  subject: string;
  body: string;
  /** Milliseconds since the epoch. */
  date: number;
  /** With angle brackets. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
}

/**
 * CR, LF and the other controls end or corrupt a header line; bidi overrides/isolates and
 * Unicode tags hide or reorder text, so the human who reviews the draft would not see what it
 * says (the same characters mailwarden strips from results).
 */
// eslint-disable-next-line no-control-regex
const HEADER_FORBIDDEN = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]/;
// eslint-disable-next-line no-control-regex
const BODY_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const HIDING = /[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/;

/**
 * The value a caller gave, quoted for an error message so they can see what was refused: the
 * characters that were the problem are spelled out (\u{202e}), long values are cut.
 */
export function quoted(value: string): string {
  const all = (re: RegExp) => new RegExp(re.source, 'g');
  const cut = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  const spell = (c: string): string => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`;
  return `"${cut.replace(all(HEADER_FORBIDDEN), spell).replace(all(HIDING), spell)}"`;
}

export function checkHeaderText(field: string, value: string): void {
  if (HEADER_FORBIDDEN.test(value)) {
    throw invalidInput(
      field,
      `${quoted(value)} must be one line: line breaks and control characters are not allowed`,
    );
  }
  if (HIDING.test(value)) {
    throw invalidInput(
      field,
      `${quoted(value)} contains bidi-override or Unicode tag characters that hide text from the reviewer`,
    );
  }
}

/** Text from a message (a parent's subject) made safe to write: the same characters removed, not refused. */
export function cleanHeaderText(value: string): string {
  const all = (re: RegExp) => new RegExp(re.source, 'g');
  return value.replace(all(HEADER_FORBIDDEN), ' ').replace(all(HIDING), '').replace(/\s+/g, ' ').trim();
}

export function checkBodyText(field: string, value: string): void {
  if (BODY_FORBIDDEN.test(value)) {
    const at = value.search(BODY_FORBIDDEN);
    throw invalidInput(
      field,
      `contains control characters (first near ${quoted(value.slice(Math.max(0, at - 20), at + 20))})`,
    );
  }
  if (HIDING.test(value)) {
    const at = value.search(HIDING);
    throw invalidInput(
      field,
      `contains bidi-override or Unicode tag characters that hide text from the reviewer (first near ${quoted(value.slice(Math.max(0, at - 20), at + 20))})`,
    );
  }
}

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LOCAL = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const DOMAIN = new RegExp(`^(?:${LABEL}\\.)+${LABEL}$`);

/**
 * An addr-spec mailwarden will write: dot-atom local part (RFC 5322 §3.4.1) and a DNS domain
 * of at least two labels. Quoted local parts, IP literals and raw non-ASCII (SMTPUTF8) are
 * refused rather than half-supported; an IDN domain is written in its xn-- form.
 */
export function isWritableAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at <= 0) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  return local.length <= 64 && domain.length <= 253 && LOCAL.test(local) && DOMAIN.test(domain);
}

/** One recipient as a caller writes it: `a@b.example` or `Name <a@b.example>`. */
export function parseRecipient(field: string, value: string): Address {
  checkHeaderText(field, value);
  const list = parseAddressList(value);
  if (list.length !== 1 || list[0] === undefined) {
    throw invalidInput(field, `${quoted(value)} must hold exactly one address (one list item per recipient)`);
  }
  const { name, address } = list[0];
  if (!isWritableAddress(address)) {
    throw invalidInput(
      field,
      `${quoted(value)} is not an address mailwarden can write (name@domain.example; IDN domains in xn-- form)`,
    );
  }
  return { name, address };
}

export function parseRecipients(field: string, values: readonly string[]): Address[] {
  return values.map((v, i) => parseRecipient(`${field}.${i}`, v));
}

// ---- header encoding (RFC 5322 §2.2.3 folding, RFC 2047 encoded-words) -------------------------

const PRINTABLE = /^[\x20-\x7e]*$/;
/**
 * 39 UTF-8 bytes → 52 base64 characters → a 64-character encoded-word, which leaves a line of
 * "Subject: " + word under RFC 2047's 76. Words always end on a character boundary (§5).
 */
const WORD_BYTES = 39;

function encodedWords(text: string): string[] {
  const words: string[] = [];
  let chunk = '';
  for (const ch of text) {
    if (Buffer.byteLength(chunk + ch, 'utf8') > WORD_BYTES) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk !== '') words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`);
}

/** Tokens of an unstructured value; ASCII text that could be read as an encoded-word is encoded too. */
function unstructuredTokens(value: string): string[] {
  if (PRINTABLE.test(value) && !value.includes('=?')) return value.split(' ');
  return encodedWords(value);
}

/** A display name as a phrase: atoms as is, specials quoted, anything else encoded. */
function phraseTokens(name: string): string[] {
  if (!PRINTABLE.test(name) || name.includes('=?')) return encodedWords(name);
  if (/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]*$/.test(name)) return name.split(' ').filter((t) => t !== '');
  return [`"${name.replace(/(["\\])/g, '\\$1')}"`];
}

/** Joins tokens with spaces, folding before a token that would take the line past 76 columns. */
function fold(name: string, tokens: readonly string[]): string {
  let out = `${name}:`;
  let lineLength = out.length;
  for (const t of tokens) {
    // Never fold before an empty token: a folded line of only whitespace is obsolete syntax.
    if (lineLength + 1 + t.length > 76 && lineLength > name.length + 1 && t !== '') {
      out += `\r\n ${t}`;
      lineLength = 1 + t.length;
    } else {
      out += ` ${t}`;
      lineLength += 1 + t.length;
    }
  }
  return out;
}

function addressTokens(list: readonly Address[]): string[] {
  const tokens: string[] = [];
  list.forEach((a, i) => {
    const last = i === list.length - 1;
    const name = a.name.replace(/\s+/g, ' ').trim();
    const addr = `${name === '' ? '' : '<'}${a.address}${name === '' ? '' : '>'}${last ? '' : ','}`;
    tokens.push(...(name === '' ? [] : phraseTokens(name)), addr);
  });
  return tokens;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 5322 §3.3 date-time in UTC. */
export function rfc5322Date(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** A msg-id (RFC 5322 §3.6.4) for a new draft; `unique` must already be unique (a UUID). */
export function newMessageId(unique: string, from: Address): string {
  const domain = from.address.slice(from.address.lastIndexOf('@') + 1) || 'mailwarden.invalid';
  return `<${unique.replace(/[^A-Za-z0-9.-]/g, '')}@${domain}>`;
}

const MSG_ID = /^<[^<>\s@]+@[^<>\s@]+>$/;

/** msg-ids in a References / In-Reply-To value, in order, as written. */
export function messageIds(value: string | undefined): string[] {
  return (value?.match(/<[^<>\s]+>/g) ?? []).filter((id) => MSG_ID.test(id));
}

function bodyPart(body: string): { encoding: string; text: string } {
  const crlf = body.replace(/\r\n|\r|\n/g, '\r\n');
  const lines = crlf.split('\r\n');
  if (PRINTABLE.test(lines.join('')) && lines.every((l) => l.length <= 998)) {
    return { encoding: '7bit', text: crlf.endsWith('\r\n') ? crlf : `${crlf}\r\n` };
  }
  const b64 = Buffer.from(crlf, 'utf8').toString('base64');
  return { encoding: 'base64', text: `${(b64.match(/.{1,76}/g) ?? []).join('\r\n')}\r\n` };
}

/** The RFC 822 source of a draft, CRLF line ends, one text/plain UTF-8 part. */
export function buildDraft(spec: DraftSpec): string {
  checkHeaderText('subject', spec.subject);
  checkBodyText('body', spec.body);
  for (const [field, list] of [
    ['to', spec.to],
    ['cc', spec.cc],
    ['bcc', spec.bcc],
    ['from', [spec.from]],
  ] as const) {
    list.forEach((a, i) => {
      checkHeaderText(`${field}.${i}`, a.name);
      if (!isWritableAddress(a.address))
        throw invalidInput(`${field}.${i}`, `"${a.address}" is not a writable address`);
    });
  }
  for (const id of [spec.messageId, spec.inReplyTo, ...(spec.references ?? [])]) {
    if (id !== undefined && !MSG_ID.test(id)) throw invalidInput('messageId', `"${id}" is not a msg-id`);
  }
  const lines = [fold('From', addressTokens([spec.from]))];
  if (spec.to.length > 0) lines.push(fold('To', addressTokens(spec.to)));
  if (spec.cc.length > 0) lines.push(fold('Cc', addressTokens(spec.cc)));
  // Gmail keeps Bcc in a draft and removes it when the human sends.
  if (spec.bcc.length > 0) lines.push(fold('Bcc', addressTokens(spec.bcc)));
  lines.push(fold('Subject', unstructuredTokens(spec.subject)));
  lines.push(`Date: ${rfc5322Date(spec.date)}`);
  lines.push(`Message-ID: ${spec.messageId}`);
  if (spec.inReplyTo !== undefined) lines.push(`In-Reply-To: ${spec.inReplyTo}`);
  if (spec.references !== undefined && spec.references.length > 0)
    lines.push(fold('References', spec.references));
  const { encoding, text } = bodyPart(spec.body);
  lines.push(
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    `Content-Transfer-Encoding: ${encoding}`,
  );
  return `${lines.join('\r\n')}\r\n\r\n${text}`;
}

// ---- replies ---------------------------------------------------------------------------------

/** "Re: " once: a subject that already starts with Re: (or Re[2]:) keeps it as it is. */
export function replySubject(subject: string): string {
  const s = subject.replace(/\s+/g, ' ').trim();
  return /^re(?:\[\d+\])?\s*:/i.test(s) ? s : `Re: ${s}`;
}

/** At most this many ids in References: the first (thread root) and the newest ones. */
const MAX_REFERENCES = 20;

/**
 * RFC 5322 §3.6.4: In-Reply-To is the parent's Message-ID; References is the parent's
 * References (or, lacking them, its single In-Reply-To) followed by the parent's Message-ID.
 * Undefined when the parent has no usable Message-ID: then nothing can thread the reply.
 */
export function replyThreading(parent: {
  messageId: string | undefined;
  references: string | undefined;
  inReplyTo: string | undefined;
}): { inReplyTo: string; references: string[] } | undefined {
  const own = messageIds(parent.messageId)[0];
  if (own === undefined) return undefined;
  let refs = messageIds(parent.references);
  if (refs.length === 0) {
    const irt = messageIds(parent.inReplyTo);
    if (irt.length === 1) refs = irt;
  }
  const all = [...new Set([...refs.filter((r) => r !== own), own])];
  const kept = all.length <= MAX_REFERENCES ? all : [all[0] as string, ...all.slice(-(MAX_REFERENCES - 1))];
  return { inReplyTo: own, references: kept };
}

export interface ParentAddresses {
  from: string | undefined;
  replyTo: string | undefined;
  to: string | undefined;
  cc: string | undefined;
}

export interface ReplyRecipients {
  to: Address[];
  cc: Address[];
  /** Addresses in the parent that mailwarden will not write (malformed, non-ASCII), left out. */
  skipped: string[];
}

/**
 * Who a reply goes to, as mail clients do it: Reply-To when the parent has one, else From; a
 * reply to one's own message goes to its original recipients. replyAll adds the parent's To and
 * Cc, minus the user's own address and anyone already addressed.
 */
export function replyRecipients(parent: ParentAddresses, self: string, replyAll: boolean): ReplyRecipients {
  const me = self.toLowerCase();
  const skipped: string[] = [];
  const seen = new Set<string>();
  const take = (value: string | undefined, dropSelf: boolean): Address[] => {
    const out: Address[] = [];
    for (const a of parseAddressList(value ?? '')) {
      if (a.address === '') continue;
      const key = a.address.toLowerCase();
      if (!isWritableAddress(a.address) || HEADER_FORBIDDEN.test(a.name) || HIDING.test(a.name)) {
        skipped.push(a.address);
        continue;
      }
      if ((dropSelf && key === me) || seen.has(key)) continue;
      seen.add(key);
      out.push({ name: a.name, address: a.address });
    }
    return out;
  };
  const fromSelf = parseAddressList(parent.from ?? '').some((a) => a.address.toLowerCase() === me);
  if (fromSelf) {
    const to = take(parent.to, false);
    return { to, cc: replyAll ? take(parent.cc, true) : [], skipped };
  }
  const replyTo = parseAddressList(parent.replyTo ?? '').filter((a) => a.address !== '');
  const to = take(replyTo.length > 0 ? parent.replyTo : parent.from, false);
  const cc = replyAll ? [...take(parent.to, true), ...take(parent.cc, true)] : [];
  return { to, cc, skipped };
}
