import { MailError } from '../../mail/errors.js';
import type { Tier } from '../../policy/tiers.js';
import { BATCH_MAX_CALLS, BATCH_PATH, batchBoundary, decodeBatch, encodeBatch } from './batch-format.js';
import {
  BATCH_ENDPOINT,
  ENDPOINTS,
  GMAIL_HOST,
  ID_SEGMENT,
  OAUTH_HOST,
  REPEATED_QUERY,
  USER_ID,
} from './endpoints.js';
import type { Endpoint } from './endpoints.js';
import { denyReason } from './denylist.js';

/**
 * THE egress checkpoint (docs/architecture.md, promise 1). Every Google-bound request — Gmail calls and the
 * OAuth token refresh alike — passes `checkEgress` before a transport sees it, and before a
 * token is fetched for it. It passes only the exact form mailwarden's own client builds; a URL
 * in any other spelling was built by something else, so it is refused rather than repaired.
 */

export interface EgressRequest {
  method: string;
  url: string;
  body?: string;
  /** The Content-Type header the request is sent with (a batch body is read by its boundary). */
  contentType?: string;
}

const ALLOWED_HOSTS: ReadonlySet<string> = new Set([GMAIL_HOST, OAUTH_HOST]);
/** Paths whose body carries other requests or raw media the checkpoint cannot read as JSON. */
const WRAPPER_PREFIXES: ReadonlySet<string> = new Set(['upload', 'resumable']);
const TOKEN_GRANTS: ReadonlySet<string> = new Set(['refresh_token', 'authorization_code']);

/**
 * The URL as an error may show it: userinfo and query values are cut, since a refused URL may be
 * exactly the one carrying a secret (`?access_token=…`, `user:password@`) and errors reach logs
 * and the model.
 */
