import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * An account's first list_new_mail (no mark yet) reads INBOX's oldest messages by sequence
 * number after its EXAMINE (src/providers/imap/arrivals.ts): no SEARCH goes out, and the page,
 * its order, the total and the mark mark_handled then sets are what the UIDs in the mailbox say,
 * also when expunged messages left gaps among the UIDs. The gate (check_new_mail) answers the
 * count and the newest UID the same way.
 */

interface Listing {
  total: number;
  more: boolean;
  messages: Array<{ uid: number; messageId: string }>;
  markHandled?: { uid?: number };
}

async function inboxUids(b: Backend): Promise<number[]> {
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  const out = await server.doveadm(['fetch', '-u', server.user, 'uid', 'mailbox', 'INBOX', 'all']);
  return [...out.matchAll(/^uid: (\d+)$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b);
}

describe.each(['full', 'bridge'] as const)('the first listing on the %s profile', (kind) => {
  let b: Backend;
  beforeAll(async () => {
    // Full: a recording proxy shows the commands; Bridge-like: its front end records them.
    b = await startBackend(kind, kind === 'full' ? { recordWrites: true } : { delayMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('lists the oldest messages by position, without a SEARCH, across UID gaps', async () => {
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    const before = await inboxUids(b);
    expect(before.length).toBeGreaterThan(20);
    // Gaps where the page is read: the 1st, 3rd and 4th oldest are expunged by another client.
    for (const uid of [before[0], before[2], before[3]])
      await server.doveadm(['expunge', '-u', server.user, 'mailbox', 'INBOX', 'uid', String(uid)]);
    const uids = await inboxUids(b);
    expect(uids).toHaveLength(before.length - 3);

    const from = b.commands().length;
    const r = await b.call('list_new_mail', { limit: 6 });
    expect(r.isError, r.text).toBe(false);
    const sent = b.commands().slice(from);
    const l = r.structured as unknown as Listing;
    expect(l.messages.map((m) => m.uid)).toEqual(uids.slice(0, 6));
    expect(l.total).toBe(uids.length);
    expect(l.more).toBe(true);
    expect(l.markHandled).toEqual({ uid: uids[5] });
    expect(sent.filter((c) => /SEARCH/i.test(c))).toEqual([]);
    expect(sent.filter((c) => /^(UID )?FETCH /i.test(c)).map((c) => c.slice(0, 10))).toEqual(['FETCH 1:6 ']);

    // The gate: the count and the newest UID, without a SEARCH either.
    const gateFrom = b.commands().length;
    const gate = await b.call('check_new_mail', {});
    expect(gate.isError, gate.text).toBe(false);
    expect(gate.structured).toMatchObject({ wake: true, found: uids.length, newest: { uid: uids.at(-1) } });
    expect(
      b
        .commands()
        .slice(gateFrom)
        .filter((c) => /SEARCH/i.test(c)),
    ).toEqual([]);

    // The mark mark_handled sets from the listing, and the listing after it.
    const m = await b.call('mark_handled', l.markHandled ?? {});
    expect(m.isError, m.text).toBe(false);
    expect(m.structured['mark']).toMatchObject({ provider: 'imap', uid: uids[5] });
    const next = (await b.call('list_new_mail', { limit: 3 })).structured as unknown as Listing;
    expect(next.messages.map((x) => x.uid)).toEqual(uids.slice(6, 9));
    expect(next.total).toBe(uids.length - 6);
  }, 120_000);
});

describe('a message expunged between the EXAMINE and the FETCH by number', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('is left out: after a NOOP the page is read again by number, and says what the mailbox holds', async () => {
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    const front = (b.imap as NonNullable<Backend['imap']>).proxy as NonNullable<
      NonNullable<Backend['imap']>['proxy']
    >;
    const before = await inboxUids(b);
    // The front end holds each command a second before Dovecot sees it: another client expunges
    // the second oldest message while the FETCH by number waits.
    front.setDelay(1000);
    const from = front.commands().length;
    const call = b.call('list_new_mail', { limit: 6 });
    try {
      while (
        !front
          .commands()
          .slice(from)
          .some((c) => /^\S+ FETCH 1:6 /.test(c.text))
      )
        await new Promise((r) => setTimeout(r, 10));
      await server.doveadm(['expunge', '-u', server.user, 'mailbox', 'INBOX', 'uid', String(before[1])]);
    } finally {
      await call.catch(() => undefined);
      front.setDelay(0);
    }
    const r = await call;
    expect(r.isError, r.text).toBe(false);
    const sent = front.commands().slice(from);
    // The race was staged: Dovecot answered the FETCH by number for a message it had expunged.
    expect(sent.find((c) => /^\S+ FETCH 1:6 /.test(c.text))?.answer).toMatch(/EXPUNGEISSUED/);
    expect(sent.map((c) => c.text.replace(/^\S+ /, '').slice(0, 10)).slice(-3)).toEqual([
      'FETCH 1:6 ',
      'NOOP',
      'FETCH 1:6 ',
    ]);
    const uids = await inboxUids(b);
    expect(uids).toEqual(before.filter((u) => u !== before[1]));
    const l = r.structured as unknown as Listing;
    expect(l.messages.map((m) => m.uid)).toEqual(uids.slice(0, 6));
    expect(l.total).toBe(uids.length);
  }, 60_000);
});
