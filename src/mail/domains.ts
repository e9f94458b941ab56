/**
 * Domain names as mail carries them: the domain of an address, IDNA A-labels turned back into
 * the Unicode a reader sees, and the registrable ("Organizational", RFC 7489 §3.2) domain that
 * DMARC-style relaxed alignment compares.
 */
import { getDomain } from 'tldts';

/**
 * The Public Suffix List is read WITH its private section (tldts `allowPrivateDomains: true`).
 * Private-section suffixes (blogspot.com, github.io, herokuapp.com, s3.amazonaws.com…) are
 * places where strangers rent sibling names. Without the private section, `victim.blogspot.com`
 * and `attacker.blogspot.com` would both reduce to `blogspot.com` and "align", so a tenant could
 * sign or reply for another tenant and look legitimate. With it, each tenant is its own
 * organisation: a phishing tenant never inherits a neighbour's alignment. The cost is that a
 * company that really runs two names under one hosting suffix looks like two organisations,
 * which only ever makes mailwarden more cautious, never less.
 */
const PSL_OPTIONS = { allowPrivateDomains: true } as const;

/** One label: letters, marks and digits of any script, inner hyphens/underscores. */
const LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}_-]*[\p{L}\p{M}\p{N}])?$/u;

/**
 * A host name made only of well-formed labels (at least two), at most 253 characters. Anything
 * else (spaces, quotes, instructions) is not a domain and is not reported as one.
 */
export function isDomainName(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  const labels = s.split('.');
  return labels.length >= 2 && labels.every((l) => l.length <= 63 && LABEL.test(l));
}

/** Lower-cased, NFC, without a trailing root dot or address-literal brackets. */
export function normalizeDomain(domain: string): string {
  return domain
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()
    .normalize('NFC');
}

/**
 * The domain of an addr-spec (after the LAST "@", since a quoted local part may hold one),
 * normalised; "" when there is none or it is not a domain name.
 */
export function domainOfAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return '';
  const domain = normalizeDomain(address.slice(at + 1).replace(/>.*$/, ''));
  return isDomainName(domain) ? domain : '';
}

// RFC 3492 §5 parameter values for IDNA.
const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;
const MAX_INT = 0x7fffffff;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - TMIN) * TMAX) >> 1) {
    d = Math.floor(d / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - TMIN + 1) * d) / (d + SKEW));
}

function digitOf(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 22; // 0-9 → 26-35
  if (c >= 0x41 && c <= 0x5a) return c - 0x41; // A-Z
  if (c >= 0x61 && c <= 0x7a) return c - 0x61; // a-z
  return BASE;
}

/**
 * RFC 3492 §6.2 Punycode decoding of one label's payload (without "xn--"); undefined when it is
 * malformed. Written out rather than taken from node:punycode, which is deprecated, and kept
 * pure so `src/mail/` stays free of platform modules.
 */
export function punycodeDecode(input: string): string | undefined {
  const output: number[] = [];
  const delimiter = input.lastIndexOf('-');
  for (let j = 0; j < Math.max(delimiter, 0); j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) return undefined;
    output.push(c);
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let at = delimiter > 0 ? delimiter + 1 : 0; at < input.length;) {
    const oldI = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (at >= input.length) return undefined;
      const digit = digitOf(input.charCodeAt(at++));
      if (digit >= BASE || digit > Math.floor((MAX_INT - i) / w)) return undefined;
      i += digit * w;
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
      if (digit < t) break;
      if (w > Math.floor(MAX_INT / (BASE - t))) return undefined;
      w *= BASE - t;
    }
    const points = output.length + 1;
    bias = adapt(i - oldI, points, oldI === 0);
    if (Math.floor(i / points) > MAX_INT - n) return undefined;
    n += Math.floor(i / points);
    i %= points;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    output.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...output);
}

export interface DecodedDomain {
  /** The domain with every A-label shown as its Unicode U-label. */
  unicode: string;
  /** Some "xn--" label did not decode, or decoded to plain ASCII (IDNA never produces that). */
  badPunycode: boolean;
  /** Some label was written as an A-label. */
  punycode: boolean;
}

export function decodeDomain(domain: string): DecodedDomain {
  let badPunycode = false;
  let punycode = false;
  const labels = normalizeDomain(domain)
    .split('.')
    .map((label) => {
      if (!label.startsWith('xn--')) return label;
      punycode = true;
      const decoded = punycodeDecode(label.slice(4));
      // eslint-disable-next-line no-control-regex
      if (decoded === undefined || /^[\u0000-\u007f]*$/.test(decoded)) {
        badPunycode = true;
        return label;
      }
      return decoded.toLowerCase().normalize('NFC');
    });
  return { unicode: labels.join('.'), badPunycode, punycode };
}

/**
 * The registrable domain (public suffix + one label) of a host, in Unicode form so an A-label
 * and its U-label compare equal. A host with no known suffix structure (an IP literal,
 * "localhost") is its own organisation: it only ever matches itself.
 */
export function registrableDomain(domain: string): string {
  const host = decodeDomain(domain).unicode;
  if (host === '') return '';
  return getDomain(host, PSL_OPTIONS) ?? host;
}

/**
 * Relaxed identifier alignment (RFC 7489 §3.1.1): two domains align when their Organizational
 * Domains are the same, so `mail.example.com` aligns with `news.example.com` but `example.com`
 * does not align with `esp-sender.net`.
 */
export function relaxedAligned(a: string, b: string): boolean {
  const ra = registrableDomain(a);
  return ra !== '' && ra === registrableDomain(b);
}
