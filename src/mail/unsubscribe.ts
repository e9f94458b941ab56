/**
 * How a message offers to unsubscribe: RFC 2369 List-Unsubscribe, RFC 8058 one-click
 * (List-Unsubscribe-Post), and — only to report them — unsubscribe links in the body text.
 * Pure: no I/O, no URL is ever fetched here.
 */
import type { Header, MailMessage, MailThread } from './types.js';

/** The headers one metadata read needs to judge a thread's unsubscribe options and sender. */
export const UNSUBSCRIBE_HEADERS = ['From', 'Date', 'List-Id', 'List-Unsubscribe', 'List-Unsubscribe-Post'];

/** More URIs than any list sends; the rest of a longer field is ignored. */
const MAX_URIS = 10;
const MAX_URI_LENGTH = 2048;

export interface MailtoOption {
  uri: string;
  /** The first recipient (RFC 6068 `to`), percent-decoded. */
  address: string;
  subject?: string;
  body?: string;
}

export interface ListUnsubscribe {
  https: string[];
  /** Plain http: never one-click (RFC 8058 §3.1 requires HTTPS); reported only. */
  http: string[];
  mailto: MailtoOption[];
  other: string[];
  /** Some of the field was ignored under the RFC 2369 §2 rules. */
  ignoredText: boolean;
  /** URIs past the first MAX_URIS, by scheme: not parsed, only counted (never a silent cut). */
  omitted?: { https?: number; http?: number; mailto?: number };
}

function skipCfws(s: string, i: number): number {
  for (;;) {
    while (i < s.length && /\s/.test(s[i] as string)) i++;
    if (s[i] !== '(') return i;
    // RFC 5322 §3.2.2 comments nest and use backslash quoting.
    let depth = 0;
    for (; i < s.length; i++) {
      const c = s[i];
      if (c === '\\') i++;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) {
        i++;
        break;
      }
    }
  }
}

