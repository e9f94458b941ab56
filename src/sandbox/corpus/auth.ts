/**
 * Trace and authentication headers as Gmail's MX writes them: Received lines, Received-SPF and
 * one Authentication-Results (RFC 8601) with authserv-id `mx.google.com`, above the sender's
 * own headers. Verdicts are whatever the scenario says; nothing is verified here.
 */
import { formatDate, type Header } from './mime.js';
import { hash32, type Rng } from './rng.js';

export interface DkimResult {
  result: string;
  /** Signing domain (d=). */
  d: string;
  /** Selector (s=). */
  s: string;
  /** Parenthesised comment after the verdict, e.g. "body hash did not verify". */
  comment?: string;
}

export interface AuthSpec {
  spf: string;
  /** Envelope sender (RFC 5321 MAIL FROM). */
  mailfrom: string;
  /** Connecting IP, from documentation ranges. */
  ip: string;
  /** Connecting host name. */
  host: string;
  dkim: DkimResult[];
  /** null leaves dmarc= out of the report. */
  dmarc: { result: string; policy: string; headerFrom: string } | null;
  /** Replaces Gmail's usual SPF comment (a hostile comment is a scenario of its own). */
  spfComment?: string;
  /** RFC 8601 authres-version written after the authserv-id ("mx.google.com 1;"). */
  version?: number;
}

export const domainOf = (address: string): string =>
  address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** A stable documentation-range IP per host, so the same sender always connects from one place. */
export function ipFor(host: string): string {
  const h = hash32(host);
  const nets = ['192.0.2', '198.51.100', '203.0.113'] as const;
  return `${nets[h % 3]}.${((h >>> 8) % 250) + 2}`;
}

/** Sender aligned on every count: SPF and DKIM for the From domain, DMARC pass. */
export function alignedAuth(fromAddress: string, opts: { mailfrom?: string; host?: string } = {}): AuthSpec {
  const domain = domainOf(fromAddress);
  const host = opts.host ?? `mail-out.${domain}`;
  return {
    spf: 'pass',
    mailfrom: opts.mailfrom ?? fromAddress,
    ip: ipFor(host),
    host,
    dkim: [{ result: 'pass', d: domain, s: `s${hash32(domain) % 3 ? '2026' : '1'}` }],
    dmarc: { result: 'pass', policy: 'p=REJECT sp=REJECT dis=NONE', headerFrom: domain },
  };
}

function spfComment(a: AuthSpec): string {
  const dom = domainOf(a.mailfrom);
  switch (a.spf) {
    case 'pass':
      return `google.com: domain of ${a.mailfrom} designates ${a.ip} as permitted sender`;
    case 'fail':
      return `google.com: domain of ${a.mailfrom} does not designate ${a.ip} as permitted sender`;
    case 'softfail':
      return `google.com: domain of transitioning ${a.mailfrom} does not designate ${a.ip} as permitted sender`;
    case 'neutral':
      return `google.com: ${a.ip} is neither permitted nor denied by best guess record for domain of ${a.mailfrom}`;
    default:
      return `google.com: ${dom} does not designate permitted sender hosts`;
  }
}

/** The value of an Authentication-Results header, folded the way Gmail folds it. */
export function authResultsValue(a: AuthSpec, rng: Rng, authservId = 'mx.google.com'): string {
  const parts: string[] = [];
  for (const k of a.dkim) {
    const comment = k.comment ? ` (${k.comment})` : '';
    parts.push(`dkim=${k.result}${comment} header.i=@${k.d} header.s=${k.s} header.b=${rng.base64(8)}`);
  }
  parts.push(`spf=${a.spf} (${a.spfComment ?? spfComment(a)}) smtp.mailfrom=${a.mailfrom}`);
  if (a.dmarc) parts.push(`dmarc=${a.dmarc.result} (${a.dmarc.policy}) header.from=${a.dmarc.headerFrom}`);
  const head = a.version === undefined ? authservId : `${authservId} ${a.version}`;
  return `${head};\n       ${parts.join(';\n       ')}`;
}

