import { errorChain } from '../mail/errors.js';
import type { Env } from '../store/config.js';

/** MAILWARDEN_DEBUG=1: full errors, stacks and causes, on stderr. */
export function debugOn(env: Env): boolean {
  const v = (env['MAILWARDEN_DEBUG'] ?? '').trim().toLowerCase();
  return v === '1' || v === 'true' || v === 'yes';
}

export const fullError = errorChain;
