/**
 * The gathering both write paths share (Gmail's messages.batchModify, IMAP's write batches):
 * concurrent writes under one key (the same change) are handed over together. A gathering goes
 * as soon as it holds as many writes as their callers said they started at once
 * (ThreadWriteOptions.together); without such a count, after a quiet spell of GATHER_MS in which
 * no more came; and never later than GATHER_MAX_MS after its first write.
 */
export const GATHER_MS = 15;
export const GATHER_MAX_MS = 150;

interface Open<T> {
  items: T[];
  first: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The most writes any of its callers said it started at once. */
  together: number;
}

export class Gatherer<T> {
  private readonly open = new Map<string, Open<T>>();

  /** `send`: the writes of one gathering, in the order they came. */
  constructor(private readonly send: (items: T[]) => void) {}

  add(key: string, item: T, together = 0): void {
    const now = Date.now();
    let g = this.open.get(key);
    if (g === undefined) {
      g = { items: [], first: now, timer: undefined, together: 0 };
      this.open.set(key, g);
    }
    const gathering = g;
    gathering.items.push(item);
    gathering.together = Math.max(gathering.together, together);
    clearTimeout(gathering.timer);
    const flush = (): void => {
      if (this.open.get(key) !== gathering) return;
      this.open.delete(key);
      this.send(gathering.items);
    };
    if (gathering.together > 0 && gathering.items.length >= gathering.together) flush();
    else
      gathering.timer = setTimeout(
        flush,
        Math.max(0, Math.min(GATHER_MS, gathering.first + GATHER_MAX_MS - now)),
      );
  }
}
