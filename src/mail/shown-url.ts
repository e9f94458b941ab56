/**
 * A URL from mail as the request it would make. The WHATWG URL parser (the one the unsubscribe
 * client and every browser use) decides what is requested: it drops tabs and newlines, maps the
 * host through IDNA to punycode and percent-encodes every other non-ASCII or control character.
 * Its serialisation is therefore printable ASCII, so the result cleaner cannot hide a character
 * of it, and it is what the model is shown; the host's Unicode form is shown beside it, and a
 * host that imitates another (lookalike.ts) is flagged. Pure: nothing is resolved or fetched.
 */
import { decodeDomain } from './domains.js';
import { judgeLookalike } from './lookalike.js';

export interface ShownUrl {
  /** The request that would be made (WHATWG href); for a URL that does not parse, its text with every non-printable-ASCII character percent-encoded. */
  url: string;
  /** The host as requested (punycode A-labels). */
  host?: string;
  /** The host as a person reads it, when that differs from `host`. */
  hostUnicode?: string;
  /** The host imitates another name (UTS #39 confusables, mixed scripts, a bad A-label). */
  lookalike?: true;
  /** The name it passes for, when that can be named. */
  resembles?: string;
  /** The text is not a URL the parser accepts: no request could be made from it. */
  parses?: false;
}

const UTF8 = new TextEncoder();

/** Every character outside printable ASCII as UTF-8 %XX (a lone surrogate as U+FFFD's), so nothing in it is invisible. */
function visibleText(raw: string): string {
  let out = '';
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp > 0x20 && cp < 0x7f) out += ch;
    else for (const byte of UTF8.encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * `references` are domains the URL is judged against for an all-ASCII imitation (the sender's
 * own domain: "rnarlowefreight.com" in mail from marlowefreight.com).
 */
export function shownUrl(raw: string, references: readonly string[] = []): ShownUrl {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { url: visibleText(raw), parses: false };
  }
  const out: ShownUrl = { url: parsed.href };
  const host = parsed.hostname;
  if (host === '') return out;
  out.host = host;
  const unicode = decodeDomain(host.replace(/^\[|\]$/g, '')).unicode;
  if (unicode !== '' && unicode !== host) out.hostUnicode = unicode;
  const look = judgeLookalike(host, references);
  if (look) {
    out.lookalike = true;
    if (look.resembles !== undefined) out.resembles = look.resembles;
  }
  return out;
}
