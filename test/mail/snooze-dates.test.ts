import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import {
  addDays,
  dueInstant,
  instantOf,
  isoInZone,
  parseTime,
  resolveUntil,
  weekdayOf,
} from '../../src/mail/snooze-dates.js';
import { snoozeLabelName } from '../../src/mail/snooze-labels.js';

const BERLIN = 'Europe/Berlin';
const NY = 'America/New_York';
const at = (iso: string): number => Date.parse(iso);

/** The label and the instant `until` resolves to. */
function r(until: string, nowIso: string, tz: string): { label: string; dueAt: string } {
  const due = resolveUntil(until, at(nowIso), tz);
  return { label: snoozeLabelName(due.spec).replace('MCP/Snoozed/', ''), dueAt: isoInZone(due.at, tz) };
}

function rejects(until: string, nowIso: string, tz: string): MailError {
  try {
    resolveUntil(until, at(nowIso), tz);
  } catch (e) {
    expect(e).toBeInstanceOf(MailError);
    const err = e as MailError;
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('until');
    return err;
  }
  throw new Error(`"${until}" was accepted`);
}

describe('zone math (Intl, DST-correct)', () => {
  it('reads a skipped time with the offset before the jump, a repeated one as its first occurrence', () => {
    // Berlin springs forward at 02:00 CET on 2026-03-29: 02:30 does not exist.
    expect(instantOf({ year: 2026, month: 3, day: 29 }, { hour: 2, minute: 30 }, BERLIN)).toBe(
      at('2026-03-29T01:30:00Z'),
    );
    // New York falls back at 02:00 EDT on 2026-11-01: 01:30 happens twice.
    expect(instantOf({ year: 2026, month: 11, day: 1 }, { hour: 1, minute: 30 }, NY)).toBe(
      at('2026-11-01T05:30:00Z'),
    );
    expect(instantOf({ year: 2026, month: 11, day: 1 }, { hour: 3, minute: 0 }, NY)).toBe(
      at('2026-11-01T08:00:00Z'),
    );
  });

  it('formats instants with the offset in force', () => {
    expect(isoInZone(at('2026-03-29T00:59:00Z'), BERLIN)).toBe('2026-03-29T01:59:00+01:00');
    expect(isoInZone(at('2026-03-29T01:00:00Z'), BERLIN)).toBe('2026-03-29T03:00:00+02:00');
    expect(isoInZone(at('2026-11-01T05:30:00Z'), NY)).toBe('2026-11-01T01:30:00-04:00');
    expect(isoInZone(at('2026-11-01T06:30:00Z'), NY)).toBe('2026-11-01T01:30:00-05:00');
    expect(isoInZone(at('2026-06-20T12:00:00Z'), 'Asia/Kolkata')).toBe('2026-06-20T17:30:00+05:30');
  });

  it('puts a whole day at its start', () => {
    expect(dueInstant({ date: { year: 2026, month: 3, day: 29 } }, BERLIN)).toBe(at('2026-03-28T23:00:00Z'));
    expect(dueInstant({ date: { year: 2026, month: 3, day: 30 } }, BERLIN)).toBe(at('2026-03-29T22:00:00Z'));
    expect(dueInstant({ date: { year: 2026, month: 11, day: 2 } }, NY)).toBe(at('2026-11-02T05:00:00Z'));
  });
});

