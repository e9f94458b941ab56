import { invalidInput } from '../mail/errors.js';
import type { Env } from '../store/config.js';

/**
 * MAILWARDEN_DEMO: the environment's way to say --demo, for launchers that pass settings as
 * variables rather than flags (the desktop bundle's "demo" switch arrives as "true"/"false").
 * Empty or unset is off; anything but 1/true/0/false is refused rather than guessed.
 */
export function demoFromEnv(env: Env): boolean {
  const v = (env['MAILWARDEN_DEMO'] ?? '').trim().toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '' || v === '0' || v === 'false') return false;
  throw invalidInput('MAILWARDEN_DEMO', `"${v}" is not one of 1, true, 0, false`);
}
