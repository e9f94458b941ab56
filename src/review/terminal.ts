import type { LogView } from './log-view.js';
import { DESTINATION } from './log-view.js';
import { localTime, outcomeText, safeLine, shortCall } from './text.js';
import type { UndoOutcome } from './undo.js';

/*
 * `mailwarden log` and `mailwarden undo` for a terminal. Mail strings pass safeLine first: no
 * control character from mail (an escape sequence could rewrite the screen or the title) reaches
 * the terminal.
 */

export interface TodayLine {
  account: string;
  day: string;
  used: number;
  /** 0: no cap. */
  cap: number;
  error?: string;
}

export function formatLog(view: LogView, today: readonly TodayLine[]): string {
  const tz = view.range.timeZone;
  const out: string[] = [`action log, ${view.range.from} to ${view.range.to} (${tz}), newest first`];
  if (view.calls.length === 0) out.push('  (no agent, rule or human moves in these days)');
  for (const c of view.calls) {
    out.push(
      `\n${localTime(c.at, tz)}  ${safeLine(c.tool, 40)}  ${c.actor}  call ${shortCall(c.call)}  account ${safeLine(c.account, 64)}  (${c.items.length} item${c.items.length === 1 ? '' : 's'})`,
    );
    for (const i of c.items) {
      const where = i.outcome === 'moved' ? '' : ` [${i.action} → ${DESTINATION[i.action]}]`;
      const why = i.outcome === 'refused' && i.reason ? `\n      ${safeLine(i.reason, 300)}` : '';
      const err = i.error !== undefined && i.outcome !== 'moved' ? `\n      ${safeLine(i.error, 300)}` : '';
      const rule = i.senderRule === undefined ? '' : ` (rule ${safeLine(i.senderRule, 80)})`;
      out.push(
        `  ${localTime(i.at, tz).slice(11)}  ${outcomeText(i)}${where}${rule}  ${i.unit} ${safeLine(i.ids[0], 60)}\n      from ${safeLine(i.sender, 80) || '(no sender)'}  “${safeLine(i.subject, 100)}”${why}${err}`,
      );
    }
  }
  if (view.damagedCount > 0)
    out.push(
      `\n${view.damagedCount} damaged line(s) in the log were not shown (first: line ${view.damaged[0]?.line}, ${view.damaged[0]?.problem})`,
    );
  out.push('');
  for (const t of today) {
    if (t.error !== undefined)
      out.push(`today (${t.day}), ${t.account}: the cap count cannot be read: ${t.error}`);
    else if (t.cap === 0)
      out.push(`today (${t.day}), ${t.account}: ${t.used} agent moves out of the inbox; no daily cap`);
    else
      out.push(
        `today (${t.day}), ${t.account}: ${t.used} of ${t.cap} agent moves out of the inbox used, ${Math.max(0, t.cap - t.used)} left`,
      );
  }
  return out.join('\n');
}

export function formatUndo(
  results: readonly UndoOutcome[],
  dryRun: boolean,
  unmatched: readonly string[],
): string {
  const out: string[] = [];
  for (const r of results)
    out.push(
      `${r.status.padEnd(13)} ${r.unit} ${safeLine(r.id, 60)}  (${r.action}, call ${shortCall(r.call)})\n      from ${safeLine(r.sender, 80) || '(no sender)'}  “${safeLine(r.subject, 100)}”${r.why === undefined ? '' : `\n      ${safeLine(r.why, 300)}`}`,
    );
  for (const u of unmatched)
    out.push(`not found     ${safeLine(u, 80)}: no move out of the inbox in the log names it`);
  const n = (s: string): number => results.filter((r) => r.status === s).length;
  out.push(
    dryRun
      ? `dry run: ${n('would restore')} would be restored, ${n('not restored')} would not; nothing was changed`
      : `${n('restored')} restored, ${n('not restored') + unmatched.length} not`,
  );
  return out.join('\n');
}
