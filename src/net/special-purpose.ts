/**
 * Is an IP address one a request from this machine may go to? Only globally reachable unicast
 * addresses are. Two sources decide, and an address must pass both:
 *
 * 1. ipaddr.js `range()`, one maintained address library: anything it names (loopback, private,
 *    link-local, CGNAT, multicast, documentation, reserved, …) is refused; only `unicast` passes.
 * 2. The IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890), written out below
 *    entry by entry, so a registry block is refused even where the library has no name for it
 *    (100:0:0:1::/64, IPv4-compatible ::a.b.c.d) or a future version renames one.
 *
 * Every registry entry is refused, including the few the registry marks globally reachable
 * (AS112, AMT, PCP/TURN anycast, ORCHIDv2): no unsubscribe endpoint lives there, and a narrower
 * rule is one more rule to get wrong. IPv6 must also lie in 2000::/3, the only block IANA has
 * allocated as global unicast (RFC 4291 §2.4). Three forms carry an IPv4 address inside an IPv6
 * one and are judged by that IPv4 address: IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2), the
 * NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 §2.1) and 6to4 2002::/16 (RFC 3056 §2).
 */
import ipaddr from 'ipaddr.js';

export interface RegistryEntry {
  cidr: string;
  name: string;
  rfc: string;
}

/** IANA IPv4 Special-Purpose Address Registry, plus multicast (RFC 5771), which it leaves out. */
export const IPV4_SPECIAL: readonly RegistryEntry[] = [
  { cidr: '0.0.0.0/8', name: '"this network"', rfc: 'RFC 791 §3.2' },
  { cidr: '10.0.0.0/8', name: 'private-use', rfc: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT)', rfc: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', rfc: 'RFC 1122 §3.2.1.3' },
  { cidr: '169.254.0.0/16', name: 'link-local', rfc: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private-use', rfc: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', rfc: 'RFC 6890 §2.1' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC 7535' },
  { cidr: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast', rfc: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private-use', rfc: 'RFC 1918' },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service', rfc: 'RFC 7534' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', rfc: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', rfc: 'RFC 5771' },
  { cidr: '240.0.0.0/4', name: 'reserved', rfc: 'RFC 1112 §4' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', rfc: 'RFC 8190, RFC 919 §7' },
];

/**
 * IANA IPv6 Special-Purpose Address Registry, without the three IPv4-carrying forms judged by
 * their IPv4 address (see above), plus blocks outside it that are not global unicast either.
 */
export const IPV6_SPECIAL: readonly RegistryEntry[] = [
  { cidr: '::/128', name: 'unspecified', rfc: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', rfc: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', rfc: 'RFC 4291 §2.5.5.1' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', rfc: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', rfc: 'RFC 6666' },
  { cidr: '100:0:0:1::/64', name: 'dummy IPv6 prefix', rfc: 'RFC 9780' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo, benchmarking, ORCHID…)', rfc: 'RFC 2928' },
  { cidr: '2001:db8::/32', name: 'documentation', rfc: 'RFC 3849' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service', rfc: 'RFC 7534' },
  { cidr: '3fff::/20', name: 'documentation', rfc: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs', rfc: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique-local', rfc: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local', rfc: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', rfc: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', rfc: 'RFC 4291' },
];

type Cidr4 = [ipaddr.IPv4, number];
type Cidr6 = [ipaddr.IPv6, number];
const V4: ReadonlyArray<[Cidr4, RegistryEntry]> = IPV4_SPECIAL.map((e) => [ipaddr.IPv4.parseCIDR(e.cidr), e]);
const V6: ReadonlyArray<[Cidr6, RegistryEntry]> = IPV6_SPECIAL.map((e) => [ipaddr.IPv6.parseCIDR(e.cidr), e]);
const GLOBAL_UNICAST_V6: Cidr6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN: Cidr6 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR: Cidr6 = ipaddr.IPv6.parseCIDR('2002::/16');

export type Verdict =
  | { ok: true; /** The address to connect to. */ address: string; family: 4 | 6 }
  | { ok: false; reason: string };

const refuse = (address: string, why: string): Verdict => ({ ok: false, reason: `${address} is ${why}` });

function judgeV4(ip: ipaddr.IPv4, shown: string): Verdict {
  for (const [cidr, entry] of V4) {
    if (ip.match(cidr)) return refuse(shown, `${entry.name} (${entry.cidr}, ${entry.rfc})`);
  }
  const range: string = ip.range();
  if (range !== 'unicast') return refuse(shown, `not globally reachable (${range})`);
  return { ok: true, address: ip.toString(), family: 4 };
}

function embeddedV4(parts: readonly number[], at: number): ipaddr.IPv4 {
  const hi = parts[at] ?? 0;
  const lo = parts[at + 1] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function judgeV6(ip: ipaddr.IPv6): Verdict {
  const shown = ip.toString();
  if (ip.isIPv4MappedAddress()) {
    // The socket would reach the IPv4 host itself: judge it, and connect to it as IPv4.
    return judgeV4(ip.toIPv4Address(), shown);
  }
  if (ip.match(NAT64_WELL_KNOWN) || ip.match(SIX_TO_FOUR)) {
    // RFC 6052 §2.2: /96 prefix, IPv4 in the last 32 bits. RFC 3056 §2: 2002:V4ADDR::/48.
    const inner = ip.match(SIX_TO_FOUR) ? embeddedV4(ip.parts, 1) : embeddedV4(ip.parts, 6);
    const v = judgeV4(inner, `${shown} (carrying ${inner.toString()})`);
    return v.ok ? { ok: true, address: shown, family: 6 } : v;
  }
  for (const [cidr, entry] of V6) {
    if (ip.match(cidr)) return refuse(shown, `${entry.name} (${entry.cidr}, ${entry.rfc})`);
  }
  const range: string = ip.range();
  if (range !== 'unicast') return refuse(shown, `not globally reachable (${range})`);
  if (!ip.match(GLOBAL_UNICAST_V6))
    return refuse(shown, 'outside global unicast space 2000::/3 (RFC 4291 §2.4)');
  return { ok: true, address: shown, family: 6 };
}

/**
 * Judges one address as a resolver or a URL parser gives it: dotted-quad IPv4 or IPv6 text.
 * Other spellings (short, octal, hex) are refused here as unparseable: a URL host in those
 * spellings reaches this function already normalised by the WHATWG URL parser (see guard.ts).
 */
export function judgeAddress(text: string): Verdict {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // ipaddr.js reads the exact spelling "::a.b.c.d" as IPv4-mapped (::ffff:a.b.c.d); it is
  // IPv4-compatible (::/96). "0::a.b.c.d" is the same address and parses as what it is.
  const s = bare.replace(/^::(?=\d+\.\d+\.\d+\.\d+$)/, '0::');
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return judgeV4(ipaddr.IPv4.parse(s), s);
  if (s.includes(':') && ipaddr.IPv6.isValid(s)) {
    const ip = ipaddr.IPv6.parse(s);
    // A zone index names a local interface: nothing on the internet.
    if (ip.zoneId !== undefined) return refuse(s, 'scoped to a local interface');
    return judgeV6(ip);
  }
  // The text is not echoed: it may come from mail.
  return { ok: false, reason: 'the host is not an IP address mailwarden can parse' };
}
