import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import {
  DEMO_ADDRESS,
  DEMO_FACTS,
  DEFAULT_NOW,
  LIST_KEYS,
  SINGLE_KEYS,
  USER_LABELS,
  demoCorpus,
} from '../../../src/sandbox/corpus/index.js';
import type { SeedThread } from '../../../src/sandbox/seed.js';
import { anyHas, has, header, headerAll, headersOf, lastOf, threadByKey } from './helpers.js';

const DAY = 86_400_000;
const user = demoCorpus();
const all = user.threads;
const messages = all.flatMap((t) => t.messages.map((m) => ({ t, m })));
const isStaleSet = (t: SeedThread): boolean => t.staleIndexUnread === true;

describe('demo corpus: shape', () => {
  it('belongs to the demo address and has at least 200 threads', () => {
    expect(DEMO_ADDRESS).toBe('you@mailwarden.example');
    expect(user.email).toBe(DEMO_ADDRESS);
    expect(all.length).toBeGreaterThanOrEqual(200);
    expect(new Set(all.map((t) => t.key)).size).toBe(all.length);
  });

  it('is deterministic', () => {
    expect(demoCorpus()).toEqual(user);
    expect(demoCorpus({ now: DEFAULT_NOW })).toEqual(user);
  });

  it('moves only dates when now moves', () => {
    const delta = 3 * DAY + 17 * 60_000 + 5_000;
    const other = demoCorpus({ now: DEFAULT_NOW + delta });
    expect(other.threads.map((t) => t.key)).toEqual(all.map((t) => t.key));
    other.threads.forEach((t, i) => {
      const mine = all[i] as SeedThread;
      expect(t.staleIndexUnread).toBe(mine.staleIndexUnread);
      expect(t.messages.length).toBe(mine.messages.length);
      t.messages.forEach((m, j) => {
        const o = mine.messages[j];
        if (!o) throw new Error('missing message');
        expect(m.internalDate - o.internalDate).toBe(delta);
        expect(m.labelIds).toEqual(o.labelIds);
        for (const name of ['Message-ID', 'Subject', 'From', 'To', 'Content-Type']) {
          expect(header(m.raw, name), `${t.key} ${name}`).toBe(header(o.raw, name));
        }
      });
    });
  });

  it('writes every message as CRLF bytes with Message-ID, matching Date and MIME-Version', () => {
    for (const { t, m } of messages) {
      expect(m.raw, t.key).not.toMatch(/[^\r]\n|\r(?!\n)/);
      expect(m.raw, t.key).not.toMatch(/[\u0100-\uffff]/);
      expect(header(m.raw, 'Message-ID'), t.key).toMatch(/^<[^<>@\s]+@[^<>@\s]+>$/);
      expect(Date.parse(header(m.raw, 'Date') ?? ''), t.key).toBe(m.internalDate);
      expect(header(m.raw, 'MIME-Version'), t.key).toBe('1.0');
      expect(header(m.raw, 'Content-Type'), t.key).toBeTruthy();
      expect(header(m.raw, 'Subject'), t.key).toBeDefined();
      for (const line of m.raw.split('\r\n')) expect(line.length, t.key).toBeLessThanOrEqual(998);
    }
  });

  it('keeps headers 7-bit except in the deliberate cases', () => {
    const eight = new Set<string>();
    for (const { t, m } of messages) {
      const block = m.raw.slice(0, m.raw.indexOf('\r\n\r\n'));
      if (/[\x80-\xff]/.test(block)) eight.add(t.key);
    }
    expect([...eight].sort()).toEqual([...DEMO_FACTS.eightBitHeaderKeys].sort());
    expect(DEMO_FACTS.eightBitHeaderKeys).toContain(DEMO_FACTS.keys.lookalikePhish);
    expect(DEMO_FACTS.eightBitHeaderKeys).toContain(DEMO_FACTS.keys.raw8bitHeader);
  });

  it('puts Gmail authentication results on top of received mail and none on sent mail', () => {
    for (const { t, m } of messages) {
      const names = headersOf(m.raw).map((h) => h.name.toLowerCase());
      const ar = names.indexOf('authentication-results');
      if (has(m, 'SENT')) {
        expect(ar, t.key).toBe(-1);
        expect(names, t.key).not.toContain('received');
        continue;
      }
      expect(names, t.key).toContain('received');
      if (DEMO_FACTS.keys.notViaSmtp.includes(t.key)) {
        // Fetched over POP or imported: Gmail's MX never saw it, so no report of Gmail's is on top.
        expect(headerAll(m.raw, 'Authentication-Results')[0] ?? '', t.key).not.toMatch(
          /^mx\.google\.com[\s;]/,
        );
        continue;
      }
      expect(ar, t.key).toBeGreaterThan(-1);
      expect(ar, t.key).toBeLessThan(names.indexOf('from'));
      expect(headerAll(m.raw, 'Authentication-Results')[0], t.key).toMatch(/^mx\.google\.com( 1)?;/);
    }
  });

  it('parses with mailparser: sender, date and some text in every message', async () => {
    for (const { t, m } of messages) {
      const mail = await simpleParser(Buffer.from(m.raw, 'latin1'));
      expect(mail.from?.value[0]?.address, t.key).toContain('@');
      expect(mail.date?.getTime(), t.key).toBe(m.internalDate);
      // Issue 10, class 5, on purpose: the root-attachment case is one attached file and nothing else, and
      // mailparser reads a root message/rfc822 as an empty body (mailwarden shows the inner one).
      if (t.key !== DEMO_FACTS.keys.rootAttachment && t.key !== DEMO_FACTS.keys.rootEmbeddedMessage)
        expect((mail.text ?? '') + String(mail.html || ''), t.key).not.toBe('');
    }
  });

  it('dates threads over about 120 days, increasing, with a good share in the last week', () => {
    const now = DEMO_FACTS.now;
    expect(now).toBe(DEFAULT_NOW);
    for (const t of all) {
      t.messages.forEach((m, i) => {
        expect(m.internalDate).toBeLessThan(now);
        expect(m.internalDate).toBeGreaterThan(now - 125 * DAY);
        if (i > 0) expect(m.internalDate).toBeGreaterThan((t.messages[i - 1] ?? m).internalDate);
      });
    }
    const lasts = all.map((t) => now - lastOf(t).internalDate);
    expect(Math.max(...lasts)).toBeGreaterThan(100 * DAY);
    expect(lasts.filter((d) => d < 7 * DAY).length / all.length).toBeGreaterThan(0.3);
  });
});

