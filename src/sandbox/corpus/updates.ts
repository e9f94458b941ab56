/**
 * CATEGORY_UPDATES notifications, built for the measured Gmail behaviour where threads.list
 * answers is:unread from stale per-thread state: 40 read threads flagged staleIndexUnread, and
 * 12 threads that really hold an unread message — several only on a later message.
 */
import { alignedAuth } from './auth.js';
import { HOUR, type CorpusBuilder } from './builder.js';
import { plain, type Header, type Person } from './mime.js';
import { MARLOWE, NORTHWIND, SERVICES, SHOPS } from './people.js';
import type { Rng } from './rng.js';

interface Note {
  from: Person;
  subject: string;
  body: string;
  headers?: Header[];
}

const auto: Header[] = [['Auto-Submitted', 'auto-generated']];
const gf = SERVICES.gitforge;
const gfHeaders = (repo: string, reason: string): Header[] => [
  ['List-ID', `${repo} <${repo.replace('/', '.')}.gitforge.example>`],
  ['X-GitForge-Reason', reason],
  ...auto,
];

/** Each template yields the notifications of one thread, oldest first. */
const TEMPLATES: Array<(n: number, r: Rng) => Note[]> = [
  (n, r) => {
    const sha = r.hex(7);
    return [
      {
        from: gf,
        subject: `[brightfold/atlas] Run failed: nightly-tests - main (${sha})`,
        body: `Run #${1800 + n} failed in 14m 02s.\n\nFailed job: integration (shard ${r.int(1, 4)} of 4)\n  export_test.go:212: timeout after 30s\n\nView the run: https://gitforge.example/brightfold/atlas/runs/${1800 + n}\n`,
        headers: gfHeaders('brightfold/atlas', 'ci_activity'),
      },
    ];
  },
  (n, r) => {
    const pr = 400 + n;
    const title = r.pick([
      'Add retry to export job',
      'Paginate the audit log endpoint',
      'Drop the legacy CSV importer',
      'Cache tenant settings',
    ]);
    const subject = `[brightfold/atlas] ${title} (PR #${pr})`;
    return [
      {
        from: gf,
        subject,
        body: `@tomasf requested your review on #${pr}.\n\n${title}\n\nhttps://gitforge.example/brightfold/atlas/pull/${pr}\n`,
        headers: gfHeaders('brightfold/atlas', 'review_requested'),
      },
      {
        from: { ...gf, name: 'Oskar Lindqvist' },
        subject: `Re: ${subject}`,
        body: `@oskarl commented on this pull request.\n\nLooks good, one nit on the error message.\n\nhttps://gitforge.example/brightfold/atlas/pull/${pr}#comment-${r.int(1000, 9999)}\n`,
        headers: gfHeaders('brightfold/atlas', 'comment'),
      },
      {
        from: gf,
        subject: `Re: ${subject}`,
        body: `Merged #${pr} into main.\n\nhttps://gitforge.example/brightfold/atlas/pull/${pr}\n`,
        headers: gfHeaders('brightfold/atlas', 'state_change'),
      },
    ];
  },
  (n) => {
    const subject = `[brightfold/atlas] Export times out for large tenants (Issue #${300 + n})`;
    return [
      {
        from: { ...gf, name: 'Grace Adeyemi' },
        subject,
        body: `Exports for tenants with more than 1M rows time out after 60 seconds.\n\nhttps://gitforge.example/brightfold/atlas/issues/${300 + n}\n`,
        headers: gfHeaders('brightfold/atlas', 'subscribed'),
      },
      {
        from: { ...gf, name: 'Ravi Menon' },
        subject: `Re: ${subject}`,
        body: `I can reproduce this with the staging dataset. Streaming the rows fixes it locally.\n`,
        headers: gfHeaders('brightfold/atlas', 'comment'),
      },
    ];
  },
  (n, r) => [
    {
      from: SERVICES.cloudnest,
      subject: `Your CloudNest invoice CN-${880000 + n * 7} is available`,
      body: `Invoice CN-${880000 + n * 7}\nPlan: Family 2 TB\nAmount: EUR ${r.int(9, 10)}.99\n\nView it at https://cloudnest.example/billing\n`,
      headers: auto,
    },
  ],
  (n, r) => [
    {
      from: SERVICES.linkmesh,
      subject: `New sign-in to your Linkmesh account from ${r.pick(['Firefox on Linux', 'Safari on iPhone', 'Chrome on Windows'])}`,
      body: `We noticed a new sign-in to your account (ref ${n}${r.hex(4)}).\nIf this was you, there is nothing to do. If not, change your password at https://linkmesh.example/security\n`,
      headers: auto,
    },
  ],
  (n, r) => [
    {
      from: { name: 'Voltline Energy', email: 'billing@voltline.example' },
      subject: `Your energy bill is ready (account 55-${2200 + n})`,
      body: `Your latest bill is ready.\nAmount: EUR ${r.int(80, 140)}.${r.int(10, 99)}\nIt will be collected by direct debit in 10 days.\n\nhttps://voltline.example/account\n`,
    },
  ],
  (n) => {
    const order = `HG-${51000 + n * 13}`;
    return [
      {
        from: SHOPS.hearth,
        subject: `Order ${order}: picked and packed`,
        body: `Your groceries for order ${order} have been picked. 2 items were substituted.\n`,
      },
      {
        from: SHOPS.hearth,
        subject: `Order ${order}: out for delivery`,
        body: `Your driver is on the way. Delivery slot: 18:00 to 19:00.\n`,
      },
      {
        from: SHOPS.hearth,
        subject: `Order ${order}: delivered`,
        body: `Your order ${order} was delivered. Enjoy!\n`,
      },
    ];
  },
  (n) => [
    {
      from: SHOPS.larkfield,
      subject: `Check-in is now open for LF ${200 + n}`,
      body: `Check in online for flight LF ${200 + n} and choose your seat.\nhttps://larkfield-air.example/checkin\n`,
      headers: auto,
    },
  ],
  (n, r) => [
    {
      from: SERVICES.calendly,
      subject: `New booking: 30 min intro call with ${r.pick(['Ada Brenner', 'Luis Ortega', 'Mia Sørensen', 'Kofi Mensah'])}`,
      body: `A new event was booked on your SlotPicker page (booking ${n}${r.hex(3)}).\nAdd it to your calendar from https://slotpicker.example/bookings\n`,
      headers: auto,
    },
  ],
  (n, r) => [
    {
      from: NORTHWIND.alerts,
      subject: `Online payment of EUR ${r.int(5, 90)}.${r.int(10, 99)} with card ending 0917`,
      body: `A payment was made online with your card ending 0917 (ref ${n}${r.hex(5)}).\nIf you do not recognise it, call us on the number on your card.\n`,
    },
  ],
  (n) => [
    {
      from: { name: 'Skyline Mobile', email: 'bills@skyline-mobile.example' },
      subject: `Your Skyline Mobile bill ${7100 + n} is ready`,
      body: 'Your monthly bill is ready to view in the app. No action is needed if you pay by direct debit.\n',
      headers: auto,
    },
  ],
  (n) => {
    const ref = `MF-${21000 + n * 3}-11`;
    return [
      {
        from: MARLOWE.tracking,
        subject: `Shipment ${ref} is on its way`,
        body: `Your shipment ${ref} left our hub.\nTrack it at https://www.marlowefreight.com/track/${ref}\n`,
      },
      {
        from: MARLOWE.tracking,
        subject: `Shipment ${ref} was delivered`,
        body: `Shipment ${ref} was delivered to your safe place.\n`,
      },
    ];
  },
  (n) => [
    {
      from: { name: 'Ashby Library', email: 'no-reply@ashby-library.example' },
      subject: `Items due back in 3 days (${1 + (n % 4)} items)`,
      body: 'Renew online at https://ashby-library.example/account or return them to any branch.\n',
      headers: auto,
    },
  ],
];

