import { invalidArgument } from './errors.js';

/**
 * Gmail message ids are 16 hex digits whose high bits follow the delivery time, so ids sort
 * roughly by date; clients must not depend on that, but a look-alike keeps logs and fixtures
 * believable. The low 20 bits carry a per-mailbox sequence so ids stay unique within a
 * millisecond.
 */
export function gmailStyleId(internalDate: number, seq: number): string {
  const ms = BigInt(Math.max(0, Math.floor(internalDate)));
  const value = (ms << 20n) | BigInt(seq & 0xfffff);
  return value.toString(16).padStart(16, '0');
}

/**
 * Page tokens are cursors (the sort key of the last item served), not offsets: a page boundary
 * then survives items being modified or removed between two page requests, as Gmail's do.
 */
export interface Cursor {
  /** Primary sort key (internalDate of the item, or a history id). */
  key: number;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.key}:${cursor.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(token: string): Cursor {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const match = /^(-?\d+):([\w.-]+)$/.exec(text);
  if (!match?.[1] || !match[2]) throw invalidArgument('Invalid pageToken');
  return { key: Number(match[1]), id: match[2] };
}

/**
 * One page of items sorted newest first by (key, id) descending. Everything strictly after the
 * cursor is eligible.
 */
export function pageAfter<T>(
  sorted: readonly T[],
  cursorOf: (item: T) => Cursor,
  pageToken: string | undefined,
  maxResults: number,
): { items: T[]; nextPageToken?: string } {
  let start = 0;
  if (pageToken !== undefined && pageToken !== '') {
    const after = decodeCursor(pageToken);
    start = sorted.findIndex((item) => compareDesc(cursorOf(item), after) > 0);
    if (start < 0) start = sorted.length;
  }
  const items = sorted.slice(start, start + maxResults);
  const last = items[items.length - 1];
  if (last !== undefined && start + maxResults < sorted.length) {
    return { items, nextPageToken: encodeCursor(cursorOf(last)) };
  }
  return { items };
}

/** Order for "newest first": positive when `a` comes after `b`. */
export function compareDesc(a: Cursor, b: Cursor): number {
  if (a.key !== b.key) return b.key - a.key;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
