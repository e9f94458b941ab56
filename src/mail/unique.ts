/**
 * The first of each id, in order. A provider may answer two index hits with one thread (IMAP:
 * two messages of one conversation whose References name different roots resolve to the same
 * thread), and a thread is counted and shown once.
 */
export function uniqueById<T extends { id: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((t) => !seen.has(t.id) && seen.add(t.id) !== undefined);
}
