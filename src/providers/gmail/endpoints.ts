import type { Tier } from '../../policy/tiers.js';

/**
 * Exactly the Google endpoints mailwarden calls (docs/architecture.md, promise 1: an allowlist of the endpoints
 * the server uses). Anything not in this table is refused by the egress checkpoint, whatever
 * tiers are on. Units are Google's documented per-call quota costs (docs/facts.md, quota page).
 */

export const GMAIL_HOST = 'gmail.googleapis.com';
export const OAUTH_HOST = 'oauth2.googleapis.com';
export type GoogleHost = typeof GMAIL_HOST | typeof OAUTH_HOST;
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const AUTH = 'https://www.googleapis.com/auth/';
/**
 * The narrowest scope that both grants the endpoint (Google's per-method scope lists) and is one
 * that scopesForTiers() requests for the endpoint's tier, so an insufficient_scope error can name
 * the tier that fixes it.
 */
const SCOPE_BY_TIER: Readonly<Record<Tier, string>> = {
  read: `${AUTH}gmail.readonly`,
  manage: `${AUTH}gmail.modify`,
  filters: `${AUTH}gmail.settings.basic`,
  drafts: `${AUTH}gmail.compose`,
  accounts: '',
};

export type EndpointName =
  | 'oauth.token'
  | 'oauth.revoke'
  | 'users.getProfile'
  | 'labels.list'
  | 'labels.get'
  | 'labels.create'
  | 'labels.patch'
  | 'labels.update'
  | 'labels.delete'
  | 'threads.list'
  | 'threads.get'
  | 'threads.modify'
  | 'threads.trash'
  | 'threads.untrash'
  | 'messages.list'
  | 'messages.get'
  | 'messages.modify'
  | 'messages.batchModify'
  | 'messages.trash'
  | 'messages.untrash'
  | 'messages.attachments.get'
  | 'history.list'
  | 'filters.list'
  | 'filters.get'
  | 'filters.create'
  | 'filters.delete'
  | 'drafts.create'
  | 'batch';

export interface Endpoint {
  readonly name: EndpointName;
  readonly method: HttpMethod;
  readonly host: GoogleHost;
  /** On the normalised path; `{name}` matches one id segment. */
  readonly pathPattern: string;
  /** Quota units charged per call attempt (0 for the token endpoint, which is not Gmail quota). */
  readonly units: number;
  readonly tier: Tier;
  /** '' for the token endpoint (it needs no bearer). */
  readonly scope: string;
  /** Query parameters this endpoint may carry; every other one (uploadType, alt, key…) is refused. */
  readonly query: readonly string[];
}

const U = '/gmail/v1/users/{userId}';
const LIST_QUERY = ['q', 'maxResults', 'pageToken', 'labelIds', 'includeSpamTrash'] as const;
const GET_QUERY = ['format', 'metadataHeaders'] as const;

function ep(
  name: EndpointName,
  method: HttpMethod,
  path: string,
  units: number,
  tier: Tier,
  query: readonly string[] = [],
): Endpoint {
  return {
    name,
    method,
    host: GMAIL_HOST,
    pathPattern: `${U}${path}`,
    units,
    tier,
    scope: SCOPE_BY_TIER[tier],
    query,
  };
}

