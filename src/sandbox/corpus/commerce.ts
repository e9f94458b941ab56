/**
 * Everyday commercial mail: receipts (some with a PDF), shipping updates, travel bookings and
 * promotions, across CATEGORY_UPDATES / PROMOTIONS and the Receipts and Travel labels.
 */
import { pdfDocument } from './archives.js';
import { alignedAuth } from './auth.js';
import { HOUR, type CorpusBuilder } from './builder.js';
import { alternative, attachment, html, mixed, plain, type Person } from './mime.js';
import { listHeaders, newsletterBody, registerList, type Unsub } from './newsletter-kit.js';
import { LABELS, MARLOWE, SHOPS } from './people.js';

const money = (cents: number): string => `EUR ${(cents / 100).toFixed(2)}`;

const RECEIPT_SHOPS: Array<{ shop: Person; items: string[]; pdf: boolean }> = [
  { shop: SHOPS.cobble, items: ['Linen tea towels (2)', 'Oak serving board', 'Stoneware mug'], pdf: true },
  { shop: SHOPS.tidewater, items: ['"Tide Tables" (hardback)', 'Gift wrap'], pdf: false },
  { shop: SHOPS.hearth, items: ['Weekly shop', 'Delivery fee'], pdf: false },
  {
    shop: { name: 'Appvault', email: 'receipts@appvault.example', tz: -480 },
    items: ['PixelNote Pro (1 year)'],
    pdf: false,
  },
  {
    shop: { name: 'Cinema Lumière', email: 'tickets@cinema-lumiere.example', tz: 60 },
    items: ['2 x Adult, Screen 3', 'Booking fee'],
    pdf: true,
  },
  {
    shop: { name: 'Greenway Pharmacy', email: 'orders@greenway-pharmacy.example', tz: 0 },
    items: ['Allergy tablets', 'Plasters'],
    pdf: false,
  },
  {
    shop: { name: 'City Parking', email: 'no-reply@cityparking.example', tz: 0 },
    items: ['Parking, Canal Street car park, 3 h'],
    pdf: true,
  },
  {
    shop: { name: 'Railway Ticket Office', email: 'etickets@rail-tickets.example', tz: 0 },
    items: ['Ashby to Brackwell, return'],
    pdf: true,
  },
  { shop: SHOPS.cobble, items: ['Wool throw, moss'], pdf: true },
  {
    shop: { name: 'Bikeworks Repairs', email: 'hello@bikeworks.example', tz: 0 },
    items: ['Service: brakes and gears', 'Inner tube'],
    pdf: false,
  },
];