describe('demo corpus: facts', () => {
  it('names a thread for every scenario key', () => {
    const keys = new Set(all.map((t) => t.key));
    for (const k of SINGLE_KEYS) expect(keys.has(DEMO_FACTS.keys[k]), k).toBe(true);
    for (const k of LIST_KEYS) {
      const list = DEMO_FACTS.keys[k];
      expect(list.length, k).toBeGreaterThan(0);
      expect(new Set(list).size, k).toBe(list.length);
      for (const key of list) expect(keys.has(key), `${k}: ${key}`).toBe(true);
    }
  });

  it('counts what the labels say', () => {
    const f = DEMO_FACTS;
    expect(f.address).toBe(DEMO_ADDRESS);
    expect(f.threadCount).toBe(all.length);
    expect(f.messageCount).toBe(messages.length);
    expect(f.sentMessageCount).toBe(messages.filter(({ m }) => has(m, 'SENT')).length);
    const inbox = all.filter((t) => anyHas(t, 'INBOX'));
    expect(f.inboxThreadCount).toBe(inbox.length);
    expect(f.unreadInboxThreadCount).toBe(inbox.filter((t) => anyHas(t, 'UNREAD')).length);
    expect(f.spamThreadCount).toBe(all.filter((t) => anyHas(t, 'SPAM')).length);
    expect(f.trashThreadCount).toBe(all.filter((t) => anyHas(t, 'TRASH')).length);
    const updates = all.filter((t) => anyHas(t, 'CATEGORY_UPDATES'));
    expect(f.updatesThreadCount).toBe(updates.length);
    for (const t of updates) expect(anyHas(t, 'INBOX'), t.key).toBe(true);
    for (const l of USER_LABELS) {
      expect(f.labelThreadCounts[l.id], l.name).toBe(all.filter((t) => anyHas(t, l.id)).length);
    }
    const known = new Set([
      'INBOX',
      'UNREAD',
      'STARRED',
      'IMPORTANT',
      'SENT',
      'SPAM',
      'TRASH',
      ...USER_LABELS.map((l) => l.id),
    ]);
    for (const { t, m } of messages) {
      for (const l of m.labelIds)
        expect(known.has(l) || l.startsWith('CATEGORY_'), `${t.key} ${l}`).toBe(true);
      expect(has(m, 'SPAM') && has(m, 'INBOX'), t.key).toBe(false);
    }
  });

  it('has 40 read threads with a stale unread index and 12 truly unread updates', () => {
    const stale = all.filter(isStaleSet);
    expect(stale.map((t) => t.key)).toEqual(DEMO_FACTS.staleUnreadKeys);
    expect(stale).toHaveLength(40);
    for (const t of stale) {
      expect(anyHas(t, 'CATEGORY_UPDATES') && anyHas(t, 'INBOX'), t.key).toBe(true);
      expect(anyHas(t, 'UNREAD'), t.key).toBe(false);
    }
    const trulyUnread = all.filter(
      (t) => anyHas(t, 'CATEGORY_UPDATES') && anyHas(t, 'INBOX') && anyHas(t, 'UNREAD'),
    );
    expect(trulyUnread.map((t) => t.key)).toEqual(DEMO_FACTS.trueUnreadUpdatesKeys);
    expect(trulyUnread).toHaveLength(12);
    const laterOnly = trulyUnread.filter((t) => !has(t.messages[0] ?? lastOf(t), 'UNREAD'));
    expect(laterOnly.length).toBeGreaterThanOrEqual(4);
    expect(laterOnly.some((t) => !has(lastOf(t), 'UNREAD'))).toBe(true);
  });

  it('keeps unread mail in the inbox realistic outside the stale set', () => {
    const inbox = all.filter((t) => anyHas(t, 'INBOX') && !isStaleSet(t));
    const share = inbox.filter((t) => anyHas(t, 'UNREAD')).length / inbox.length;
    expect(share).toBeGreaterThan(0.22);
    expect(share).toBeLessThan(0.38);
  });

  it('lists exactly the threads where the owner wrote last, 3 to 20 days ago, to someone else', () => {
    const now = DEMO_FACTS.now;
    const waiting = all.filter((t) => {
      const last = lastOf(t);
      const age = now - last.internalDate;
      const toSelf = (header(last.raw, 'To') ?? '').includes(DEMO_ADDRESS);
      return has(last, 'SENT') && !toSelf && age >= 3 * DAY && age <= 20 * DAY;
    });
    expect(waiting.map((t) => t.key).sort()).toEqual([...DEMO_FACTS.keys.awaitingReplyFromOwner].sort());
    const note = lastOf(threadByKey(user, DEMO_FACTS.keys.noteToSelf));
    expect(has(note, 'SENT') && has(note, 'INBOX')).toBe(true);
    expect(header(note.raw, 'To')).toContain(DEMO_ADDRESS);
    const age = now - note.internalDate;
    expect(age > 3 * DAY && age < 20 * DAY).toBe(true);
    for (const key of DEMO_FACTS.keys.awaitingOwnerReply) {
      const last = lastOf(threadByKey(user, key));
      expect(has(last, 'SENT'), key).toBe(false);
      expect(has(last, 'INBOX'), key).toBe(true);
      expect(header(last.raw, 'Auto-Submitted'), key).toBeUndefined();
    }
  });

  it('puts the spam-that-is-not-spam, the real spam and the trash where they belong', () => {
    const k = DEMO_FACTS.keys;
    for (const key of [...k.spamNotSpam, ...k.realSpam]) {
      const t = threadByKey(user, key);
      expect(
        t.messages.every((m) => has(m, 'SPAM') && !has(m, 'INBOX')),
        key,
      ).toBe(true);
    }
    for (const key of k.trashed)
      expect(
        threadByKey(user, key).messages.every((m) => has(m, 'TRASH')),
        key,
      ).toBe(true);
    const plumber = header(threadByKey(user, 'notspam-plumber-invoice').messages[0]?.raw ?? '', 'From') ?? '';
    const earlier = all.filter((t) =>
      t.messages.some((m) => has(m, 'SENT') && (header(m.raw, 'To') ?? '').includes('kettleandsons')),
    );
    expect(plumber).toContain('kettleandsons');
    expect(earlier.length).toBeGreaterThan(0);
  });
});