describe('until across the Berlin spring-forward night (2026-03-29)', () => {
  const now = '2026-03-28T11:00:00Z'; // Saturday 12:00 CET
  it.each([
    ['tomorrow', '2026-03-29', '2026-03-29T00:00:00+01:00'],
    ['tomorrow 9am', '2026-03-29T0900', '2026-03-29T09:00:00+02:00'],
    ['tomorrow 2:30am', '2026-03-29T0330', '2026-03-29T03:30:00+02:00'],
    ['2026-03-29 01:59', '2026-03-29T0159', '2026-03-29T01:59:00+01:00'],
    ['2026-03-29T03:00', '2026-03-29T0300', '2026-03-29T03:00:00+02:00'],
    ['in 24 hours', '2026-03-29T1300', '2026-03-29T13:00:00+02:00'],
    ['in 1 day', '2026-03-29', '2026-03-29T00:00:00+01:00'],
    ['in 2 days 8:15', '2026-03-30T0815', '2026-03-30T08:15:00+02:00'],
    ['weekend', '2026-04-04', '2026-04-04T00:00:00+02:00'],
    ['sunday 10:00', '2026-03-29T1000', '2026-03-29T10:00:00+02:00'],
    ['next week', '2026-03-30', '2026-03-30T00:00:00+02:00'],
    ['today 11pm', '2026-03-28T2300', '2026-03-28T23:00:00+01:00'],
  ])('%s', (until, label, dueAt) => {
    expect(r(until, now, BERLIN)).toEqual({ label, dueAt });
  });
});

describe('until across the New York fall-back night (2026-11-01)', () => {
  it.each([
    ['2026-11-01', '2026-10-31T12:00:00Z', '2026-11-01', '2026-11-01T00:00:00-04:00'],
    ['2026-11-01 1:30am', '2026-10-31T12:00:00Z', '2026-11-01T0130', '2026-11-01T01:30:00-04:00'],
    ['2026-11-01 3am', '2026-10-31T12:00:00Z', '2026-11-01T0300', '2026-11-01T03:00:00-05:00'],
    ['tomorrow 9am', '2026-10-31T12:00:00Z', '2026-11-01T0900', '2026-11-01T09:00:00-05:00'],
    ['in 2 hours', '2026-11-01T05:00:00Z', '2026-11-01T0200', '2026-11-01T02:00:00-05:00'],
    // 01:10 EST is the second 01:10 of the night; a label reads as the first, an hour early, so
    // the label steps to the first minute that cannot come back early.
    ['in 1 hour', '2026-11-01T05:10:00Z', '2026-11-01T0200', '2026-11-01T02:00:00-05:00'],
    ['in 24 hours', '2026-10-31T16:00:00Z', '2026-11-01T1100', '2026-11-01T11:00:00-05:00'],
  ])('%s at %s', (until, now, label, dueAt) => {
    expect(r(until, now, NY)).toEqual({ label, dueAt });
  });

  it('never resolves "in N hours" to a moment before it', () => {
    for (let t = at('2026-10-31T20:00:00Z'); t < at('2026-11-01T12:00:00Z'); t += 7 * 60_000) {
      for (const n of [1, 2, 3]) {
        const due = resolveUntil(`in ${n} hours`, t, NY);
        expect(due.at).toBeGreaterThanOrEqual(t + n * 3_600_000);
        expect(due.at - (t + n * 3_600_000)).toBeLessThanOrEqual(3_600_000);
        expect(dueInstant(due.spec, NY)).toBe(due.at);
      }
    }
  });
});

describe('weekday, weekend and next week: always the next one after today', () => {
  // 2026-06-20 is a Saturday.
  it('knows the weekday', () => {
    expect(weekdayOf({ year: 2026, month: 6, day: 20 })).toBe(6);
    expect(addDays({ year: 2026, month: 12, day: 31 }, 1)).toEqual({ year: 2027, month: 1, day: 1 });
  });
  const sat = '2026-06-20T08:00:00Z';
  it.each([
    ['weekend', sat, '2026-06-27'],
    ['saturday', sat, '2026-06-27'],
    ['sunday', sat, '2026-06-21'],
    ['monday', sat, '2026-06-22'],
    ['next week', sat, '2026-06-22'],
    ['weekend', '2026-06-21T08:00:00Z', '2026-06-27'],
    ['next week', '2026-06-21T08:00:00Z', '2026-06-22'],
    ['monday', '2026-06-22T08:00:00Z', '2026-06-29'],
    ['next week', '2026-06-22T08:00:00Z', '2026-06-29'],
    ['this weekend', '2026-06-19T08:00:00Z', '2026-06-20'],
    ['fri', '2026-06-19T08:00:00Z', '2026-06-26'],
    ['Tomorrow', '2026-06-20T08:00:00Z', '2026-06-21'],
  ])('%s on %s', (until, now, label) => {
    expect(r(until, now, 'UTC').label).toBe(label);
  });

  it('takes today from the server zone, not UTC', () => {
    // 23:30 UTC on Friday is already 01:30 on Saturday in Berlin.
    expect(r('tomorrow', '2026-06-19T23:30:00Z', 'UTC').label).toBe('2026-06-20');
    expect(r('tomorrow', '2026-06-19T23:30:00Z', BERLIN).label).toBe('2026-06-21');
    expect(r('weekend', '2026-06-19T23:30:00Z', BERLIN).label).toBe('2026-06-27');
  });
});

