import type { Clock } from '../mail/clock.js';

/** Quota units per call, from Google's Gmail API usage-limits page (see docs/facts.md). */
export const QUOTA_UNITS: Readonly<Record<string, number>> = {
  getProfile: 1,
  'labels.list': 1,
  'labels.get': 1,
  'labels.create': 5,
  'labels.update': 5,
  'labels.patch': 5,
  'labels.delete': 5,
  'messages.list': 5,
  'messages.get': 5,
  'messages.modify': 5,
  'messages.trash': 5,
  'messages.untrash': 5,
  'messages.batchModify': 50,
  'messages.attachments.get': 5,
  'history.list': 2,
  'settings.filters.list': 1,
  'settings.filters.get': 1,
  'settings.filters.create': 5,
  'settings.filters.delete': 5,
  'drafts.create': 10,
  'threads.list': 10,
  'threads.get': 10,
  'threads.modify': 10,
  'threads.trash': 10,
  'threads.untrash': 10,
};

const WINDOW_MS = 60_000;

interface Spend {
  at: number;
  units: number;
}

/**
 * Per-user budget over a rolling minute of the sandbox clock (Google documents a per-minute
 * budget without saying how the minute is cut; a rolling window is the stricter reading).
 */
export class QuotaMeter {
  private readonly spends = new Map<string, Spend[]>();

  constructor(
    private readonly clock: Clock,
    private readonly unitsPerMinute: number,
  ) {}

  /** Charges the units, or says how many whole seconds until enough of the window frees up. */
  charge(user: string, units: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.clock.now();
    const list = (this.spends.get(user) ?? []).filter((s) => s.at > now - WINDOW_MS);
    this.spends.set(user, list);
    const used = list.reduce((sum, s) => sum + s.units, 0);
    // A call dearer than the whole budget still runs on an empty window, or it could never run.
    if (used + units <= this.unitsPerMinute || used === 0) {
      list.push({ at: now, units });
      return { ok: true };
    }
    let freed = 0;
    let freeAt = now + WINDOW_MS;
    for (const s of list) {
      freed += s.units;
      if (used - freed + units <= this.unitsPerMinute) {
        freeAt = s.at + WINDOW_MS;
        break;
      }
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now) / 1000)) };
  }
}
