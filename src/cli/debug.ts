import { errorChain } from '../mail/errors.js';
import { envFlag } from '../store/config.js';
import type { Env } from '../store/config.js';

/** MAILWARDEN_DEBUG=1: full errors, stacks and causes, on stderr. */
export function debugOn(env: Env): boolean {
  // Asked while an error is being reported: an unreadable switch is off, not a second error.
  try {
    return envFlag(env, 'MAILWARDEN_DEBUG');
  } catch {
    return false;
  }
}

export const fullError = errorChain;
