/**
 * Assembles threads of RFC 822 messages and tallies the facts while doing so. Dates are offsets
 * back from `now`, so a different `now` moves every date and changes nothing else.
 */
import type { SeedThread, SeedUser } from '../seed.js';
import {
  LIST_KEYS,
  SINGLE_KEYS,
  type DemoFacts,
  type DemoKeys,
  type ListKey,
  type SingleKey,
  type UnsubscribeFact,
} from './facts.js';
import { OWNER, USER_LABELS } from './people.js';
import { Rng } from './rng.js';
import {
  DAY,
  HOUR,
  MINUTE,
  SECOND,
  ThreadWriter,
  type ThreadHost,
  type ThreadOptions,
} from './thread-writer.js';

export { DAY, HOUR, MINUTE, SECOND, ThreadWriter } from './thread-writer.js';
export type { Box, Category, ReceiveSpec, SendSpec, ThreadOptions } from './thread-writer.js';

export class CorpusBuilder implements ThreadHost {
  readonly now: number;
  /** Ids, tokens and signatures: one stream consumed in thread order. */
  readonly ids = new Rng('mailwarden-demo/ids');
  private readonly threads: SeedThread[] = [];
  private readonly single = new Map<SingleKey, string>();
  private readonly lists = new Map<ListKey, string[]>(LIST_KEYS.map((k) => [k, []]));
  private readonly t = {
    messages: 0,
    sent: 0,
    inbox: 0,
    unreadInbox: 0,
    spam: 0,
    trash: 0,
    updates: 0,
    stale: [] as string[],
    trueUnreadUpdates: [] as string[],
    labels: new Map<string, number>(USER_LABELS.map((l) => [l.id, 0])),
    eightBit: [] as string[],
  };
  readonly unsubscribe: Record<string, UnsubscribeFact> = {};
  readonly expectedText: Record<string, { subject: string; body: string }> = {};
  dmarcFiles = { zip: '', gzip: '', xmlInZip: '' };

  constructor(now: number) {
    this.now = Math.floor(now / SECOND) * SECOND;
  }

  rng(theme: string): Rng {
    return new Rng(`mailwarden-demo/${theme}`);
  }

  /** A moment `days` (fractions allowed) plus hours/minutes before now, in whole seconds. */
  ago(days: number, hours = 0, minutes = 0): number {
    return this.now - Math.round((days * DAY + hours * HOUR + minutes * MINUTE) / SECOND) * SECOND;
  }

  thread(key: string, opts: ThreadOptions, build: (t: ThreadWriter) => void): string {
    if (this.threads.some((th) => th.key === key)) throw new Error(`duplicate thread key ${key}`);
    const w = new ThreadWriter(this, key, opts);
    build(w);
    if (w.messages.length === 0) throw new Error(`${key}: empty thread`);
    const anyUnread = w.unread.some(Boolean);
    if (opts.box === 'inbox' && w.deliveredCount === 0)
      throw new Error(`${key}: inbox thread without INBOX mail`);
    if (opts.box === 'sent' && opts.category) throw new Error(`${key}: sent-only threads have no category`);
    const t = this.t;
    t.messages += w.messages.length;
    t.sent += w.sentCount;
    if (opts.box === 'inbox') t.inbox++;
    if (opts.box === 'inbox' && anyUnread) t.unreadInbox++;
    if (opts.box === 'spam') t.spam++;
    if (opts.box === 'trash') t.trash++;
    if (opts.category === 'CATEGORY_UPDATES') {
      if (opts.box !== 'inbox') throw new Error(`${key}: updates threads live in INBOX`);
      t.updates++;
      if (anyUnread) t.trueUnreadUpdates.push(key);
    }
    if (opts.staleIndexUnread) {
      if (opts.category !== 'CATEGORY_UPDATES' || anyUnread)
        throw new Error(`${key}: stale set is read updates`);
      t.stale.push(key);
    }
    for (const l of opts.labels ?? []) {
      const n = t.labels.get(l);
      if (n === undefined) throw new Error(`${key}: unknown label ${l}`);
      t.labels.set(l, n + 1);
    }
    const thread: SeedThread = { key, messages: w.messages };
    if (opts.staleIndexUnread) thread.staleIndexUnread = true;
    this.threads.push(thread);
    return key;
  }

  mark(name: SingleKey, key: string): string {
    if (this.single.has(name)) throw new Error(`key ${name} set twice`);
    this.single.set(name, key);
    return key;
  }

  add(name: ListKey, key: string): string {
    this.lists.get(name)?.push(key);
    return key;
  }

  eightBit(key: string): void {
    this.t.eightBit.push(key);
  }

  finish(): { user: SeedUser; facts: DemoFacts } {
    const keys = {} as Record<string, string | string[]>;
    for (const k of SINGLE_KEYS) {
      const v = this.single.get(k);
      if (v === undefined) throw new Error(`scenario ${k} missing`);
      keys[k] = v;
    }
    for (const k of LIST_KEYS) {
      const v = this.lists.get(k) ?? [];
      if (v.length === 0) throw new Error(`scenario list ${k} empty`);
      keys[k] = v;
    }
    const t = this.t;
    const facts: DemoFacts = {
      address: OWNER.email,
      now: this.now,
      threadCount: this.threads.length,
      messageCount: t.messages,
      sentMessageCount: t.sent,
      inboxThreadCount: t.inbox,
      unreadInboxThreadCount: t.unreadInbox,
      spamThreadCount: t.spam,
      trashThreadCount: t.trash,
      updatesThreadCount: t.updates,
      staleUnreadKeys: t.stale,
      trueUnreadUpdatesKeys: t.trueUnreadUpdates,
      labelThreadCounts: Object.fromEntries(t.labels),
      keys: keys as DemoKeys,
      eightBitHeaderKeys: t.eightBit,
      unsubscribe: this.unsubscribe,
      expectedText: this.expectedText,
      dmarcFiles: this.dmarcFiles,
    };
    return {
      user: { email: OWNER.email, userLabels: USER_LABELS.map((l) => ({ ...l })), threads: this.threads },
      facts,
    };
  }
}
