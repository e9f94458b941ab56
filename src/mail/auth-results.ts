/**
 * Sender authentication as the receiving server judged it, read from Authentication-Results
 * (RFC 8601). Only the report our own border MTA wrote is believed: RFC 8601 §5 has the MTA
 * that adds the header place it at the top, and §7.1 warns that any copy further down, even one
 * claiming our authserv-id, may have been written by the sender. So exactly one report can be
 * read — the TOPMOST Authentication-Results of the message, and only when its authserv-id is the
 * account's trusted id. A trusted id further down is never searched for: when the top report is
 * another server's (mail imported, fetched over POP, or relayed), nothing was checked by ours.
 * Every report not read is only counted. Nothing here verifies a signature; mailwarden reports
 * what the receiving server concluded.
 */
import { parseAddressList } from './headers.js';
import { decodeDomain, domainOfAddress, isDomainName, relaxedAligned } from './domains.js';
import type { Header } from './types.js';
import { DKIM_RESULTS, DMARC_RESULTS, SPF_RESULTS } from './vocabulary.js';
import type { DkimResult, DmarcResult, SpfResult } from './vocabulary.js';
import { stripComments } from './mime.js';
import { hasSeveralFrom } from './signals.js';

export { GMAIL_AUTHSERV_ID } from './vocabulary.js';

/**
 * Result names registered for each method (RFC 8601 §2.7.1–2.7.2, RFC 7489 §11.2). A result
 * outside its list is reported as `unknown`: a verdict field can only ever hold one of these
 * tokens, never text the sender managed to put there.
 */

export { DKIM_RESULTS, DMARC_RESULTS, SPF_RESULTS };
export type { DkimResult, DmarcResult, SpfResult };

export interface Authentication {
  /** The top report is not the trusted authserv-id's (or there is none): nothing was checked, which is never "passed". */
  unchecked?: true;
  /** The trusted authserv-id whose report was read. */
  authservId?: string;
  spf?: SpfResult;
  dkim?: DkimResult;
  dmarc?: DmarcResult;
  /** SPF's smtp.mailfrom domain. */
  mailedBy?: string;
  /** header.d (else header.i's domain) of the passing DKIM signature. */
  signedBy?: string;
  /** Relaxed alignment (RFC 7489 §3.1.1) of signedBy with headerFrom; only when DKIM passed. */
  dkimAligned?: boolean;
  /** Other results the same report gave for a method (e.g. a second, failing signature). */
  alsoReported?: { spf?: SpfResult[]; dkim?: DkimResult[]; dmarc?: DmarcResult[] };
  /** The From header's domain; absent when the message has several From addresses. */
  headerFrom?: string;
  /** Several From addresses (RFC 5322 needs a Sender then): every From domain, none singled out. */
  fromDomains?: string[];
  /** The domain the DMARC result names (header.from), when the report gives one. */
  dmarcDomain?: string;
  /**
   * A DMARC result for a domain that is not the message's one From domain (a message with several
   * From addresses, or a report about another domain): the verdict and the domain it was checked
   * for, kept out of `dmarc` so a pass never stands next to a From it did not check.
   */
  dmarcOther?: { result: DmarcResult; domain?: string };
  /** The Return-Path's domain (absent for the null sender <>). */
  returnPath?: string;
  /** Authentication-Results headers that were not read (every one below the top, and the top one when it is not trusted). */
  otherReports: number;
}

interface ResInfo {
  method: string;
  result: string;
  props: Map<string, string>;
}

interface Report {
  authservId: string;
  results: ResInfo[];
}