function redact(url: string): string {
  const cut = url
    .replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1…@')
    .replace(/\?([^#]*)/, (_q, query: string) => `?${query.replace(/=[^&]*/g, '=…')}`);
  return cut.length > 160 ? `${cut.slice(0, 160)}…` : cut;
}

function refuse(req: EgressRequest, why: string): MailError {
  const shown = redact(req.url);
  return new MailError('forbidden_operation', `mailwarden refused ${req.method} ${shown}: ${why}`, {
    retryable: false,
  });
}

/** Decode until stable so `%252F` cannot hide a slash from us that a second decoder would see. */
function decodeFully(req: EgressRequest, s: string): string {
  let current = s;
  for (let i = 0; i < 5; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      throw refuse(req, 'the path has a malformed percent-escape');
    }
    if (next === current) return current;
    current = next;
  }
  throw refuse(req, 'the path is percent-encoded more times than any client would');
}

/**
 * The path as the most lenient server on the way might read it: percent-decoded (incl. %2F),
 * backslashes as slashes (WHATWG does this for https), empty segments dropped, dot segments
 * resolved.
 */
export function normalisePath(req: EgressRequest, rawPath: string): string[] {
  const decoded = decodeFully(req, rawPath).replace(/\\/g, '/');
  const out: string[] = [];
  for (const seg of decoded.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return out;
}

const RAW_URL = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#\\]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/;

export function checkEgress(req: EgressRequest, tiers: ReadonlySet<Tier>): Endpoint {
  // fetch upper-cases only some methods ("patch" stays lower case), so take them verbatim.
  if (!/^[A-Z]+$/.test(req.method)) throw refuse(req, 'the HTTP method must be an upper-case token');
  // WHATWG URL silently strips tabs/newlines and trims spaces: what we read must be what is sent.
  if (!/^[\x21-\x7e]+$/.test(req.url))
    throw refuse(req, 'the URL contains whitespace, control or non-ASCII characters');
  const m = RAW_URL.exec(req.url);
  if (m === null) throw refuse(req, 'not an absolute URL');
  const [, scheme = '', authority = '', rawPath = '', rawQuery, fragment] = m;

  if (scheme !== 'https') throw refuse(req, 'only https is allowed (tokens and mail never travel in clear)');
  if (authority.includes('@'))
    throw refuse(req, 'the URL carries userinfo, which can disguise the real host');
  if (authority.includes(':'))
    throw refuse(req, 'the URL names a port; only the default https port is allowed');
  if (!ALLOWED_HOSTS.has(authority)) {
    throw refuse(
      req,
      `host "${authority}" is not exactly ${GMAIL_HOST} or ${OAUTH_HOST}; no token is sent there`,
    );
  }
  if (fragment !== undefined) throw refuse(req, 'the URL has a fragment');

  const segments = normalisePath(req, rawPath);
  const first = segments[0]?.toLowerCase();
  if (first !== undefined && WRAPPER_PREFIXES.has(first)) {
    throw refuse(req, `/${first}/ requests carry media or nested requests the checkpoint cannot inspect`);
  }
  if (first === 'batch') return checkBatch(req, tiers, rawPath, rawQuery);
  const denied = denyReason(req.method, segments);
  if (denied !== undefined) throw refuse(req, denied);

  // Only now compare spellings: a denied call gets its real reason above, everything else
  // must already be canonical (no %-escapes, doubled slashes, dot segments, trailing slash),
  // and must survive WHATWG parsing unchanged, so the checked URL is byte-for-byte the sent one.
  const canonicalPath = `/${segments.join('/')}`;
  let parsedHref: string;
  try {
    parsedHref = new URL(req.url).href;
  } catch {
    throw refuse(req, 'not a valid URL');
  }
  if (rawPath !== canonicalPath || parsedHref !== req.url) {
    throw refuse(
      req,
      `the path is not in canonical form (reads as ${canonicalPath}); mailwarden never builds it`,
    );
  }

  const endpoint = matchEndpoint(req, authority, segments);
  if (!tiers.has(endpoint.tier)) {
    throw refuse(req, `${endpoint.name} belongs to the "${endpoint.tier}" tier, which is not enabled`);
  }
  checkQuery(req, endpoint, rawQuery);
  checkBody(req, endpoint);
  return endpoint;
}

/** Each endpoint's path pattern cut into segments once, not on every request. */
const PATTERNS: ReadonlyMap<Endpoint, readonly string[]> = new Map(
  ENDPOINTS.map((e) => [e, e.pathPattern.split('/').filter((s) => s !== '')]),
);

function segmentsMatch(want: readonly string[], segments: readonly string[]): boolean {
  if (want.length !== segments.length) return false;
  return want.every((w, i) => {
    const got = segments[i] ?? '';
    if (w === '{userId}') return got === USER_ID;
    if (w.startsWith('{')) return ID_SEGMENT.test(got);
    return got === w;
  });
}

function matchEndpoint(req: EgressRequest, host: string, segments: readonly string[]): Endpoint {
  const onPath = ENDPOINTS.filter((e) => e.host === host && segmentsMatch(PATTERNS.get(e) ?? [], segments));
  const hit = onPath.find((e) => e.method === req.method);
  if (hit !== undefined) return hit;
  if (onPath.length > 0) {
    const names = onPath.map((e) => `${e.method} (${e.name})`).join(', ');
    throw refuse(req, `only ${names} is allowed on this path`);
  }
  throw refuse(req, 'not one of the endpoints mailwarden uses (allowlist)');
}

function checkQuery(req: EgressRequest, endpoint: Endpoint, rawQuery: string | undefined): void {
  if (rawQuery === undefined) return;
  if (rawQuery === '') throw refuse(req, 'empty query string');
  const seen = new Set<string>();
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
    } catch {
      throw refuse(req, 'the query has a malformed percent-escape');
    }
    // uploadType, alt, key, access_token, callback, $.xgafv… are system parameters that change
    // what the call does or where credentials travel; only the endpoint's own parameters pass.
    if (!endpoint.query.includes(key)) {
      throw refuse(req, `query parameter "${key}" is not a parameter of ${endpoint.name}`);
    }
    if (seen.has(key) && !REPEATED_QUERY.has(key)) throw refuse(req, `query parameter "${key}" repeats`);
    seen.add(key);
  }
}

function hasForwardKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasForwardKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => /forward/i.test(k) || hasForwardKey(v));
}

