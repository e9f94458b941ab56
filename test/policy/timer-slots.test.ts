import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileTimerSlots } from '../../src/policy/timer-slots.js';
import { tempDir } from '../helpers/temp.js';

/*
 * Timer slots (src/policy/timer-slots.ts): a timer runs an account once per interval across every
 * process on the same config dir. Several processes are stood in for by several stores on one
 * dir, each with its own clock.
 */

const HOUR = 3_600_000;

describe('file timer slots', () => {
  it('gives the slot to one claimant per interval, then to the next that comes after it', async () => {
    const dir = tempDir('mailwarden-slots-');
    let now = Date.UTC(2026, 11, 4, 9);
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    const [a, b, c] = [0, 1, 2].map(() => fileTimerSlots(env, () => now));
    const first = await Promise.all(
      [a, b, c].map((s) => (s as NonNullable<typeof s>).claim('sweep', 'work', HOUR)),
    );
    expect(first.filter(Boolean)).toHaveLength(1);
    // Another account and another timer have slots of their own.
    expect(await a?.claim('sweep', 'home', HOUR)).toBe(true);
    expect(await a?.claim('rules', 'work', HOUR)).toBe(true);
    now += HOUR - 1;
    expect(await b?.claim('sweep', 'work', HOUR)).toBe(false);
    now += 1;
    expect(await b?.claim('sweep', 'work', HOUR)).toBe(true);
    expect(await c?.claim('sweep', 'work', HOUR)).toBe(false);
    const book = JSON.parse(readFileSync(join(dir, 'timers', 'work.json'), 'utf8')) as Record<string, string>;
    expect(book).toEqual({ sweep: new Date(now).toISOString(), rules: new Date(now - HOUR).toISOString() });
  });

  it('a claim from the future (a clock set back) or a broken file does not stop the timer', async () => {
    const dir = tempDir('mailwarden-slots-');
    const env = { MAILWARDEN_CONFIG_DIR: dir };
    let now = Date.UTC(2026, 11, 4, 9);
    const s = fileTimerSlots(env, () => now);
    expect(await s.claim('sweep', 'work', HOUR)).toBe(true);
    now -= 10 * HOUR;
    expect(await s.claim('sweep', 'work', HOUR)).toBe(true);
    writeFileSync(join(dir, 'timers', 'work.json'), '{ not json');
    expect(await s.claim('sweep', 'work', HOUR)).toBe(true);
    expect(await s.claim('sweep', 'work', HOUR)).toBe(false);
  });

  it('refuses a timer name that is not a plain word', async () => {
    const s = fileTimerSlots({ MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-slots-') });
    await expect(s.claim('../escape', 'work', HOUR)).rejects.toThrow(/timer name/);
  });
});
