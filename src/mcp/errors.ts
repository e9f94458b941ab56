import type { z } from 'zod';
import { MailError, isMailError } from '../mail/errors.js';

export interface ErrorEnvelope {
  code: MailError['code'];
  message: string;
  retryable: boolean;
  retryAfterSeconds?: number;
  field?: string;
}

/** The one place a thrown value becomes the error envelope a client sees. */
export function toEnvelope(e: unknown): ErrorEnvelope {
  const err = isMailError(e)
    ? e
    : new MailError(
        'internal_error',
        'mailwarden hit an internal error; the action log and stderr have details.',
        {
          cause: e,
        },
      );
  const out: ErrorEnvelope = { code: err.code, message: err.message, retryable: err.retryable };
  if (err.retryAfterSeconds !== undefined) out.retryAfterSeconds = err.retryAfterSeconds;
  if (err.field !== undefined) out.field = err.field;
  return out;
}

/** A zod failure as invalid_input naming the first offending field and what is allowed. */
export function fromZodError(error: z.ZodError): MailError {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)';
  const problems = error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.map(String).join('.') : '(arguments)'}: ${i.message}`)
    .join('; ');
  return new MailError('invalid_input', problems, { field });
}