function checkBody(req: EgressRequest, endpoint: Endpoint): void {
  if (req.body === undefined) {
    if (endpoint.name === 'oauth.token') throw refuse(req, 'a token request needs a grant');
    if (endpoint.name === 'oauth.revoke') throw refuse(req, 'a revoke request needs the token');
    return;
  }
  if (endpoint.method === 'GET' || endpoint.method === 'DELETE') {
    throw refuse(req, `${endpoint.name} takes no request body`);
  }
  if (endpoint.name === 'oauth.revoke') {
    const keys = [...new URLSearchParams(req.body).keys()];
    if (keys.length !== 1 || keys[0] !== 'token')
      throw refuse(req, 'a revoke request carries only the token');
    return;
  }
  if (endpoint.name === 'oauth.token') {
    const grant = new URLSearchParams(req.body).getAll('grant_type');
    if (grant.length !== 1 || !TOKEN_GRANTS.has(grant[0] ?? '')) {
      throw refuse(req, 'the token endpoint is used only to redeem a sign-in code or refresh a token');
    }
    return;
  }
  if (endpoint.name === 'filters.create') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body);
    } catch {
      throw refuse(req, 'a filter body must be JSON the checkpoint can read');
    }
    // Re-serialising must give the same bytes: that rules out duplicate keys and \u escapes,
    // which another JSON parser could read differently from JSON.parse.
    if (JSON.stringify(parsed) !== req.body) {
      throw refuse(req, 'a filter body must be plain JSON as mailwarden writes it');
    }
    if (hasForwardKey(parsed)) {
      throw refuse(req, 'filters never forward mail (action.forward is a send path)');
    }
  }
}

/**
 * A batch passes only in the exact form the client writes (batch-format.ts): POST to Gmail's
 * batch path, parts that are bare `GET path` requests with no headers or body of their own,
 * each of which passes this checkpoint as if it were sent alone, and is a read. The body is
 * rebuilt from what was parsed and must be the same bytes, so Google cannot read a call into
 * it that the checkpoint did not see.
 */
function checkBatch(
  req: EgressRequest,
  tiers: ReadonlySet<Tier>,
  rawPath: string,
  rawQuery: string | undefined,
): Endpoint {
  if (req.method !== 'POST' || rawPath !== BATCH_PATH || rawQuery !== undefined)
    throw refuse(req, `a batch is only POST ${BATCH_PATH} without a query`);
  const boundary = batchBoundary(req.contentType);
  if (req.body === undefined || boundary === undefined || !/^batch_[A-Za-z0-9_-]+$/.test(boundary))
    throw refuse(req, 'a batch needs a multipart/mixed body with the boundary mailwarden writes');
  const parts = decodeBatch(req.body, req.contentType) ?? [];
  if (parts.length === 0 || parts.length > BATCH_MAX_CALLS)
    throw refuse(req, `a batch carries 1 to ${BATCH_MAX_CALLS} calls`);
  let units = 0;
  const canonical: Array<{ contentId: string; http: string }> = [];
  for (const p of parts) {
    const line = /^GET (\/[\x21-\x7e]*)$/.exec(p.http.startLine);
    if (
      line === null ||
      p.contentType !== 'application/http' ||
      p.contentId === undefined ||
      !ID_SEGMENT.test(p.contentId) ||
      p.http.headers.size > 0 ||
      p.http.body !== ''
    )
      throw refuse(req, 'each call in a batch must be a bare GET with a Content-ID');
    const inner = checkEgress({ method: 'GET', url: `https://${GMAIL_HOST}${line[1]}` }, tiers);
    if (inner.method !== 'GET' || inner.host !== GMAIL_HOST)
      throw refuse(req, `${inner.name} may not travel inside a batch (reads only)`);
    units += inner.units;
    canonical.push({ contentId: p.contentId, http: `GET ${line[1]}\r\n\r\n` });
  }
  if (encodeBatch(boundary, canonical) !== req.body)
    throw refuse(req, 'the batch body is not in the form mailwarden writes');
  return { ...BATCH_ENDPOINT, units };
}
