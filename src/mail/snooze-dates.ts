import { invalidInput } from './errors.js';
import { offsetAt, wallOf } from './zones.js';

/**
 * Snooze dates: what `until` means, resolved in one IANA time zone with Intl (chrono-node is not
 * used because it ignores IANA zone names, docs/facts.md). Pure: the caller passes "now" and the zone.
 */

export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

export interface WallTime {
  hour: number;
  minute: number;
}

/** A due moment as a wall clock reads it: a day (due at its start) or a day and a minute. */
export interface DueSpec {
  date: CivilDate;
  time?: WallTime;
}

export interface ResolvedDue {
  spec: DueSpec;
  /** Epoch milliseconds. */
  at: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Far enough for any real snooze; further out is almost always a typo (2062 for 2026). */
const MAX_AHEAD_DAYS = 5 * 366;

function sameWall(a: CivilDate & WallTime, b: CivilDate & WallTime): boolean {
  return (
    a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute
  );
}

/**
 * The instant a wall-clock minute names in `timeZone`. A time that occurs twice (clocks going
 * back) resolves to the first occurrence; a time the clocks skip (clocks going forward) is read
 * with the offset in force before the jump, so 02:30 on a spring-forward night is 03:30. Both are
 * what Temporal calls "compatible" disambiguation, and what people expect of an alarm clock.
 */
export function instantOf(date: CivilDate, time: WallTime, timeZone: string): number {
  const local = Date.UTC(date.year, date.month - 1, date.day, time.hour, time.minute);
  const wanted = { ...date, ...time };
  // A transition is never within a day of another, so the offsets a day either side cover both.
  const before = offsetAt(local - DAY_MS, timeZone);
  const after = offsetAt(local + DAY_MS, timeZone);
  const candidates = [...new Set([before, after])]
    .map((o) => local - o)
    .filter((t) => sameWall(wallOf(t, timeZone), wanted))
    .sort((a, b) => a - b);
  return candidates[0] ?? local - before;
}

/** When a due spec falls due: its minute, or the start (00:00) of its day. */
export function dueInstant(spec: DueSpec, timeZone: string): number {
  return instantOf(spec.date, spec.time ?? { hour: 0, minute: 0 }, timeZone);
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

export function formatDate(d: CivilDate): string {
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
}

/** ISO 8601 with the zone's offset at that instant, e.g. 2026-06-20T09:00:00+02:00. */
export function isoInZone(instant: number, timeZone: string): string {
  const w = wallOf(instant, timeZone);
  const offMin = Math.round(offsetAt(instant, timeZone) / MINUTE_MS);
  const sign = offMin < 0 ? '-' : '+';
  const abs = Math.abs(offMin);
  return `${formatDate(w)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function isValidDate(d: CivilDate): boolean {
  if (d.month < 1 || d.month > 12 || d.day < 1 || d.year < 1970 || d.year > 9999) return false;
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day));
  return t.getUTCDate() === d.day && t.getUTCMonth() === d.month - 1;
}

/** Calendar arithmetic on dates (no zone involved: a day is a date, not 24 hours). */
export function addDays(d: CivilDate, n: number): CivilDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(d: CivilDate): number {
  return new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
}

/** The first date strictly after `d` that falls on `weekday`. */
export function nextWeekday(d: CivilDate, weekday: number): CivilDate {
  const ahead = (weekday - weekdayOf(d) + 7) % 7;
  return addDays(d, ahead === 0 ? 7 : ahead);
}

const UNTIL_FORMS =
  "a date (2026-06-20), a date and time (2026-06-20 9am, 2026-06-20T17:00, 2026-06-20 17:30), or today / tomorrow / weekend / next week / a weekday (monday … sunday) with an optional time (tomorrow 9am, monday 8:30), 'in N days' (optionally with a time), 'in N weeks', 'in N hours'";

const WEEKDAYS: ReadonlyMap<string, number> = new Map(
  ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'].flatMap((name, i) => [
    [name, i],
    [name.slice(0, 3), i],
  ]),
);

function unparseable(input: string, why = ''): Error {
  return invalidInput('until', `cannot read "${input}"${why}; accepted: ${UNTIL_FORMS}`);
}

/** 9am, 9:30 pm, 17:00, 0930, noon. Undefined when it is not a time. */
export function parseTime(s: string): WallTime | undefined {
  const t = s.trim().replace(/^at\s+/, '');
  if (t === 'noon') return { hour: 12, minute: 0 };
  let m = /^(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\.?$/.exec(t);
  if (m) {
    const h = Number(m[1]);
    const minute = Number(m[2] ?? '0');
    if (h < 1 || h > 12 || minute > 59) return undefined;
    return { hour: (h % 12) + (m[3] === 'p' ? 12 : 0), minute };
  }
  m = /^(\d{1,2}):(\d{2})$/.exec(t) ?? /^(\d{2})(\d{2})$/.exec(t);
  if (m) {
    const hour = Number(m[1]);
    const minute = Number(m[2]);
    if (hour > 23 || minute > 59) return undefined;
    return { hour, minute };
  }
  return undefined;
}

/** The day a preset names, relative to today's date in the zone; undefined if not a preset. */
function presetDay(word: string, today: CivilDate): CivilDate | undefined {
  if (word === 'today') return today;
  if (word === 'tomorrow') return addDays(today, 1);
  // Same rule as weekday names: the next one after today, so on a Saturday it is a week away.
  if (word === 'weekend' || word === 'this weekend') return nextWeekday(today, 6);
  if (word === 'next week') return nextWeekday(today, 1);
  const wd = WEEKDAYS.get(word);
  return wd === undefined ? undefined : nextWeekday(today, wd);
}

const PRESET = /^(today|tomorrow|this weekend|weekend|next week|[a-z]+)(?:\s+(.*))?$/;

function fromDay(input: string, date: CivilDate, timeText: string | undefined): DueSpec {
  if (timeText === undefined || timeText.trim() === '') return { date };
  const time = parseTime(timeText);
  if (!time) throw unparseable(input, ` ("${timeText.trim()}" is not a time)`);
  return { date, time };
}

/**
 * The first wall-clock minute, read back the way labels are read (instantOf), that is not before
 * `instant`. In the hour clocks go back, a minute's second occurrence reads back as its first,
 * an hour early; stepping forward to a minute that reads back late enough keeps the promise that
 * a thread never returns before it was asked to.
 */
export function specAtOrAfter(instant: number, timeZone: string): DueSpec {
  for (let t = Math.ceil(instant / MINUTE_MS) * MINUTE_MS; ; t += MINUTE_MS) {
    const w = wallOf(t, timeZone);
    const spec = {
      date: { year: w.year, month: w.month, day: w.day },
      time: { hour: w.hour, minute: w.minute },
    };
    if (dueInstant(spec, timeZone) >= instant) return spec;
  }
}

function parseSpec(input: string, norm: string, now: number, timeZone: string): DueSpec {
  const today: CivilDate = wallOf(now, timeZone);
  let m = /^in\s+(\d{1,4}|an?)\s+(hours?|days?|weeks?)(?:\s+(.+))?$/.exec(norm);
  if (m) {
    const n = m[1] === 'a' || m[1] === 'an' ? 1 : Number(m[1]);
    const unit = (m[2] ?? '').replace(/s$/, '');
    if (unit === 'hour') {
      if (m[3] !== undefined) throw unparseable(input, " ('in N hours' takes no time of day)");
      return specAtOrAfter(now + n * 3_600_000, timeZone);
    }
    return fromDay(input, addDays(today, unit === 'week' ? 7 * n : n), m[3]);
  }
  m = /^(\d{4})-(\d{2})-(\d{2})(?:(?:t|\s+)(.+))?$/.exec(norm);
  if (m) {
    const date = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
    if (!isValidDate(date)) throw invalidInput('until', `${m[1]}-${m[2]}-${m[3]} is not a calendar date`);
    return fromDay(input, date, m[4]);
  }
  if (/^next\s+[a-z]+day$/.test(norm)) {
    throw unparseable(
      input,
      " ('next monday' is ambiguous: say 'monday' for the coming one, or give a date)",
    );
  }
  m = PRESET.exec(norm);
  const day = m?.[1] === undefined ? undefined : presetDay(m[1], today);
  if (!m || !day) throw unparseable(input);
  if (m[1] === 'today' && (m[2] === undefined || m[2].trim() === '')) {
    throw invalidInput('until', "'today' needs a time later today, e.g. 'today 5pm'");
  }
  return fromDay(input, day, m[2]);
}

/**
 * Reads `until` in `timeZone` at `now`. Without a time the result is a whole day, due at its
 * start (00:00). A time that lands in a daylight-saving gap is moved to the wall time it really
 * is (02:30 → 03:30), so the label always reads as the clock will. Throws invalid_input naming
 * `until` for unreadable, past or implausibly distant values.
 */
export function resolveUntil(input: string, now: number, timeZone: string): ResolvedDue {
  const norm = input.trim().toLowerCase().replace(/\s+/g, ' ');
  if (norm === '') throw unparseable(input);
  const parsed = parseSpec(input, norm, now, timeZone);
  // Re-reading the wall clock drops helper fields and moves a gap time to the time it really is.
  const spec: DueSpec = parsed.time
    ? specAtOrAfter(dueInstant(parsed, timeZone), timeZone)
    : { date: { year: parsed.date.year, month: parsed.date.month, day: parsed.date.day } };
  // The instant the label will be read as, so what is reported is exactly when it comes back.
  const at = dueInstant(spec, timeZone);
  if (at <= now) {
    const when = isoInZone(at, timeZone);
    const dayNote = spec.time ? '' : ' (a date without a time is due at the start of that day)';
    throw invalidInput(
      'until',
      `"${input}" is ${when}, which is not in the future${dayNote}; now is ${isoInZone(now, timeZone)} (${timeZone})`,
    );
  }
  if (at - now > MAX_AHEAD_DAYS * DAY_MS) {
    throw invalidInput('until', `"${input}" is more than 5 years ahead; give a nearer date`);
  }
  return { spec, at };
}

export { offsetAt, wallOf };
