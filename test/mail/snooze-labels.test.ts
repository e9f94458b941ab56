import { describe, expect, it } from 'vitest';
import { dueInstant, resolveUntil } from '../../src/mail/snooze-dates.js';
import { chunk, parseSnoozeLabel, snoozeLabelName, snoozeLabelsOf } from '../../src/mail/snooze-labels.js';

describe('snooze label names', () => {
  it('names a day and a minute', () => {
    expect(snoozeLabelName({ date: { year: 2026, month: 6, day: 5 } })).toBe('MCP/Snoozed/2026-06-05');
    expect(snoozeLabelName({ date: { year: 2026, month: 6, day: 5 }, time: { hour: 7, minute: 5 } })).toBe(
      'MCP/Snoozed/2026-06-05T0705',
    );
  });

  it('reads back what it writes, in any case', () => {
    for (const name of [
      'MCP/Snoozed/2026-06-05',
      'MCP/Snoozed/2026-06-05T0705',
      'MCP/Snoozed/2028-02-29T2359',
    ]) {
      const spec = parseSnoozeLabel(name);
      expect(spec).toBeDefined();
      expect(snoozeLabelName(spec as NonNullable<typeof spec>)).toBe(name);
      expect(parseSnoozeLabel(name.toLowerCase())).toEqual(spec);
    }
  });

  it('leaves alone anything that is not a due label', () => {
    for (const name of [
      'MCP',
      'MCP/Snoozed',
      'MCP/Snoozed/someday',
      'MCP/Snoozed/2026-02-30',
      'MCP/Snoozed/2026-06-05T2400',
      'MCP/Snoozed/2026-06-05T0960',
      'MCP/Snoozed/2026-06-05T09:30',
      'MCP/Snoozed/2026-06-05/extra',
      'Snoozed/2026-06-05',
      'Work/MCP/Snoozed/2026-06-05',
    ]) {
      expect(parseSnoozeLabel(name), name).toBeUndefined();
    }
  });

  it('round-trips every resolved until to the same instant, across DST in both directions', () => {
    const cases: Array<[string, string]> = [
      ['Europe/Berlin', '2026-03-28T06:00:00Z'],
      ['Europe/Berlin', '2026-10-24T06:00:00Z'],
      ['America/New_York', '2026-03-07T12:00:00Z'],
      ['America/New_York', '2026-10-31T12:00:00Z'],
      ['Australia/Lord_Howe', '2026-10-03T00:00:00Z'],
    ];
    const untils = [
      'tomorrow',
      'tomorrow 1:30am',
      'tomorrow 2:30am',
      'tomorrow 3am',
      'in 20 hours',
      'in 2 days 9am',
    ];
    for (const [tz, now] of cases) {
      for (let h = 0; h < 24; h += 1) {
        const t = Date.parse(now) + h * 3_600_000;
        for (const until of untils) {
          const due = resolveUntil(until, t, tz);
          const back = parseSnoozeLabel(snoozeLabelName(due.spec));
          expect(back, `${until} in ${tz}`).toEqual(due.spec);
          expect(dueInstant(back as NonNullable<typeof back>, tz)).toBe(due.at);
        }
      }
    }
  });
});

describe('snoozeLabelsOf', () => {
  it('keeps due labels only, earliest first, due in the zone given', () => {
    const labels = [
      { id: 'L3', name: 'MCP/Snoozed/2026-06-21' },
      { id: 'L1', name: 'MCP/Snoozed/2026-06-20T0900' },
      { id: 'L0', name: 'MCP/Snoozed' },
      { id: 'L2', name: 'MCP/Snoozed/2026-06-20' },
      { id: 'INBOX', name: 'INBOX' },
    ];
    const berlin = snoozeLabelsOf(labels, 'Europe/Berlin');
    expect(berlin.map((l) => l.id)).toEqual(['L2', 'L1', 'L3']);
    expect(berlin[0]?.at).toBe(Date.parse('2026-06-19T22:00:00Z'));
    expect(snoozeLabelsOf(labels, 'America/New_York')[1]?.at).toBe(Date.parse('2026-06-20T13:00:00Z'));
  });
});

describe('chunk', () => {
  it('splits into batches no larger than the limit', () => {
    const ids = Array.from({ length: 2501 }, (_, i) => String(i));
    const parts = chunk(ids, 1000);
    expect(parts.map((p) => p.length)).toEqual([1000, 1000, 501]);
    expect(parts.flat()).toEqual(ids);
    expect(chunk([], 1000)).toEqual([]);
  });
});