function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** RFC 6068: `mailto:to?hfname=hfvalue&…`; undefined when there is no recipient at all. */
export function parseMailto(uri: string): MailtoOption | undefined {
  const rest = uri.slice('mailto:'.length);
  const q = rest.indexOf('?');
  const to = (q < 0 ? rest : rest.slice(0, q)).split(',').map(percentDecode);
  const out: MailtoOption = { uri, address: to[0]?.trim() ?? '' };
  if (q >= 0) {
    for (const pair of rest.slice(q + 1).split('&')) {
      const eq = pair.indexOf('=');
      const name = percentDecode(eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
      const value = eq < 0 ? '' : percentDecode(pair.slice(eq + 1));
      if (name === 'to' && out.address === '') out.address = value.split(',')[0]?.trim() ?? '';
      else if (name === 'subject') out.subject = value;
      else if (name === 'body') out.body = value;
    }
  }
  return out.address === '' ? undefined : out;
}

/**
 * Parses one List-Unsubscribe field by RFC 2369 §2: angle-bracket URLs with internal
 * whitespace ignored, separated by commas, comments allowed. A field that does not start with
 * `<` is ignored; after a URL, anything but a comma ends the field; a sub-item that is not a
 * bracketed URL ends it too.
 */
export function parseListUnsubscribe(value: string): ListUnsubscribe {
  const out: ListUnsubscribe = { https: [], http: [], mailto: [], other: [], ignoredText: false };
  const s = value.replace(/\r?\n/g, '');
  let i = skipCfws(s, 0);
  let count = 0;
  while (i < s.length) {
    if (s[i] !== '<') {
      out.ignoredText = true;
      break;
    }
    const end = s.indexOf('>', i + 1);
    if (end < 0) {
      out.ignoredText = true;
      break;
    }
    const uri = s.slice(i + 1, end).replace(/\s+/g, '');
    i = skipCfws(s, end + 1);
    if (uri !== '' && uri.length <= MAX_URI_LENGTH && count < MAX_URIS) {
      count++;
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
      if (scheme === 'https') out.https.push(uri);
      else if (scheme === 'http') out.http.push(uri);
      else if (scheme === 'mailto') {
        const m = parseMailto(uri);
        if (m) out.mailto.push(m);
        else out.other.push(uri);
      } else out.other.push(uri);
    } else if (uri !== '' && count >= MAX_URIS) {
      const scheme = /^(https|http|mailto):/i.exec(uri)?.[1]?.toLowerCase() as
        'https' | 'http' | 'mailto' | undefined;
      if (scheme !== undefined) out.omitted = { ...out.omitted, [scheme]: (out.omitted?.[scheme] ?? 0) + 1 };
      else out.ignoredText = true;
    } else if (uri !== '') out.ignoredText = true;
    if (i >= s.length) break;
    if (s[i] !== ',') {
      out.ignoredText = true;
      break;
    }
    i = skipCfws(s, i + 1);
  }
  return out;
}

/** RFC 8058 §3.1: List-Unsubscribe-Post holds the single pair "List-Unsubscribe=One-Click". */
export function isOneClickPostValue(value: string): boolean {
  return value.trim().toLowerCase() === 'list-unsubscribe=one-click';
}

function fields(headers: readonly Header[], name: string): string[] {
  const wanted = name.toLowerCase();
  return headers.filter((h) => h.name.toLowerCase() === wanted).map((h) => h.value);
}

export type OneClick =
  | { ok: true; url: string }
  | {
      ok: false;
      /** Why the message does not offer RFC 8058 one-click, in words for the result. */
      reason: string;
    };

/** Whether this message, by its own headers alone, offers RFC 8058 one-click, and where. */
export function oneClickOf(headers: readonly Header[], parsed: ListUnsubscribe): OneClick {
  const lu = fields(headers, 'List-Unsubscribe');
  const post = fields(headers, 'List-Unsubscribe-Post');
  // Two fields of the same name leave "the" URI ambiguous; a forger's favourite shape.
  if (lu.length !== 1) return { ok: false, reason: 'the message has more than one List-Unsubscribe field' };
  if (post.length === 0)
    return { ok: false, reason: 'no List-Unsubscribe-Post header on the message (RFC 8058 §3.1)' };
  if (post.length > 1 || !isOneClickPostValue(post[0] ?? ''))
    return { ok: false, reason: 'List-Unsubscribe-Post is not the single pair List-Unsubscribe=One-Click' };
  if (parsed.https.length === 0)
    return { ok: false, reason: 'List-Unsubscribe has no https URI (RFC 8058 §3.1)' };
  if (parsed.https.length > 1)
    return { ok: false, reason: 'List-Unsubscribe has more than one https URI (RFC 8058 §3.1 asks for one)' };
  return { ok: true, url: parsed.https[0] as string };
}

export interface UnsubscribeHeaders {
  message: MailMessage;
  /** Messages after it in the thread (a person's reply to a newsletter, say). */
  newerMessages: number;
  options: ListUnsubscribe;
  oneClick: OneClick;
}

function mergeOmitted(
  a: ListUnsubscribe['omitted'],
  b: ListUnsubscribe['omitted'],
): Pick<ListUnsubscribe, 'omitted'> {
  if (a === undefined && b === undefined) return {};
  const out: NonNullable<ListUnsubscribe['omitted']> = {};
  for (const k of ['https', 'http', 'mailto'] as const) {
    const n = (a?.[k] ?? 0) + (b?.[k] ?? 0);
    if (n > 0) out[k] = n;
  }
  return { omitted: out };
}

function fromOwner(m: MailMessage): boolean {
  return m.labelIds.includes('SENT') || m.labelIds.includes('DRAFT');
}

/**
 * The newest message of the thread that carries List-Unsubscribe (the owner's own messages
 * aside), so a reply at the end of a newsletter thread does not hide the list's options. The
 * one-click verdict uses that same message's List-Unsubscribe-Post, never another message's.
 */
export function findUnsubscribeHeaders(thread: MailThread): UnsubscribeHeaders | undefined {
  for (let i = thread.messages.length - 1; i >= 0; i--) {
    const m = thread.messages[i] as MailMessage;
    if (fromOwner(m)) continue;
    const values = fields(m.headers, 'List-Unsubscribe');
    if (values.length === 0) continue;
    const options = values.map(parseListUnsubscribe).reduce((a, b) => ({
      https: [...a.https, ...b.https],
      http: [...a.http, ...b.http],
      mailto: [...a.mailto, ...b.mailto],
      other: [...a.other, ...b.other],
      ignoredText: a.ignoredText || b.ignoredText,
      ...mergeOmitted(a.omitted, b.omitted),
    }));
    return {
      message: m,
      newerMessages: thread.messages.length - 1 - i,
      options,
      oneClick: oneClickOf(m.headers, options),
    };
  }
  return undefined;
}

/** The raw From of the message a thread is "from": the list's message, else the first not the owner's. */
export function threadSenderMessage(thread: MailThread): MailMessage | undefined {
  return findUnsubscribeHeaders(thread)?.message ?? thread.messages.find((m) => !fromOwner(m));
}

const UNSUBSCRIBE_WORDS =
  /unsub|opt[\s_-]?out|(?:e-?mail|subscription|notification)s?[\s_-]*(?:preferences|settings)|manage[\s_-]+(?:your[\s_-]+)?(?:subscriptions?|e-?mails?|preferences)|abmelden|abbestellen|d[ée]sinscri|d[ée]sabonn|darse de baja|cancelar (?:la )?suscripci|uitschrijven|afmelden|disiscriv/i;
const URL_IN_TEXT = /https?:\/\/[^\s<>[\]"'`]+/gi;

export interface BodyCandidate {
  url: string;
  /** The words around the link on its line. */
  text: string;
}

/**
 * Unsubscribe-looking links in a message's readable text (body.ts renders HTML links as
 * `label [url]` and drops hidden elements). Reported to the human only: never fetched, and
 * `unsubscribe` never accepts them.
 */
export function bodyUnsubscribeCandidates(text: string, max = 5): BodyCandidate[] {
  const out: BodyCandidate[] = [];
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    const matches = [...line.matchAll(URL_IN_TEXT)];
    matches.forEach((m, k) => {
      const url = m[0].replace(/[.,;:!?)]+$/, '');
      const start = k === 0 ? 0 : (matches[k - 1]?.index ?? 0) + (matches[k - 1]?.[0].length ?? 0);
      const end = matches[k + 1]?.index ?? line.length;
      const clean = (t: string): string =>
        t
          .replace(/[[\]·|]/g, ' ')
          .replace(/\s+/g, ' ')
          .trim();
      // The label comes before the link (`label [url]`, `Unsubscribe: url`); the words after it
      // count only for a bare link ("https://… to unsubscribe").
      const before = clean(line.slice(start, m.index));
      const after = clean(line.slice(m.index + m[0].length, end));
      const label = before !== '' ? before : after;
      if (!UNSUBSCRIBE_WORDS.test(label) && !UNSUBSCRIBE_WORDS.test(url)) return;
      if (seen.has(url) || out.length >= max) return;
      seen.add(url);
      out.push({ url, text: label.slice(0, 120) });
    });
  }
  return out;
}
