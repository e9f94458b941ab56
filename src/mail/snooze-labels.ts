import { dueInstant, formatDate, isValidDate } from './snooze-dates.js';
import type { DueSpec } from './snooze-dates.js';

/**
 * Snooze state lives in ordinary labels, so every mail client shows it (IMAP clients see the
 * folder MCP/Snoozed/2026-06-20) and it survives restarts without any local store (docs/architecture.md,
 * promise 2). The label name is the due moment as the server's wall clock reads it.
 */

export const SNOOZE_ROOT = 'MCP/Snoozed';
/** Created once so Gmail nests the due labels under one folder instead of listing "MCP/…" flat. */
export const SNOOZE_PARENTS: readonly string[] = ['MCP', SNOOZE_ROOT];

const pad = (n: number): string => String(n).padStart(2, '0');

/** MCP/Snoozed/2026-06-20 (due at the start of that day) or MCP/Snoozed/2026-06-20T0930. */
export function snoozeLabelName(spec: DueSpec): string {
  const day = `${SNOOZE_ROOT}/${formatDate(spec.date)}`;
  return spec.time ? `${day}T${pad(spec.time.hour)}${pad(spec.time.minute)}` : day;
}

const LABEL = /^mcp\/snoozed\/(\d{4})-(\d{2})-(\d{2})(?:t(\d{2})(\d{2}))?$/;

/**
 * The due spec a label name carries, or undefined when it is not a due label. Case-insensitive
 * because Gmail treats label names that way; anything else under the root (a label a person made
 * by hand, a parent) is left alone rather than guessed at.
 */
export function parseSnoozeLabel(name: string): DueSpec | undefined {
  const m = LABEL.exec(name.trim().toLowerCase());
  if (!m) return undefined;
  const date = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
  if (!isValidDate(date)) return undefined;
  if (m[4] === undefined) return { date };
  const time = { hour: Number(m[4]), minute: Number(m[5]) };
  if (time.hour > 23 || time.minute > 59) return undefined;
  return { date, time };
}

export interface SnoozeLabel {
  id: string;
  name: string;
  spec: DueSpec;
  /** Epoch ms when it falls due in the zone it was read in. */
  at: number;
}

/** The due labels among a mailbox's labels, earliest first. */
export function snoozeLabelsOf(
  labels: ReadonlyArray<{ id: string; name: string }>,
  timeZone: string,
): SnoozeLabel[] {
  const out: SnoozeLabel[] = [];
  for (const l of labels) {
    const spec = parseSnoozeLabel(l.name);
    if (spec) out.push({ id: l.id, name: l.name, spec, at: dueInstant(spec, timeZone) });
  }
  return out.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name));
}

/** Splits ids into batches of at most `size` (Gmail messages.batchModify takes 1000). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
