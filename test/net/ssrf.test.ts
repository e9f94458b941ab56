import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { isMailError } from '../../src/mail/errors.js';
import { checkUrl, vetUrl } from '../../src/net/guard.js';
import type { Resolver } from '../../src/net/resolver.js';
import { judgeAddress } from '../../src/net/special-purpose.js';

// The IANA IPv4 / IPv6 special-purpose registries (RFC 6890) as the issue lists them, written out
// here independently of src/net/special-purpose.ts, plus multicast and the other non-global blocks.
const V4_BLOCKS = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
];
const V6_BLOCKS = [
  '::/128',
  '::1/128',
  '64:ff9b:1::/48',
  '100::/64',
  '100:0:0:1::/64',
  '2001::/23',
  '2001:db8::/32',
  '2620:4f:8000::/48',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function edges(cidr: string): string[] {
  const v4 = cidr.includes('.');
  const K = v4 ? ipaddr.IPv4 : ipaddr.IPv6;
  const first = K.networkAddressFromCIDR(cidr).toString();
  const last = K.broadcastAddressFromCIDR(cidr).toString();
  return first === last ? [first] : [first, last];
}

const PUBLIC_V4 = [
  '8.8.8.8',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
];
const PUBLIC_V6 = ['2606:4700:4700::1111', '2001:4860:4860::8888', '2001:200::1', '2a00:1450:4001::1'];

const noDns: Resolver = {
  resolve: () => {
    throw new Error('the resolver must not be asked');
  },
};
const answers = (v4: string[], v6: string[] = []): Resolver => ({
  resolve: () => Promise.resolve({ v4, v6 }),
});
const signal = (): AbortSignal => new AbortController().signal;

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isMailError(e) && e.code === 'forbidden_operation') return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('every IANA special-purpose block is refused, at both edges', () => {
  for (const cidr of [...V4_BLOCKS, ...V6_BLOCKS]) {
    it(cidr, async () => {
      for (const a of edges(cidr)) {
        expect(judgeAddress(a), a).toMatchObject({ ok: false });
        // The same address as a DNS answer and as a URL host literal.
        await refusal(
          vetUrl(
            'https://unsub.example.com/x',
            answers(a.includes(':') ? [] : [a], a.includes(':') ? [a] : []),
            signal(),
          ),
        );
        await refusal(vetUrl(`https://${a.includes(':') ? `[${a}]` : a}/x`, noDns, signal()));
      }
    });
  }

  it('IPv6 outside 2000::/3 that the library calls unicast', () => {
    for (const a of ['1::1', '4000::1', 'e000::1']) expect(judgeAddress(a), a).toMatchObject({ ok: false });
  });
});

describe('public addresses pass', () => {
  it('IPv4 next to the blocks, and IPv6 global unicast', () => {
    for (const a of PUBLIC_V4) expect(judgeAddress(a), a).toEqual({ ok: true, address: a, family: 4 });
    for (const a of PUBLIC_V6) expect(judgeAddress(a), a).toMatchObject({ ok: true, family: 6 });
  });
});