describe('the accepted forms', () => {
  const now = '2026-06-15T08:00:00Z';
  it.each([
    ['2026-06-20', '2026-06-20'],
    ['2026-06-20 9am', '2026-06-20T0900'],
    ['2026-06-20T17:00', '2026-06-20T1700'],
    ['2026-06-20 17:30', '2026-06-20T1730'],
    ['2026-06-20 at 9:30 pm', '2026-06-20T2130'],
    ['2026-06-20T0930', '2026-06-20T0930'],
    ['2026-06-20 noon', '2026-06-20T1200'],
    ['2026-06-20 12am', '2026-06-20T0000'],
    ['  TOMORROW   9AM ', '2026-06-16T0900'],
    ['monday 8:30', '2026-06-22T0830'],
    ['mon 8:30', '2026-06-22T0830'],
    ['weekend 10:00', '2026-06-20T1000'],
    ['in 3 days', '2026-06-18'],
    ['in 3 days at 9am', '2026-06-18T0900'],
    ['in 2 weeks', '2026-06-29'],
    ['in an hour', '2026-06-15T0900'],
    ['in 36 hours', '2026-06-16T2000'],
    ['today 5pm', '2026-06-15T1700'],
  ])('%s', (until, label) => {
    expect(r(until, now, 'UTC').label).toBe(label);
  });

  it('reads times of day', () => {
    expect(parseTime('9am')).toEqual({ hour: 9, minute: 0 });
    expect(parseTime('12pm')).toEqual({ hour: 12, minute: 0 });
    expect(parseTime('9.45 p.m.')).toEqual({ hour: 21, minute: 45 });
    expect(parseTime('13pm')).toBeUndefined();
    expect(parseTime('24:00')).toBeUndefined();
    expect(parseTime('9')).toBeUndefined();
  });
});

describe('refusals name until', () => {
  const now = '2026-06-15T08:00:00Z';
  it.each(['', 'soon', 'tomorrow 9', 'tomorrow 25:00', 'in 3 hours 9am', 'weekends', '20/06/2026'])(
    'unreadable: "%s" lists the accepted forms',
    (until) => {
      expect(rejects(until, now, 'UTC').message).toContain('accepted:');
    },
  );

  it('refuses the past, including a date-only today (due at its start)', () => {
    expect(rejects('2026-06-14', now, 'UTC').message).toContain('not in the future');
    expect(rejects('2026-06-15', now, 'UTC').message).toContain('start of that day');
    expect(rejects('today 7am', now, 'UTC').message).toContain('not in the future');
    expect(rejects('in 0 days', now, 'UTC').message).toContain('not in the future');
  });

  it('asks for a time with today, and for a plain weekday instead of "next monday"', () => {
    expect(rejects('today', now, 'UTC').message).toContain("'today 5pm'");
    expect(rejects('next monday', now, 'UTC').message).toContain('ambiguous');
  });

  it('refuses dates that do not exist or are implausibly far', () => {
    expect(rejects('2026-02-30', now, 'UTC').message).toContain('not a calendar date');
    expect(rejects('2062-06-20', now, 'UTC').message).toContain('5 years');
  });
});
