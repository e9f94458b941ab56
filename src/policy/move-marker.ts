import { readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';

/*
 * The day's count of agent moves, kept beside the action log as well as in it. The log is the
 * record; this is its last word on the cap. When the log is deleted or moved aside, a new one
 * starts, and the cap is counted from whichever says more — the new log or this marker — so
 * losing the log never hands the agent a fresh cap (README "What the server enforces").
 */

export interface MoveMarker {
  version: 1;
  account: string;
  /** Local day, YYYY-MM-DD, in `timeZone`. */
  day: string;
  timeZone: string;
  /** Agent moves out of the inbox counted that day when the marker was written. */
  moves: number;
  updatedAt: string;
}

export const MARKER_DIR = 'move-count';

export function markerPath(logPath: string, account: string): string {
  return join(dirname(logPath), MARKER_DIR, `${account}.json`);
}

/** The account's marker, or undefined when there is none or it cannot be read as one. */
export async function readMarker(logPath: string, account: string): Promise<MoveMarker | undefined> {
  let text: string;
  try {
    text = await readFile(markerPath(logPath, account), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const m = JSON.parse(text) as Partial<MoveMarker>;
    if (m.version !== 1 || typeof m.day !== 'string' || typeof m.moves !== 'number') return undefined;
    if (typeof m.timeZone !== 'string' || m.account !== account) return undefined;
    return m as MoveMarker;
  } catch {
    return undefined;
  }
}

/** Written under the account's write lock, after the move's outcome lines are in the log. */
export async function writeMarker(logPath: string, marker: MoveMarker): Promise<void> {
  await writeFileAtomic(markerPath(logPath, marker.account), `${JSON.stringify(marker)}\n`);
}

/** Whether any account's marker exists: a log that is missing then was lost, not never made. */
export async function anyMarker(logPath: string): Promise<boolean> {
  try {
    return (await readdir(join(dirname(logPath), MARKER_DIR))).some((f) => f.endsWith('.json'));
  } catch {
    return false;
  }
}