/** Template indexes with two or more messages, and with three. */
const MULTI = [1, 2, 6, 11];
const TRIPLE = [1, 6];

function notes(rng: Rng, n: number, shape: 'any' | 'multi' | 'triple'): Note[] {
  const idx =
    shape === 'any' ? rng.int(0, TEMPLATES.length - 1) : rng.pick(shape === 'multi' ? MULTI : TRIPLE);
  return (TEMPLATES[idx] as (n: number, r: Rng) => Note[])(n, rng);
}

function writeThread(
  b: CorpusBuilder,
  key: string,
  list: Note[],
  days: number,
  unread: boolean[],
  stale: boolean,
): string {
  return b.thread(
    key,
    { box: 'inbox', category: 'CATEGORY_UPDATES', ...(stale ? { staleIndexUnread: true } : {}) },
    (t) =>
      list.forEach((note, i) =>
        t.receive({
          from: note.from,
          // `days` is when the newest arrives; the earlier ones came five hours apart before it.
          at: b.ago(days) - (list.length - 1 - i) * 5 * HOUR,
          subject: note.subject,
          body: plain(note.body),
          ...(note.headers ? { headers: note.headers } : {}),
          auth: alignedAuth(note.from.email),
          unread: unread[i] ?? false,
        }),
      ),
  );
}

export const STALE_COUNT = 40;
export const TRUE_UNREAD_COUNT = 12;

export function addUpdates(b: CorpusBuilder): void {
  const rng = b.rng('updates');
  for (let i = 0; i < STALE_COUNT; i++) {
    // A quarter in the last week, the rest spread over four months.
    const days = i % 4 === 0 ? 0.8 + rng.next() * 6 : 7 + rng.next() * 110;
    const list = notes(rng, i, 'any');
    writeThread(
      b,
      `upd-stale-${String(i + 1).padStart(2, '0')}`,
      list,
      days,
      list.map(() => false),
      true,
    );
  }
  // Unread patterns: all messages x4 (any template), only the newest x4, only the middle of three
  // x2 (the newest is read), all of several x2.
  for (let i = 0; i < TRUE_UNREAD_COUNT; i++) {
    const list = notes(rng, 100 + i, i < 4 ? 'any' : i >= 8 && i < 10 ? 'triple' : 'multi');
    const unread = list.map((_, j) => {
      if (i < 4) return true;
      if (i < 8) return j === list.length - 1;
      if (i < 10) return j === 1;
      return true;
    });
    const days = 0.3 + rng.next() * (i < 8 ? 5 : 20);
    writeThread(b, `upd-unread-${String(i + 1).padStart(2, '0')}`, list, days, unread, false);
  }
}
