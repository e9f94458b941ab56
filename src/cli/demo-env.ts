import { envFlag } from '../store/config.js';
import type { Env } from '../store/config.js';

/**
 * MAILWARDEN_DEMO: the environment's way to say --demo, for launchers that pass settings as
 * variables rather than flags (the desktop bundle's "demo" switch arrives as "true"/"false").
 */
export function demoFromEnv(env: Env): boolean {
  return envFlag(env, 'MAILWARDEN_DEMO');
}