/** Words, "=" and quoted strings (unquoted), splitting resinfo at ";" outside quotes. */
function tokenize(s: string): string[][] {
  const segments: string[][] = [[]];
  // A quoted local part keeps its domain: smtp.mailfrom="a;b"@example.com is one value.
  const re = /"((?:[^"\\]|\\.)*)"([^\s;="]*)|(;)|(=)|([^\s;="]+)/g;
  for (const m of s.matchAll(re)) {
    const current = segments[segments.length - 1] as string[];
    if (m[1] !== undefined) current.push(`"${m[1].replace(/\\(.)/g, '$1')}${m[2] ?? ''}`);
    else if (m[3] !== undefined) segments.push([]);
    else current.push(m[4] ?? m[5] ?? '');
  }
  return segments;
}

/** A token without its quote marker. */
const bare = (t: string | undefined): string => (t === undefined ? '' : t.startsWith('"') ? t.slice(1) : t);

/**
 * RFC 8601 §2.2: `authserv-id [CFWS authres-version] ; method[/version]=result [reason=…]
 * [ptype.prop=value…]`, comments removed first. Property names ("header . d" may carry CFWS
 * around the dot) are joined and lower-cased. `authservId` is "" when the head is not an id and
 * an optional version 1 (RFC 8601 §2.2: a field of another version is not understood).
 */
export function parseAuthResults(value: string): Report {
  const [head = [], ...resinfos] = tokenize(stripComments(value.replace(/\r?\n/g, ' ')));
  const results: ResInfo[] = [];
  for (const seg of resinfos) {
    const eq = seg.indexOf('=');
    if (eq < 1) continue; // "none" (no-result) or junk
    const method = seg.slice(0, eq).join('').replace(/\/.*$/, '').toLowerCase();
    const result = bare(seg[eq + 1]).toLowerCase();
    const props = new Map<string, string>();
    let words: string[] = [];
    for (let i = eq + 2; i < seg.length; i++) {
      const t = seg[i] as string;
      if (t !== '=') {
        words.push(bare(t));
        continue;
      }
      // The property is the dotted name just before "=", CFWS around the dot allowed.
      const name = /([a-z0-9_-]+(?:\.[a-z0-9_-]+)?)$/.exec(words.join('').toLowerCase())?.[1];
      if (name !== undefined && !props.has(name)) props.set(name, bare(seg[i + 1]));
      words = [];
      i++;
    }
    results.push({ method, result, props });
  }
  const [id, version, ...junk] = head;
  const wellFormedHead =
    id !== undefined && junk.length === 0 && (version === undefined || /^0*1$/.test(version));
  return { authservId: wellFormedHead ? bare(id).toLowerCase() : '', results };
}

/**
 * An authserv-id as a domain name (RFC 8601 §2.5: it SHOULD be one): lower case, NFC, no root
 * dot, A-labels as U-labels, so `MX.Google.COM.` is `mx.google.com`. An id that is not a domain
 * name compares as itself, case-insensitively; "" never matches.
 */
export function normalizeAuthservId(id: string): string {
  const t = id.trim().toLowerCase();
  if (t === '') return '';
  const d = decodeDomain(t).unicode;
  return isDomainName(d) ? d : t;
}

/** Header fields named Authentication-Results (a parser may have kept "Authentication-Results :"). */
export function authResultsFields(headers: readonly Header[]): string[] {
  return headers.filter((h) => h.name.trim().toLowerCase() === 'authentication-results').map((h) => h.value);
}

function token<T extends string>(list: readonly T[], raw: string): T | 'unknown' {
  return (list as readonly string[]).includes(raw) ? (raw as T) : 'unknown';
}

/** RFC 5451 §2.4.3 called SPF's "fail" "hardfail"; older verifiers still write it. */
const spfToken = (raw: string): SpfResult => token(SPF_RESULTS, raw === 'hardfail' ? 'fail' : raw);

/** "user@dom", "@dom" or "dom" → normalised domain, or undefined when it is not a domain name. */
function domainOfIdentity(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const d = value.includes('@') ? domainOfAddress(value) : decodeDomain(value).unicode;
  return d !== '' && isDomainName(d) ? d : undefined;
}

function others<T extends string>(all: T[], primary: T): T[] | undefined {
  const rest = [...new Set(all)].filter((r) => r !== primary);
  return rest.length ? rest : undefined;
}

/**
 * SPF and DMARC are evaluated once per message, so two different results for them in one report
 * are a contradiction: the least favourable one is reported (any non-pass beats pass).
 */
function leastFavourable<T extends string>(all: T[]): T | undefined {
  return all.find((r) => r !== 'pass') ?? all[0];
}

/** The domains of every From address, in order, each once. */
function fromDomains(headers: readonly Header[]): string[] {
  const all = headers
    .filter((h) => h.name.toLowerCase() === 'from')
    .flatMap((h) => parseAddressList(h.value))
    .map((a) => domainOfIdentity(a.address))
    .filter((d): d is string => d !== undefined);
  return [...new Set(all)];
}

function returnPathDomain(headers: readonly Header[]): string | undefined {
  const rp = headers.find((h) => h.name.toLowerCase() === 'return-path');
  if (!rp) return undefined;
  const m = /<([^>]*)>/.exec(rp.value);
  return domainOfIdentity((m ? m[1] : rp.value)?.trim());
}

/**
 * Reads the message's authentication as `trustedAuthservId` reported it: the topmost
 * Authentication-Results, when it is that id's. Without a trusted id (an account with none
 * configured), or when the top report is anyone else's or unreadable, the answer is `unchecked`.
 */
export function readAuthentication(headers: readonly Header[], trustedAuthservId?: string): Authentication {
  // Raw values, not RFC 2047-decoded: an encoded-word must not be able to add a ";" to a report.
  const reports = authResultsFields(headers);
  const several = hasSeveralFrom(headers);
  const domains = fromDomains(headers);
  const headerFrom = several ? undefined : domains[0];
  const returnPath = returnPathDomain(headers);
  const trusted = trustedAuthservId === undefined ? '' : normalizeAuthservId(trustedAuthservId);
  const top = trusted === '' || reports[0] === undefined ? undefined : parseAuthResults(reports[0]);
  const report =
    top !== undefined && top.authservId !== '' && normalizeAuthservId(top.authservId) === trusted
      ? top
      : undefined;
  const base: Authentication = { otherReports: reports.length - (report ? 1 : 0) };
  if (headerFrom !== undefined) base.headerFrom = headerFrom;
  if (several) base.fromDomains = domains;
  if (returnPath !== undefined) base.returnPath = returnPath;
  if (!report || trustedAuthservId === undefined) return { unchecked: true, ...base };

  const of = (method: string): ResInfo[] => report.results.filter((r) => r.method === method);
  const spfs = of('spf');
  const dkims = of('dkim');
  const dmarcs = of('dmarc');
  const out: Authentication = { authservId: trustedAuthservId, ...base };
  const also: NonNullable<Authentication['alsoReported']> = {};

  const spfAll = spfs.map((r) => spfToken(r.result));
  const spf = leastFavourable(spfAll);
  if (spf !== undefined) {
    out.spf = spf;
    const mailedBy = domainOfIdentity(spfs[0]?.props.get('smtp.mailfrom'));
    if (mailedBy !== undefined) out.mailedBy = mailedBy;
    const rest = others(spfAll, spf);
    if (rest) also.spf = rest;
  }

  const dkimAll = dkims.map((r) => token(DKIM_RESULTS, r.result));
  // One valid signature is enough (RFC 6376 §6.1, RFC 7489 §4.2), so any pass wins.
  const dkim = dkimAll.includes('pass') ? 'pass' : dkimAll[0];
  if (dkim !== undefined) {
    out.dkim = dkim;
    const rest = others(dkimAll, dkim);
    if (rest) also.dkim = rest;
  }
  if (dkim === 'pass') {
    const signers = dkims
      .filter((r) => token(DKIM_RESULTS, r.result) === 'pass')
      .map((r) => domainOfIdentity(r.props.get('header.d')) ?? domainOfIdentity(r.props.get('header.i')))
      .filter((d): d is string => d !== undefined);
    const aligned = headerFrom === undefined ? undefined : signers.find((d) => relaxedAligned(d, headerFrom));
    const signedBy = aligned ?? signers[0];
    if (signedBy !== undefined) out.signedBy = signedBy;
    out.dkimAligned = aligned !== undefined;
  }

  const dmarcAll = dmarcs.map((r) => token(DMARC_RESULTS, r.result));
  const dmarc = leastFavourable(dmarcAll);
  if (dmarc !== undefined) {
    // RFC 7489 §11.2: the result is about the domain in header.from, and only that domain.
    const checked = domainOfIdentity(dmarcs[0]?.props.get('header.from'));
    const aboutFrom = headerFrom !== undefined && (checked === undefined || checked === headerFrom);
    if (aboutFrom) {
      out.dmarc = dmarc;
      if (checked !== undefined) out.dmarcDomain = checked;
      const rest = others(dmarcAll, dmarc);
      if (rest) also.dmarc = rest;
    } else out.dmarcOther = { result: dmarc, ...(checked === undefined ? {} : { domain: checked }) };
  }
  if (Object.keys(also).length) out.alsoReported = also;
  return out;
}