export function addCommerce(b: CorpusBuilder): void {
  const rng = b.rng('commerce');

  RECEIPT_SHOPS.forEach((r, i) => {
    const order = `${r.shop.name.slice(0, 2).toUpperCase()}-${rng.int(10000, 99999)}`;
    const lines = r.items.map((item) => [item, rng.int(250, 6500)] as const);
    const total = lines.reduce((sum, [, c]) => sum + c, 0);
    const text = `Thank you for your purchase.\n\nOrder ${order}\n${lines.map(([n, c]) => `${n.padEnd(40)} ${money(c)}`).join('\n')}\n${'Total'.padEnd(40)} ${money(total)}\n\nPaid with card ending 0917.\n`;
    const rows = lines
      .map(([n, c]) => `<tr><td>${n.replace(/&/g, '&amp;')}</td><td align="right">${money(c)}</td></tr>`)
      .join('');
    const view = alternative(
      plain(text),
      html(
        `<h2>Thank you for your purchase</h2><p>Order ${order}</p><table>${rows}<tr><td><b>Total</b></td><td align="right"><b>${money(total)}</b></td></tr></table>`,
      ),
    );
    const body = r.pdf
      ? mixed(
          view,
          attachment(
            `receipt-${order}.pdf`,
            'application/pdf',
            pdfDocument([r.shop.name, `Receipt ${order}`, `Total ${money(total)}`]),
          ),
        )
      : view;
    const days = i < 3 ? 0.5 + i * 1.7 : 8 + i * 10.5;
    b.thread(
      `receipt-${i + 1}`,
      { box: 'inbox', category: 'CATEGORY_UPDATES', labels: [LABELS.receipts] },
      (t) =>
        t.receive({
          from: r.shop,
          at: b.ago(days, rng.int(0, 9)),
          subject: `Your receipt for order ${order}`,
          body,
        }),
    );
  });

  // Shipping: a label, then scans, in one thread per shipment.
  const carriers: Person[] = [
    MARLOWE.tracking,
    { name: 'Parcelly', email: 'updates@parcelly.example', tz: 0 },
  ];
  for (let i = 0; i < 6; i++) {
    const carrier = carriers[i % 2] as Person;
    const ref =
      carrier === MARLOWE.tracking
        ? `MF-${rng.int(30000, 39999)}-${rng.int(10, 99)}`
        : `PCL${rng.int(1000000, 9999999)}`;
    const steps = ['has been dispatched', 'is out for delivery', 'was delivered'].slice(0, 1 + (i % 3));
    const end = i < 2 ? 0.4 + i : 5 + i * 17;
    b.thread(`shipping-${i + 1}`, { box: 'inbox', category: 'CATEGORY_UPDATES' }, (t) =>
      steps.forEach((step, j) =>
        t.receive({
          from: carrier,
          at: b.ago(end) - (steps.length - 1 - j) * 20 * HOUR,
          subject: `Your parcel ${ref} ${step}`,
          body: plain(
            `Parcel ${ref} ${step}.\n\nTrack: https://${carrier.email.split('@')[1]}/track/${ref}\n`,
          ),
          ...(j > 0 ? { fresh: true } : {}),
        }),
      ),
    );
  }

  // Travel bookings under the Travel label.
  const travel: Array<[string, Person, string, string, number, boolean]> = [
    [
      'travel-hotel-brackwell',
      { name: 'Harbourview Hotel', email: 'stay@harbourview-hotel.example', tz: 0 },
      'Your stay at Harbourview Hotel, booking HV-22817',
      'Check-in from 15:00. Breakfast included. Free cancellation until 48 hours before arrival.\n',
      9.4,
      true,
    ],
    [
      'travel-train-tickets',
      { name: 'Railway Ticket Office', email: 'etickets@rail-tickets.example', tz: 0 },
      'Your e-tickets: Ashby to Brackwell',
      'Your e-tickets are attached. Show the QR code on your phone or print the PDF.\n',
      8.1,
      true,
    ],
    [
      'travel-car-hire',
      { name: 'Wheelhouse Car Hire', email: 'bookings@wheelhouse-hire.example', tz: 60 },
      'Car hire confirmed: compact, 3 days',
      'Pick-up at Brackwell airport desk 2. Bring your driving licence and a credit card.\n',
      27.5,
      false,
    ],
    [
      'travel-visa-reminder',
      SHOPS.larkfield,
      'Before you fly: travel documents checklist',
      'Make sure your passport is valid for at least six months after travel.\n',
      2.8,
      false,
    ],
  ];
  for (const [key, from, subject, text, days, pdf] of travel) {
    const body = pdf
      ? mixed(
          plain(text),
          attachment(
            `${key.replace('travel-', '')}.pdf`,
            'application/pdf',
            pdfDocument([from.name, subject]),
          ),
        )
      : plain(text);
    b.thread(key, { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.travel] }, (t) =>
      t.receive({ from, at: b.ago(days, 3), subject, body }),
    );
  }

  // Promotions: some with one-click unsubscribe, others with only a link in the body.
  const promos: Array<{ from: Person; subject: string; pre: string; days: number; unsub: Unsub }> = [
    {
      from: SHOPS.cobble,
      subject: 'New in: winter bedding',
      pre: 'Flannel sheets and heavy quilts.',
      days: 0.7,
      unsub: {
        kind: 'one-click',
        https: 'https://cobbleandpine.example/unsubscribe/oc/a91',
        mailto: 'mailto:unsub-a91@cobbleandpine.example',
      },
    },
    {
      from: SHOPS.cobble,
      subject: 'Last chance: free delivery ends Sunday',
      pre: 'On every order over EUR 40.',
      days: 13.4,
      unsub: {
        kind: 'one-click',
        https: 'https://cobbleandpine.example/unsubscribe/oc/a92',
        mailto: 'mailto:unsub-a92@cobbleandpine.example',
      },
    },
    {
      from: SHOPS.quayside,
      subject: 'Members get 20% off this weekend',
      pre: 'Use code HARBOUR20 at checkout.',
      days: 20.6,
      unsub: {
        kind: 'one-click',
        https: 'https://news.quayside-outfitters.com/unsubscribe?c=q-3301',
        mailto: 'mailto:unsubscribe@news.quayside-outfitters.com',
      },
    },
    {
      from: { name: 'Hearthstone Grocers', email: 'offers@hearthstone-grocers.example' },
      subject: 'Your weekly offers are here',
      pre: 'Citrus, cheese and half-price coffee.',
      days: 3.9,
      unsub: { kind: 'https-no-post', https: 'https://hearthstone-grocers.example/prefs/unsubscribe?m=771' },
    },
    {
      from: { name: 'Voyago Travel', email: 'deals@voyago.example' },
      subject: 'City breaks from EUR 89',
      pre: 'Three nights, flights included.',
      days: 6.2,
      unsub: { kind: 'body-link-only', bodyLink: 'https://voyago.example/unsubscribe?u=51c2' },
    },
    {
      from: { name: 'Voyago Travel', email: 'deals@voyago.example' },
      subject: 'Sun in January? Here is where',
      pre: 'Seven places above 20 degrees.',
      days: 41.2,
      unsub: { kind: 'body-link-only', bodyLink: 'https://voyago.example/unsubscribe?u=51c2' },
    },
    {
      from: { name: 'Appvault', email: 'news@appvault.example' },
      subject: 'Apps of the month',
      pre: 'A journaling app, a star map and a timer.',
      days: 29.3,
      unsub: {
        kind: 'one-click',
        https: 'https://appvault.example/email/unsubscribe/oc/3d',
        mailto: 'mailto:news-unsub@appvault.example',
      },
    },
    {
      from: { name: 'Bikeworks', email: 'news@bikeworks.example' },
      subject: 'Winter service: lights and brakes',
      pre: 'Book before the dark evenings.',
      days: 57.8,
      unsub: { kind: 'mailto-only', mailto: 'mailto:news-leave@bikeworks.example' },
    },
    {
      from: { name: 'Cinema Lumière', email: 'programme@cinema-lumiere.example' },
      subject: 'This week on screen',
      pre: 'Two premieres and a silent classic with live piano.',
      days: 1.4,
      unsub: {
        kind: 'one-click',
        https: 'https://cinema-lumiere.example/nl/unsubscribe/oc/77',
        mailto: 'mailto:programme-unsub@cinema-lumiere.example',
      },
    },
    {
      from: SHOPS.tidewater,
      subject: 'Staff picks for winter evenings',
      pre: 'Twelve books we could not put down.',
      days: 17.7,
      unsub: { kind: 'https-no-post', https: 'https://tidewater-books.com/newsletter/unsubscribe?id=tb-77' },
    },
  ];
  promos.forEach((p, i) => {
    const domain = p.from.email.split('@')[1] ?? '';
    const listId = `${p.from.name} offers <offers.${domain}>`;
    const key = b.thread(
      `promo-${i + 1}`,
      { box: i % 3 === 2 ? 'archive' : 'inbox', category: 'CATEGORY_PROMOTIONS' },
      (t) =>
        t.receive({
          from: p.from,
          at: b.ago(p.days, rng.int(0, 4)),
          subject: p.subject,
          body: newsletterBody({
            brand: p.from.name,
            accent: rng.pick(['#264653', '#9d0208', '#3a5a40', '#5a189a']),
            preheader: p.pre,
            intro: p.pre,
            sections: [
              {
                title: p.subject,
                text: 'See the full range online.',
                link: `https://${domain}/offers/${i + 1}`,
              },
            ],
            footerLink: p.unsub.bodyLink ?? p.unsub.https ?? `https://${domain}/unsubscribe`,
            postal: `${p.from.name}, Customer Services, Ashby`,
            textPart: i % 2 === 0,
          }),
          headers: listHeaders(listId, p.unsub),
          auth: alignedAuth(p.from.email, { mailfrom: `bounce@em.${domain}` }),
          unread: i % 2 === 0 && i % 3 !== 2 && i < 6,
        }),
    );
    registerList(b, key, listId, p.unsub);
  });
}
