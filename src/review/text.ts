import { cleanLine } from '../mail/invisible.js';
import type { LogItem } from './log-view.js';
import { DESTINATION } from './log-view.js';

/*
 * Text of the person's side, shared by the terminal view and the page: what a string from mail
 * may look like before it is shown anywhere (one line, nothing hidden, bounded), and how an
 * item's outcome reads.
 */

/** Longest mail string shown; the rest is cut with an ellipsis. */
export const MAX_SHOWN = 120;

/**
 * A mail string made safe to show: one line, without controls (so no escape sequence reaches a
 * terminal), bidi overrides or invisible characters (so nothing is reordered or hidden), at most
 * `max` characters.
 */
export function safeLine(s: string | undefined, max = MAX_SHOWN): string {
  if (s === undefined) return '';
  const clean = cleanLine(s).trim();
  const chars = [...clean];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : clean;
}

const timeFormatters = new Map<string, Intl.DateTimeFormat>();

/** "YYYY-MM-DD HH:MM" in a time zone. */
export function localTime(at: number, timeZone: string): string {
  let f = timeFormatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    timeFormatters.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return `${p['year']}-${p['month']}-${p['day']} ${p['hour']}:${p['minute']}`;
}

/** What became of an item, in words a person reads: "moved to Archive", "refused (daily-cap)". */
export function outcomeText(item: LogItem): string {
  switch (item.outcome) {
    case 'moved':
      return item.action === 'label' ? 'labels changed' : `moved to ${DESTINATION[item.action]}`;
    case 'refused':
      return `refused (${safeLine(item.refusedBy ?? 'policy', 40)})`;
    case 'failed':
      return 'failed';
    default:
      return 'outcome unknown';
  }
}

/** The short form of a call id people type back (`undo --call`): its first 8 characters. */
export function shortCall(call: string | undefined): string {
  return call === undefined ? '-' : call.slice(0, 8);
}
