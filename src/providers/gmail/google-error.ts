import { MailError } from '../../mail/errors.js';
import type { Endpoint } from './endpoints.js';

/**
 * Reading Google's error bodies. Gmail answers `{"error":{"code","message","status",
 * "errors":[{"reason",…}],"details":[{"reason",…}]}}`; the OAuth endpoint answers
 * `{"error":"invalid_grant","error_description":"…"}` (RFC 6749 §5.2). Clients branch on the
 * reasons, so both shapes are reduced to one.
 */
export interface GoogleError {
  /** Google's human message, or the OAuth error_description. */
  message: string | undefined;
  /** errors[].reason and details[].reason (e.g. rateLimitExceeded, ACCESS_TOKEN_SCOPE_INSUFFICIENT). */
  reasons: string[];
  /** Gmail's `status` (PERMISSION_DENIED…) or the OAuth `error` code (invalid_grant…). */
  status: string | undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function reasonsOf(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const item of list as unknown[]) {
    if (item !== null && typeof item === 'object') {
      const reason = str((item as Record<string, unknown>)['reason']);
      if (reason !== undefined) out.push(reason);
    }
  }
  return out;
}

export function parseGoogleError(text: string): GoogleError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: str(text.trim().slice(0, 300)), reasons: [], status: undefined };
  }
  if (body === null || typeof body !== 'object')
    return { message: undefined, reasons: [], status: undefined };
  const top = body as Record<string, unknown>;
  const err = top['error'];
  if (typeof err === 'string') {
    return { message: str(top['error_description']), reasons: [err], status: err };
  }
  if (err === null || typeof err !== 'object') return { message: undefined, reasons: [], status: undefined };
  const e = err as Record<string, unknown>;
  return {
    message: str(e['message']),
    reasons: [...reasonsOf(e['errors']), ...reasonsOf(e['details'])],
    status: str(e['status']),
  };
}

const RATE_REASONS: ReadonlySet<string> = new Set([
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'RATE_LIMIT_EXCEEDED',
]);

/** Gmail signals quota exhaustion with 429, or with 403 and one of these reasons (quota page). */
export function isRateLimitReason(e: GoogleError): boolean {
  return e.reasons.some((r) => RATE_REASONS.has(r));
}

/** 403 for a token that lacks the endpoint's scope (as opposed to a policy refusal). */
export function isScopeReason(e: GoogleError): boolean {
  return e.reasons.some((r) => r === 'insufficientPermissions' || r === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT');
}

/**
 * A final (non-retried) Gmail error response as the MailError tools see. The message always says
 * what to do next: which scope and tier, or which command re-authorises.
 */
export function mapHttpError(endpoint: Endpoint, status: number, err: GoogleError): MailError {
  const google = err.message === undefined ? '' : `: ${err.message}`;
  const what = endpoint.name;
  if (status === 401) {
    return new MailError(
      'not_authorized',
      `${what}: Google rejected a freshly refreshed access token${google}. Run \`mailwarden auth\` to sign in again.`,
    );
  }
  if (status === 403 && isScopeReason(err)) {
    return new MailError(
      'insufficient_scope',
      `${what}: the signed-in token lacks the scope ${endpoint.scope}. The "${endpoint.tier}" tier requests it: ` +
        `enable that tier (MAILWARDEN_TOOLS) and run \`mailwarden auth\` to sign in again with it.`,
    );
  }
  if (status === 403) {
    return new MailError(
      'not_authorized',
      `${what}: Google refused the request${google}. If the account changed, run \`mailwarden auth\`.`,
    );
  }
  if (status === 404) return new MailError('not_found', `${what}: not found${google}`);
  // 409 is Gmail's answer to a label name that already exists: the caller's input, not an outage.
  if (status >= 400 && status < 500) {
    return new MailError('invalid_input', `${what}: Gmail rejected the request (HTTP ${status})${google}`);
  }
  return new MailError('upstream_unavailable', `${what}: Gmail answered HTTP ${status}${google}`);
}
