import type { Clock } from '../mail/clock.js';
import { OffsetClock, systemClock } from '../mail/clock.js';
import { invalidInput } from '../mail/errors.js';
import type { Env } from '../store/config.js';

/** An instant with its zone stated: a bare local time would mean a different moment per TZ. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The server's clock. MAILWARDEN_NOW (an ISO instant such as 2026-06-18T08:00:00Z) is a testing
 * and demo aid: the clock starts there and runs on at real speed, so a test can start a server
 * "after" a snooze falls due. It moves only what mailwarden decides by its own clock (what is
 * due, what is in the past); Google and the OAuth token lifetimes keep real time.
 */
export function clockFromEnv(env: Env): Clock {
  const raw = env['MAILWARDEN_NOW']?.trim();
  if (raw === undefined || raw === '') return systemClock;
  const at = ISO_INSTANT.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at)) {
    throw invalidInput(
      'MAILWARDEN_NOW',
      `"${raw}" is not an ISO instant with a zone, e.g. 2026-06-18T08:00:00Z`,
    );
  }
  const clock = new OffsetClock();
  clock.advance(at - Date.now());
  return clock;
}
