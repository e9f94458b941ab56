import type { InboxMark } from '../mail/inbox-mark.js';
import { localTime } from './text.js';

/** The new-mail mark as a person reads it: how far through the inbox the agent has decided. */
export function describeMark(mark: InboxMark, timeZone: string): string {
  const updated = Date.parse(mark.updatedAt);
  const when = Number.isNaN(updated) ? mark.updatedAt : localTime(updated, timeZone);
  if (mark.provider === 'gmail')
    return mark.internalDate === 0
      ? `nothing decided yet (set ${when})`
      : `mail up to ${localTime(mark.internalDate, timeZone)} is decided (set ${when})`;
  return `INBOX UIDs up to ${mark.uid} of UIDVALIDITY ${mark.uidValidity} are decided (set ${when})`;
}
