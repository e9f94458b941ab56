/**
 * Cheap facts about a message, read from its headers and MIME tree alone, that help a reader
 * decide how much to trust it and what kind of mail it is. They ride on every search hit, so the
 * shape is a short list of the signals present plus a detail only where a name explains it.
 */
import { parse } from 'tldts';

import { parseAddressList } from './headers.js';
import type { Address } from './headers.js';
import {
  decodeDomain,
  domainOfAddress,
  isDomainName,
  normalizeDomain,
  registrableDomain,
} from './domains.js';
import { judgeLookalike } from './lookalike.js';
import type { Header, MailMessage, MailThread, MimeNode } from './types.js';
import { SIGNAL_NAMES } from './vocabulary.js';
import type { SignalName } from './vocabulary.js';

export { SIGNAL_NAMES };
export type { SignalName };

/** A domain that explains a signal, only for the signals that have one. */
export interface SignalDetails {
  /** lookalikeDomain: the domain the From domain passes for. */
  resembles?: string;
  /** replyToMismatch: the Reply-To's registrable domain. */
  replyTo?: string;
  /** displayNameSpoof: the other domain the display name shows. */
  claims?: string;
}

export interface Signals {
  /** Signals present, in SIGNAL_NAMES order; absent ones are simply not listed. */
  present: SignalName[];
  details: SignalDetails;
}

function raw(headers: readonly Header[], name: string): string[] {
  const wanted = name.toLowerCase();
  return headers.filter((h) => h.name.toLowerCase() === wanted).map((h) => h.value.trim());
}

const has = (headers: readonly Header[], name: string): boolean => raw(headers, name).length > 0;

/** RFC 2369 / RFC 2919 list headers, or the Precedence values bulk senders use. */
export function isNewsletter(headers: readonly Header[]): boolean {
  return (
    has(headers, 'List-Id') ||
    has(headers, 'List-Unsubscribe') ||
    raw(headers, 'Precedence').some((v) => /^(?:bulk|junk|list)\b/i.test(v))
  );
}

/**
 * Local parts of addresses nobody reads (RFC 3834 §3.1.5 suggests not answering them), also
 * behind a prefix such as messages-noreply@ or team.no-reply@.
 */
const ROBOT_LOCAL =
  /^(?:.*[-_.])?(?:no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?)(?:[-+_.].*)?$/i;

/**
 * RFC 3834 §5 Auto-Submitted (anything but "no"), the X-Autoreply / X-Autorespond headers
 * vacation responders add, Exchange's X-Auto-Response-Suppress (set on its own automatic mail),
 * Precedence: auto_reply, a delivery report (RFC 3462 multipart/report), or a no-reply sender.
 */
export function isAutomated(m: MailMessage, from: Address | undefined): boolean {
  const h = m.headers;
  if (raw(h, 'Auto-Submitted').some((v) => !/^no\b/i.test(v))) return true;
  if (has(h, 'X-Autoreply') || has(h, 'X-Autorespond') || has(h, 'X-Auto-Response-Suppress')) return true;
  if (raw(h, 'Precedence').some((v) => /^auto[-_]reply\b/i.test(v))) return true;
  if (m.root.mimeType === 'multipart/report') return true;
  const local = from?.address.slice(0, Math.max(from.address.lastIndexOf('@'), 0)).replace(/^"|"$/g, '');
  return local !== undefined && ROBOT_LOCAL.test(local);
}

/** A text/calendar part (RFC 6047 iMIP) or an iCalendar file anywhere in the tree. */
export function hasCalendar(node: MimeNode): boolean {
  if (node.mimeType === 'text/calendar' || node.mimeType === 'application/ics') return true;
  if (/\.ics$/i.test(node.filename)) return true;
  return node.children.some(hasCalendar);
}

const EMAIL_IN_TEXT = /[^\s@<>()"',;:]+@([\p{L}\p{M}\p{N}.-]+)/gu;
const URL_OR_HOST = /(?:[a-z][a-z0-9+.-]*:\/\/)?((?:[\p{L}\p{M}\p{N}-]+\.)+[\p{L}\p{M}\p{N}-]{2,63})/giu;

/**
 * The first domain a display name shows that belongs to another organisation than the address.
 * An email address counts whatever its suffix; a bare word with dots ("J.R.R. Tolkien",
 * "Dr.Smith") only when it ends in a real public suffix, so initials are not domains.
 */
export function displayNameClaim(from: Address): string | undefined {
  const own = registrableDomain(domainOfAddress(from.address));
  const name = from.name;
  const candidates: string[] = [];
  for (const m of name.matchAll(EMAIL_IN_TEXT)) candidates.push(normalizeDomain(m[1] ?? ''));
  const withoutEmails = name.replace(EMAIL_IN_TEXT, ' ');
  for (const m of withoutEmails.matchAll(URL_OR_HOST)) {
    const host = decodeDomain(m[1] ?? '').unicode;
    const info = parse(host, { allowPrivateDomains: true });
    if ((info.isIcann === true || info.isPrivate === true) && info.domain !== null) candidates.push(host);
  }
  for (const c of candidates) {
    if (!isDomainName(c)) continue;
    const reg = registrableDomain(c);
    if (reg !== '' && reg !== own) return reg;
  }
  return undefined;
}

/** Sender domains of every message in a result: the names an ASCII lookalike is compared with. */
export function senderDomains(threads: readonly MailThread[]): string[] {
  const out = new Set<string>();
  for (const t of threads)
    for (const m of t.messages)
      for (const h of m.headers)
        if (h.name.toLowerCase() === 'from')
          for (const a of parseAddressList(h.value)) {
            const d = domainOfAddress(a.address);
            if (d !== '') out.add(d);
          }
  return [...out];
}

/** Signals of one message (search uses the thread's first). */
export function messageSignals(m: MailMessage, references: readonly string[] = []): Signals {
  const fromHeader = m.headers.find((h) => h.name.toLowerCase() === 'from');
  const from = fromHeader ? parseAddressList(fromHeader.value)[0] : undefined;
  const fromDomain = from ? domainOfAddress(from.address) : '';
  const out: Signals = { present: [], details: {} };
  const add = (s: SignalName): void => void out.present.push(s);

  if (isNewsletter(m.headers)) add('newsletter');
  if (isAutomated(m, from)) add('automated');
  if (hasCalendar(m.root)) add('calendar');
  if (fromDomain !== '') {
    const own = registrableDomain(fromDomain);
    const replyTos = raw(m.headers, 'Reply-To').flatMap((v) => parseAddressList(v));
    const away = replyTos
      .map((a) => domainOfAddress(a.address))
      .find((d) => d !== '' && registrableDomain(d) !== own);
    if (away !== undefined) {
      add('replyToMismatch');
      out.details.replyTo = registrableDomain(away);
    }
    const claim = from ? displayNameClaim(from) : undefined;
    if (claim !== undefined) {
      add('displayNameSpoof');
      out.details.claims = claim;
    }
    const look = judgeLookalike(fromDomain, references);
    if (look) {
      add('lookalikeDomain');
      if (look.resembles !== undefined) out.details.resembles = look.resembles;
    }
  }
  if (hasSeveralFrom(m.headers)) add('multipleFrom');
  return out;
}

/**
 * More than one author: several From fields, or several addresses in one (RFC 5322 §3.6.2 then
 * requires a Sender). Such a message has no single sender a verdict or a name could belong to.
 */
export function hasSeveralFrom(headers: readonly Header[]): boolean {
  const fields = raw(headers, 'From');
  return fields.length > 1 || fields.some((v) => parseAddressList(v).length > 1);
}
