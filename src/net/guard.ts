/**
 * The SSRF guard for the one code path that contacts a host other than the mail provider.
 *
 * Static checks (no I/O): https, the default port, no userinfo, a public-looking DNS name or an
 * IP literal. The URL is parsed once, by the WHATWG URL parser, and that parse is what every
 * later step uses: a host that parses as IPv4 there (`2130706433`, `0177.0.0.1`, `0x7f.1`,
 * `127.1`) has already become `127.0.0.1` and is judged as that address, never resolved.
 *
 * Vetting (DNS): every A and AAAA answer must be globally reachable (special-purpose.ts); one
 * of them is returned and is the only address the transport may connect to, so a resolver that
 * answers differently a moment later (DNS rebinding) changes nothing.
 */
import { MailError } from '../mail/errors.js';
import type { Resolver } from './resolver.js';
import { judgeAddress } from './special-purpose.js';

export const MAX_URL_LENGTH = 2048;

/**
 * Names that never mean a public host: RFC 6761 (localhost, invalid, test), RFC 6762 (local),
 * RFC 8375 (home.arpa; all of .arpa is infrastructure), RFC 7686 (onion), RFC 9476 (alt), and
 * ICANN's reserved private-use .internal.
 */
const SPECIAL_USE_SUFFIXES = ['localhost', 'local', 'invalid', 'test', 'arpa', 'onion', 'alt', 'internal'];

export type StaticCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** The IP address a URL host names literally (brackets removed), or undefined for a DNS name. */
export function hostLiteral(url: URL): string | undefined {
  const h = url.hostname;
  if (h.startsWith('[') && h.endsWith(']')) return h.slice(1, -1);
  // After WHATWG parsing an IPv4 host is always four decimal parts.
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(h)) return h;
  return undefined;
}

/** The checks that need no network. Reasons never quote the URL (it comes from mail). */
export function checkUrl(raw: string | URL): StaticCheck {
  const text = typeof raw === 'string' ? raw : raw.href;
  if (text.length > MAX_URL_LENGTH)
    return { ok: false, reason: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'the URL does not parse' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'only https URLs are called (RFC 8058 §3.1)' };
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'the URL carries credentials (userinfo); such URLs are never called' };
  // WHATWG drops an explicit :443, so any port left is a non-default one.
  if (url.port !== '') return { ok: false, reason: 'the URL names a port other than 443' };
  if (hostLiteral(url) !== undefined) return { ok: true, url };
  const host = url.hostname;
  if (host.endsWith('.')) return { ok: false, reason: 'the host ends in a dot' };
  if (!/^[a-z0-9_-]+(?:\.[a-z0-9_-]+)+$/.test(host))
    return { ok: false, reason: 'the host is not a fully qualified public DNS name' };
  // A DNS name whose last label is numeric would have been parsed as IPv4; refuse if not.
  if (/^(?:\d+|0x[0-9a-f]*)$/.test(host.slice(host.lastIndexOf('.') + 1)))
    return { ok: false, reason: 'the host looks numeric but is not an IPv4 address' };
  const suffix = SPECIAL_USE_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
  if (suffix !== undefined)
    return { ok: false, reason: `.${suffix} names are special-use, never public hosts` };
  return { ok: true, url };
}

export interface VettedTarget {
  url: URL;
  /** The one address the connection goes to. */
  address: string;
  family: 4 | 6;
  /** Every address that was judged (all DNS answers, or the literal). */
  judged: string[];
}

function refused(reason: string): MailError {
  return new MailError('forbidden_operation', `refused by the SSRF guard: ${reason}`, { retryable: false });
}

/** Rejects with the budget error as soon as the signal aborts, whatever `p` does. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(timedOut());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(timedOut());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function timedOut(): MailError {
  return new MailError('network_error', 'the unsubscribe time budget ran out', { retryable: true });
}

/**
 * Static checks, then the address check. Throws MailError forbidden_operation when refused,
 * network_error when DNS fails or the budget (the signal) runs out.
 */
export async function vetUrl(
  raw: string | URL,
  resolver: Resolver,
  signal: AbortSignal,
): Promise<VettedTarget> {
  const check = checkUrl(raw);
  if (!check.ok) throw refused(check.reason);
  const url = check.url;
  const literal = hostLiteral(url);
  if (literal !== undefined) {
    const v = judgeAddress(literal);
    if (!v.ok) throw refused(v.reason);
    return { url, address: v.address, family: v.family, judged: [literal] };
  }
  const answers = await abortable(resolver.resolve(url.hostname, signal), signal);
  const all = [...answers.v4, ...answers.v6];
  if (all.length === 0) throw refused('the host has no A or AAAA record');
  let first: { address: string; family: 4 | 6 } | undefined;
  for (const a of all) {
    const v = judgeAddress(a);
    // One bad answer refuses the host: the next connection could be handed that one.
    if (!v.ok) throw refused(`the host resolves to an address that is not public: ${v.reason}`);
    first ??= { address: v.address, family: v.family };
  }
  if (first === undefined) throw refused('the host has no usable address');
  return { url, ...first, judged: all };
}
