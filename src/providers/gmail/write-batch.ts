import type { Label } from '../../mail/types.js';
import { Gatherer } from '../gather.js';
import type { LabelChange } from '../mailbox.js';

/**
 * The pieces of the Gmail write path that are not requests themselves: the label list a
 * mailbox keeps between calls, and the gathering of concurrent thread writes into
 * messages.batchModify requests.
 */

/** How long a label list is trusted when no label write of this process came in between. */
export const LABELS_TTL_MS = 60_000;

/**
 * labels.list, kept for LABELS_TTL_MS. Labels are not mail (docs/architecture.md, promise 2); every label
 * write of this mailbox forgets the list, and a list loaded while a write ran is not kept, since
 * it may predate the write.
 */
export class LabelCache {
  private held: { at: number; labels: Label[] } | undefined;
  private generation = 0;
  /** A load in flight, shared by the concurrent writes of a call (one labels.list, not ten). */
  private loading: { generation: number; labels: Promise<Label[]> } | undefined;

  constructor(
    private readonly load: (signal?: AbortSignal) => Promise<Label[]>,
    private readonly now: () => number,
  ) {}

  async list(signal?: AbortSignal, live = false): Promise<Label[]> {
    const held = this.held;
    if (!live && held !== undefined && this.now() - held.at < LABELS_TTL_MS)
      return held.labels.map(copyLabel);
    const generation = this.generation;
    let loading = this.loading;
    if (live || loading === undefined || loading.generation !== generation) {
      loading = { generation, labels: this.load(signal) };
      this.loading = loading;
      const mine = loading;
      void mine.labels
        .then((labels) => {
          if (generation === this.generation) this.held = { at: this.now(), labels: labels.map(copyLabel) };
        })
        .catch(() => undefined)
        .finally(() => {
          if (this.loading === mine) this.loading = undefined;
        });
    }
    return (await loading.labels).map(copyLabel);
  }

  forget(): void {
    this.held = undefined;
    this.loading = undefined;
    this.generation += 1;
  }
}

function copyLabel(l: Label): Label {
  return { ...l, ...(l.color === undefined ? {} : { color: { ...l.color } }) };
}

/** The user label called `name` (Gmail compares label names without regard to case). */
export function labelNamed(labels: readonly Label[], name: string): Label | undefined {
  const lower = name.toLowerCase();
  return labels.find((l) => l.type === 'user' && l.name.toLowerCase() === lower);
}

/** Where the agent label goes for `change`: onto mail leaving the inbox, off mail coming back. */
export function agentLabelRole(change: LabelChange): 'add' | 'remove' | undefined {
  if (change.add.includes('INBOX')) return 'remove';
  // Spam and Trash carry none: Gmail searches them anyway, and a restore from them clears it.
  if (change.remove.includes('INBOX') && !change.add.some((l) => l === 'SPAM' || l === 'TRASH')) return 'add';
  return undefined;
}

/** `change` with the agent label `id` placed as `role` says. */
export function withAgentLabel(change: LabelChange, id: string, role: 'add' | 'remove'): LabelChange {
  if (role === 'add')
    return {
      add: change.add.includes(id) ? [...change.add] : [...change.add, id],
      remove: change.remove.filter((l) => l !== id),
    };
  if (change.add.includes(id)) return { add: [...change.add], remove: [...change.remove] };
  return {
    add: [...change.add],
    remove: change.remove.includes(id) ? [...change.remove] : [...change.remove, id],
  };
}

interface Waiting {
  ids: readonly string[];
  /** The same for every write of a gathering: both are in its key. */
  change: LabelChange;
  signal: AbortSignal | undefined;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Concurrent thread writes with the same change (and the same call's signal) become one
 * messages.batchModify per `max` ids: a call that archives ten threads writes them in one
 * request (gathered as ../gather.ts says). Each thread's promise settles with the request that
 * carried its ids; a thread is never split across requests unless it alone holds more than `max`
 * messages.
 */
export class WriteGatherer {
  private readonly gathering = new Gatherer<Waiting>((items) => void this.flush(items));
  private readonly signalIds = new WeakMap<AbortSignal, number>();
  private nextSignalId = 1;

  constructor(
    private readonly write: (ids: string[], change: LabelChange, signal?: AbortSignal) => Promise<void>,
    private readonly max: number,
  ) {}

  add(ids: readonly string[], change: LabelChange, signal?: AbortSignal, together = 0): Promise<void> {
    const key = `${JSON.stringify([change.add, change.remove])}#${this.signalKey(signal)}`;
    return new Promise<void>((resolve, reject) => {
      this.gathering.add(key, { ids, change, signal, resolve, reject }, together);
    });
  }

  private signalKey(signal: AbortSignal | undefined): number {
    if (signal === undefined) return 0;
    let id = this.signalIds.get(signal);
    if (id === undefined) {
      id = this.nextSignalId++;
      this.signalIds.set(signal, id);
    }
    return id;
  }

  private async flush(items: readonly Waiting[]): Promise<void> {
    const { change, signal } = items[0] as Waiting;
    // Whole threads per request, in the order they came; a thread larger than a request alone
    // takes as many as it needs and settles with the last of them.
    const requests: Array<{ ids: string[]; items: Waiting[] }> = [];
    const parts = new Map<Waiting, number>();
    let current: { ids: string[]; items: Waiting[] } | undefined;
    for (const item of items) {
      if (item.ids.length > this.max) {
        for (let i = 0; i < item.ids.length; i += this.max) {
          requests.push({ ids: item.ids.slice(i, i + this.max), items: [item] });
          parts.set(item, (parts.get(item) ?? 0) + 1);
        }
        continue;
      }
      if (current === undefined || current.ids.length + item.ids.length > this.max) {
        current = { ids: [], items: [] };
        requests.push(current);
      }
      current.ids.push(...item.ids);
      current.items.push(item);
      parts.set(item, 1);
    }
    const failed = new Map<Waiting, unknown>();
    for (const r of requests) {
      let error: { e: unknown } | undefined;
      try {
        if (r.ids.length > 0) await this.write(r.ids, change, signal);
      } catch (e) {
        error = { e };
      }
      for (const item of r.items) {
        if (error !== undefined && !failed.has(item)) failed.set(item, error.e);
        const left = (parts.get(item) ?? 1) - 1;
        parts.set(item, left);
        if (left > 0) continue;
        if (failed.has(item)) item.reject(failed.get(item));
        else item.resolve();
      }
    }
  }
}