/** A DKIM-Signature as the sender's MTA would have added it (the signature bytes are filler). */
export function dkimSignature(d: string, s: string, rng: Rng): string {
  return (
    `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${d}; s=${s}; t=${rng.int(1_700_000_000, 1_800_000_000)};\n` +
    `        h=from:to:subject:date:message-id:mime-version:content-type;\n` +
    `        bh=${rng.base64(43)}=;\n        b=${rng.base64(64)}\n         ${rng.base64(64)}\n         ${rng.base64(42)}==`
  );
}

/**
 * Gmail's trace block, topmost first. `at` is the internalDate; Gmail's own hop is stamped a
 * couple of seconds later, in Pacific time as its MX does.
 */
export function gmailTrace(
  owner: string,
  at: number,
  auth: AuthSpec | null,
  rng: Rng,
  fallbackHost: string,
): Header[] {
  const pst = (ms: number): string => `${formatDate(ms, -480)} (PST)`;
  const host = auth?.host ?? fallbackHost;
  const ip = auth?.ip ?? ipFor(host);
  const smtpId = `${rng.alnum(6)}.${rng.int(100, 999)}.${rng.int(100_000, 999_999)}`;
  const headers: Header[] = [
    ['Delivered-To', owner],
    [
      'Received',
      `by 2002:a05:7022:${rng.hex(4)}:b0:${rng.hex(3)}:${rng.hex(4)} with SMTP id ${rng.alnum(6)};\n        ${pst(at + 2000)}`,
    ],
  ];
  if (auth) headers.push(['Return-Path', `<${auth.mailfrom}>`]);
  headers.push([
    'Received',
    `from ${host} (${host}. [${ip}])\n        by mx.google.com with ESMTPS id ${smtpId}\n` +
      `        for <${owner}>\n        (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256);\n        ${pst(at + 1000)}`,
  ]);
  if (auth) {
    headers.push(['Received-SPF', `${auth.spf} (${auth.spfComment ?? spfComment(auth)}) client-ip=${ip};`]);
    headers.push(['Authentication-Results', authResultsValue(auth, rng)]);
  }
  return headers;
}

/** How a message reached the mailbox: only mail Gmail received over SMTP carries its report. */
export type Arrival = 'smtp' | 'pop' | 'import';

/**
 * Gmail's POP fetcher (Settings → Accounts → "Check mail from other accounts"): a Received line
 * "with POP3" and X-Gmail-Fetch-Info on top, and no Authentication-Results, since Gmail's MX
 * never saw the SMTP transaction.
 */
export function popTrace(owner: string, at: number, account: string, popHost: string, rng: Rng): Header[] {
  return [
    ['Delivered-To', owner],
    [
      'Received',
      `from ${popHost} [${ipFor(popHost)}]\n        by mx.google.com with POP3 id ${rng.alnum(12)}\n        for <${owner}>\n        (single-drop); ${formatDate(at + 60_000, -480)}`,
    ],
    ['X-Gmail-Fetch-Info', `${account} 1 ${popHost} 995 ${account.split('@')[0] ?? ''}`],
  ];
}

/**
 * The headers Gmail puts on top of mail arriving now (the sandbox's deliver): over SMTP its
 * trace and its own report, with the verdicts given (default: nothing could be checked — the
 * sandbox has no DNS, so SPF is "none" and there is no DKIM or DMARC result); fetched over POP
 * the fetcher's lines; imported, nothing at all.
 */
export function arrivalHeaders(
  via: Arrival,
  owner: string,
  at: number,
  envelopeFrom: string,
  rng: Rng,
  auth?: AuthSpec,
): Header[] {
  const domain = domainOf(envelopeFrom) || 'unknown.invalid';
  if (via === 'import') return [];
  if (via === 'pop')
    return popTrace(owner, at, `${owner.split('@')[0] ?? 'you'}@pop.${domain}`, `pop.${domain}`, rng);
  const host = `mail.${domain}`;
  const spec: AuthSpec = auth ?? {
    spf: 'none',
    mailfrom: envelopeFrom,
    ip: ipFor(host),
    host,
    dkim: [],
    dmarc: null,
  };
  return gmailTrace(owner, at, spec, rng, host);
}
