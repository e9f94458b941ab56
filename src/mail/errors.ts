/**
 * The one error type every layer throws. `src/mcp/` is the only place that turns it into an
 * MCP `isError` result; everything below it throws `MailError` with a code from this list.
 * The message always says what to do next (which scope is missing, which command re-authorises).
 */
export const ERROR_CODES = [
  'not_authorized',
  'needs_reauth',
  'insufficient_scope',
  'forbidden_operation',
  'not_found',
  'rate_limited',
  'upstream_unavailable',
  'network_error',
  'invalid_input',
  'unsupported',
  'internal_error',
  // The call used its whole MAILWARDEN_CALL_BUDGET_MS: what had not finished was stopped (the
  // message says what was done). Retryable unless a write's outcome is unknown.
  'deadline_exceeded',
  // The human was asked to confirm a change (MCP elicitation) and said no or dismissed the
  // question; nothing was done. Not retryable: asking again is the human's call, not the model's.
  'declined_by_user',
  // The result would be larger than a result may be (src/mail/bounds.ts MAX_RESULT_BYTES):
  // nothing is cut silently; the message says how to ask for less.
  'result_too_large',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set([
  'rate_limited',
  'deadline_exceeded',
  'upstream_unavailable',
  'network_error',
]);

export interface MailErrorOptions {
  retryable?: boolean;
  retryAfterSeconds?: number;
  /** The input field an invalid_input error is about (dotted path). */
  field?: string;
  cause?: unknown;
}

export class MailError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options: MailErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MailError';
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code);
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.field = options.field;
  }
}

/** invalid_input naming the field and what is allowed. */
export function invalidInput(field: string, problem: string): MailError {
  return new MailError('invalid_input', `${field}: ${problem}`, { field });
}

export function isMailError(e: unknown): e is MailError {
  return e instanceof MailError;
}

/**
 * An error with its stack and every `cause` below it, for MAILWARDEN_DEBUG=1 (stderr only: a
 * stack may name paths, never a tool result).
 */
export function errorChain(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur !== undefined && depth < 8; depth++) {
    if (cur instanceof Error) {
      const code = isMailError(cur) ? ` [${cur.code}]` : '';
      parts.push(`${depth === 0 ? '' : 'caused by: '}${cur.stack ?? `${cur.name}: ${cur.message}`}${code}`);
      cur = cur.cause;
    } else {
      parts.push(`${depth === 0 ? '' : 'caused by: '}${String(cur)}`);
      break;
    }
  }
  return parts.join('\n');
}