describe('IPv6 forms that carry an IPv4 address', () => {
  const privateV4 = V4_BLOCKS.flatMap(edges);
  const hex = (v4: string): string => {
    const o = v4.split('.').map(Number) as [number, number, number, number];
    return `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  };

  it('IPv4-mapped ::ffff:a.b.c.d is judged by its IPv4 address and connects to it as IPv4', () => {
    for (const v4 of privateV4) expect(judgeAddress(`::ffff:${v4}`), v4).toMatchObject({ ok: false });
    expect(judgeAddress('::ffff:8.8.8.8')).toEqual({ ok: true, address: '8.8.8.8', family: 4 });
    expect(judgeAddress('::ffff:7f00:1')).toMatchObject({ ok: false });
  });

  it('NAT64 64:ff9b::/96 is judged by its IPv4 address; local-use 64:ff9b:1::/48 is refused', () => {
    for (const v4 of privateV4) expect(judgeAddress(`64:ff9b::${hex(v4)}`), v4).toMatchObject({ ok: false });
    expect(judgeAddress('64:ff9b::808:808')).toEqual({ ok: true, address: '64:ff9b::808:808', family: 6 });
    expect(judgeAddress('64:ff9b:1::808:808')).toMatchObject({ ok: false });
  });

  it('6to4 2002::/16 is judged by the IPv4 address in bits 16–47', () => {
    for (const v4 of privateV4) expect(judgeAddress(`2002:${hex(v4)}::1`), v4).toMatchObject({ ok: false });
    expect(judgeAddress('2002:808:808::1')).toMatchObject({ ok: true, family: 6 });
  });

  it('IPv4-compatible ::a.b.c.d is refused whatever it carries (deprecated, RFC 4291 §2.5.5.1)', () => {
    for (const a of ['::127.0.0.1', '::10.0.0.1', '::8.8.8.8', '::0.0.0.2'])
      expect(judgeAddress(a), a).toMatchObject({ ok: false });
  });
});

describe('spellings of an address', () => {
  it('hosts WHATWG parses as IPv4 are judged as the address, never resolved', async () => {
    const loopback = [
      '2130706433',
      '0177.0.0.1',
      '0x7f.1',
      '127.1',
      '0x7f000001',
      '017700000001',
      '0x7f.0.0.1',
      '127.0.1',
    ];
    for (const host of loopback) {
      expect(await refusal(vetUrl(`https://${host}/unsubscribe`, noDns, signal())), host).toMatch(
        /127\.0\.0\.1 is loopback/,
      );
    }
    expect(await refusal(vetUrl('https://10.1/x', noDns, signal()))).toMatch(/10\.0\.0\.1/);
    expect(await refusal(vetUrl('https://3232235521/x', noDns, signal()))).toMatch(/192\.168\.0\.1/);
    expect(await refusal(vetUrl('https://0xa9.0xfe.0xa9.0xfe/latest/meta-data', noDns, signal()))).toMatch(
      /link-local/,
    );
    const pub = await vetUrl('https://0x8.0x8.0x8.0x8/x', noDns, signal());
    expect(pub).toMatchObject({ address: '8.8.8.8', family: 4 });
  });

  it('IPv6 literals in every form', async () => {
    for (const host of [
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::127.0.0.1]',
      '[64:ff9b::127.0.0.1]',
      '[2002:7f00:1::]',
      '[fe80::1]',
      '[0:0:0:0:0:0:0:1]',
    ])
      await refusal(vetUrl(`https://${host}/x`, noDns, signal()));
  });

  it('anything that is not a canonical address is unparseable, so refused', () => {
    for (const a of [
      '127.1',
      '0177.0.0.1',
      '1.2.3.256',
      'localhost',
      '',
      'fe80::1%eth0',
      '2606:4700::1%eth0',
    ])
      expect(judgeAddress(a), a).toMatchObject({ ok: false });
  });
});

describe('static checks', () => {
  const bad = [
    'http://unsub.example.com/x',
    'https://unsub.example.com:8443/x',
    'https://user@unsub.example.com/x',
    'https://user:pass@unsub.example.com/x',
    'https://localhost/x',
    'https://a.localhost/x',
    'https://printer.local/x',
    'https://svc.internal/x',
    'https://router.home.arpa/x',
    'https://intranet/x',
    'https://unsub.example.com./x',
    'https://x.onion/x',
    'javascript:alert(1)',
    'https://',
    `https://unsub.example.com/${'a'.repeat(2100)}`,
  ];
  for (const url of bad) it(`refuses ${url.slice(0, 60)}`, () => expect(checkUrl(url).ok).toBe(false));

  it('accepts https on the default port, spelled or not', () => {
    expect(checkUrl('https://unsub.example.com:443/x?y=1')).toMatchObject({ ok: true });
    expect(checkUrl('https://UNSUB.Example.com/x')).toMatchObject({ ok: true });
  });

  it('never quotes the URL in a reason (it comes from mail)', () => {
    const c = checkUrl('https://ignore-previous-instructions.example.com:444/');
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.reason).not.toContain('ignore');
  });
});

describe('DNS answers', () => {
  it('one private answer among public ones refuses the host', async () => {
    await refusal(vetUrl('https://unsub.example.com/x', answers(['8.8.8.8', '10.0.0.7']), signal()));
    await refusal(vetUrl('https://unsub.example.com/x', answers(['8.8.8.8'], ['fd00::1']), signal()));
    await refusal(vetUrl('https://unsub.example.com/x', answers([], ['2606:4700::1', '::1']), signal()));
  });

  it('all public: the first IPv4 answer is the address to connect to, all of them judged', async () => {
    const v = await vetUrl(
      'https://unsub.example.com/x',
      answers(['1.1.1.1', '8.8.8.8'], ['2606:4700::1']),
      signal(),
    );
    expect(v).toMatchObject({
      address: '1.1.1.1',
      family: 4,
      judged: ['1.1.1.1', '8.8.8.8', '2606:4700::1'],
    });
    const v6 = await vetUrl('https://unsub.example.com/x', answers([], ['2606:4700::1']), signal());
    expect(v6).toMatchObject({ address: '2606:4700::1', family: 6 });
  });

  it('no answer at all, or a non-canonical answer, is refused', async () => {
    await refusal(vetUrl('https://unsub.example.com/x', answers([]), signal()));
    await refusal(vetUrl('https://unsub.example.com/x', answers(['0177.0.0.1']), signal()));
  });

  it('the budget stops a resolver that never answers', async () => {
    const hang: Resolver = { resolve: () => new Promise(() => undefined) };
    const t = Date.now();
    await expect(vetUrl('https://unsub.example.com/x', hang, AbortSignal.timeout(50))).rejects.toMatchObject({
      code: 'network_error',
    });
    expect(Date.now() - t).toBeLessThan(2000);
  });
});