export const ENDPOINTS: readonly Endpoint[] = [
  // The refresh itself passes the checkpoint like every Gmail call (FACTS: the reference server's
  // refresh bypassed its guard). It is read tier because every other tier needs a token too.
  {
    name: 'oauth.token',
    method: 'POST',
    host: OAUTH_HOST,
    pathPattern: '/token',
    units: 0,
    tier: 'read',
    scope: '',
    query: [],
  },
  // Forgetting an account revokes its grant (RFC 7009); the body may carry only the token.
  {
    name: 'oauth.revoke',
    method: 'POST',
    host: OAUTH_HOST,
    pathPattern: '/revoke',
    units: 0,
    tier: 'read',
    scope: '',
    query: [],
  },
  ep('users.getProfile', 'GET', '/profile', 1, 'read'),
  ep('labels.list', 'GET', '/labels', 1, 'read'),
  ep('labels.get', 'GET', '/labels/{id}', 1, 'read'),
  ep('labels.create', 'POST', '/labels', 5, 'manage'),
  ep('labels.patch', 'PATCH', '/labels/{id}', 5, 'manage'),
  ep('labels.update', 'PUT', '/labels/{id}', 5, 'manage'),
  ep('labels.delete', 'DELETE', '/labels/{id}', 5, 'manage'),
  ep('threads.list', 'GET', '/threads', 10, 'read', LIST_QUERY),
  ep('threads.get', 'GET', '/threads/{id}', 10, 'read', GET_QUERY),
  ep('threads.modify', 'POST', '/threads/{id}/modify', 10, 'manage'),
  ep('threads.trash', 'POST', '/threads/{id}/trash', 10, 'manage'),
  ep('threads.untrash', 'POST', '/threads/{id}/untrash', 10, 'manage'),
  ep('messages.list', 'GET', '/messages', 5, 'read', LIST_QUERY),
  ep('messages.get', 'GET', '/messages/{id}', 5, 'read', GET_QUERY),
  ep('messages.modify', 'POST', '/messages/{id}/modify', 5, 'manage'),
  ep('messages.batchModify', 'POST', '/messages/batchModify', 50, 'manage'),
  ep('messages.trash', 'POST', '/messages/{id}/trash', 5, 'manage'),
  ep('messages.untrash', 'POST', '/messages/{id}/untrash', 5, 'manage'),
  ep('messages.attachments.get', 'GET', '/messages/{messageId}/attachments/{id}', 5, 'read'),
  ep('history.list', 'GET', '/history', 2, 'read', [
    'startHistoryId',
    'maxResults',
    'pageToken',
    'labelId',
    'historyTypes',
  ]),
  // Reading filters is a GET that gmail.readonly grants (Google's scope list for filters.list/get),
  // so it sits in read; writing them needs gmail.settings.basic, the filters tier.
  ep('filters.list', 'GET', '/settings/filters', 1, 'read'),
  ep('filters.get', 'GET', '/settings/filters/{id}', 1, 'read'),
  ep('filters.create', 'POST', '/settings/filters', 5, 'filters'),
  ep('filters.delete', 'DELETE', '/settings/filters/{id}', 5, 'filters'),
  // The one opt-in exception to "no send path": a draft a human reviews and sends.
  ep('drafts.create', 'POST', '/drafts', 10, 'drafts'),
];

/**
 * Gmail's batch endpoint: one POST carrying read calls (egress.ts checks each one as if it were
 * sent alone). Its units are those of the calls it carries; the checkpoint fills them in.
 */
export const BATCH_ENDPOINT: Endpoint = {
  name: 'batch',
  method: 'POST',
  host: GMAIL_HOST,
  pathPattern: '/batch/gmail/v1',
  units: 0,
  tier: 'read',
  scope: SCOPE_BY_TIER.read,
  query: [],
};

const BY_NAME: ReadonlyMap<EndpointName, Endpoint> = new Map(ENDPOINTS.map((e) => [e.name, e]));

export function endpointByName(name: EndpointName): Endpoint {
  const found = BY_NAME.get(name);
  if (found === undefined) throw new Error(`unknown endpoint ${name}`);
  return found;
}

/** Query parameters that may repeat (Google encodes repeated fields as repeated keys). */
export const REPEATED_QUERY: ReadonlySet<string> = new Set(['labelIds', 'metadataHeaders', 'historyTypes']);

/**
 * One path segment standing for an id. Gmail message/thread ids are hex, label ids `Label_12`
 * or `INBOX`, filter and attachment ids base64url-like; mailwarden only ever addresses `me`.
 * Excluding `%`, `:`, `;`, `.` and `/` means an id can never smuggle a second path or a custom
 * verb (`…:send`) past the matcher.
 */
export const ID_SEGMENT = /^[A-Za-z0-9_-]+$/;
export const USER_ID = 'me';
