/**
 * Google's JSON error envelope. Clients (googleapis, gaxios, our own Gmail provider) branch on
 * `error.code`, `error.status` and `error.errors[0].reason`, so each of those must match what
 * Gmail sends for the same failure.
 */
export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    errors: Array<{
      message: string;
      domain: string;
      reason: string;
      location?: string;
      locationType?: string;
    }>;
    status: string;
  };
}

const STATUS_BY_CODE: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export class GoogleApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly domain: string;
  readonly status: string;
  readonly headers: Record<string, string>;
  readonly detailMessage: string;

  constructor(
    code: number,
    message: string,
    reason: string,
    options: {
      domain?: string;
      status?: string;
      headers?: Record<string, string>;
      detailMessage?: string;
    } = {},
  ) {
    super(message);
    this.name = 'GoogleApiError';
    this.code = code;
    this.reason = reason;
    this.domain = options.domain ?? 'global';
    this.status = options.status ?? STATUS_BY_CODE[code] ?? 'UNKNOWN';
    this.headers = options.headers ?? {};
    // Google sometimes words the per-error message differently from the top-level one (401, 403).
    this.detailMessage = options.detailMessage ?? message;
  }

  body(): GoogleErrorBody {
    const item: GoogleErrorBody['error']['errors'][number] = {
      message: this.detailMessage,
      domain: this.domain,
      reason: this.reason,
    };
    if (this.code === 401) {
      item.location = 'Authorization';
      item.locationType = 'header';
    }
    return { error: { code: this.code, message: this.message, errors: [item], status: this.status } };
  }
}

export const notFound = (): GoogleApiError =>
  new GoogleApiError(404, 'Requested entity was not found.', 'notFound');

/** 400 naming the parameter, the way Gmail words most argument errors ("Invalid id value"). */
export const invalidArgument = (message: string): GoogleApiError =>
  new GoogleApiError(400, message, 'invalidArgument');

export const failedPrecondition = (message: string): GoogleApiError =>
  new GoogleApiError(400, message, 'failedPrecondition', { status: 'FAILED_PRECONDITION' });

export const unauthenticated = (): GoogleApiError =>
  new GoogleApiError(
    401,
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    'authError',
    {
      detailMessage: 'Invalid Credentials',
      headers: { 'WWW-Authenticate': 'Bearer realm="https://accounts.google.com/"' },
    },
  );

export const insufficientScope = (): GoogleApiError =>
  new GoogleApiError(403, 'Request had insufficient authentication scopes.', 'insufficientPermissions', {
    detailMessage: 'Insufficient Permission',
    headers: {
      'WWW-Authenticate':
        'Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="https://www.googleapis.com/auth/gmail.modify"',
    },
  });

export const rateLimited = (retryAfterSeconds: number): GoogleApiError =>
  new GoogleApiError(
    429,
    "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com'.",
    'userRateLimitExceeded',
    {
      domain: 'usageLimits',
      detailMessage: 'User-rate limit exceeded.',
      headers: { 'Retry-After': String(retryAfterSeconds) },
    },
  );
