/**
 * The spam folder holding both real spam and mail that is not spam at all (an invoice from a
 * plumber the owner hired, the school newsletter, a dentist reminder), and a few threads in trash.
 */
import { pdfDocument, zipArchive } from './archives.js';
import { ipFor, type AuthSpec } from './auth.js';
import type { CorpusBuilder } from './builder.js';
import { alternative, attachment, html, mixed, plain, type Person } from './mime.js';
import { listHeaders, newsletterBody, registerList, type Unsub } from './newsletter-kit.js';
import { CONTACTS, LABELS, SERVICES, SHOPS, COLLEAGUES } from './people.js';

const weak = (mailfrom: string, host: string, spf: string, headerFrom: string): AuthSpec => ({
  spf,
  mailfrom,
  host,
  ip: ipFor(host),
  dkim: [],
  dmarc: { result: spf === 'pass' ? 'pass' : 'fail', policy: 'p=NONE sp=NONE dis=NONE', headerFrom },
});

export function addSpam(b: CorpusBuilder): void {
  const rng = b.rng('spam');
  const plumber = CONTACTS.plumber;

  // The owner booked the plumber, so the later invoice comes from a known correspondent.
  b.thread('plumber-booking', { box: 'archive', category: 'CATEGORY_PERSONAL' }, (t) => {
    t.send({
      to: [plumber],
      at: b.ago(24, 3),
      subject: 'Leaking kitchen tap',
      body: plain(
        'Hello,\n\nOur kitchen tap is leaking at the base. Could someone come this week?\n\nJordan Hale\n',
      ),
    });
    t.receive({
      from: plumber,
      at: b.ago(23, 20),
      body: plain('Hi Jordan,\n\nWe can come on Thursday between 8 and 10.\n\nKettle & Sons\n'),
    });
    t.send({ to: [plumber], at: b.ago(23, 18), body: plain('Thursday is perfect, thank you.\n\nJordan\n') });
  });
  b.add(
    'spamNotSpam',
    b.thread('notspam-plumber-invoice', { box: 'spam' }, (t) =>
      t.receive({
        from: plumber,
        at: b.ago(19, 4),
        subject: 'Invoice 2026-0412 for work at your address',
        body: mixed(
          plain(
            'Dear Jordan,\n\nPlease find attached invoice 2026-0412 for the tap replacement (EUR 145.00). Payment within 14 days.\n\nKettle & Sons Plumbing\n',
          ),
          attachment(
            'Invoice-2026-0412.pdf',
            'application/pdf',
            pdfDocument(['Kettle & Sons Plumbing', 'Invoice 2026-0412', 'Tap replacement: EUR 145.00']),
          ),
        ),
        unread: true,
      }),
    ),
  );

  const schoolUnsub: Unsub = {
    kind: 'mailto-only',
    mailto: 'mailto:newsletter-off@maplestreet-primary.example',
  };
  const schoolList = 'Maple Street Primary parents <parents.maplestreet-primary.example>';
  const school = b.thread('notspam-school-newsletter', { box: 'spam' }, (t) =>
    t.receive({
      from: CONTACTS.school,
      at: b.ago(3, 5, 50),
      subject: 'Maple Street News: winter concert and the last week of term',
      body: newsletterBody({
        brand: 'Maple Street Primary',
        accent: '#1d3557',
        preheader: 'Concert tickets, non-uniform day and term dates.',
        intro: 'Dear parents and carers, here is our news for the last weeks of term.',
        sections: [
          {
            title: 'Winter concert',
            text: 'Years 3 and 4 perform on 16 December at 2pm. Two tickets per family.',
            link: 'https://maplestreet-primary.example/concert',
          },
          {
            title: 'Term dates',
            text: 'Term ends on 18 December at 1.30pm and restarts on 5 January.',
            link: 'https://maplestreet-primary.example/terms',
          },
        ],
        footerLink: 'https://maplestreet-primary.example/newsletter',
        postal: 'Maple Street Primary School, Maple Street, Ashby',
        textPart: true,
      }),
      headers: listHeaders(schoolList, schoolUnsub),
      auth: weak(
        'office@maplestreet-primary.example',
        'smtp.schoolmail.example',
        'softfail',
        'maplestreet-primary.example',
      ),
      unread: true,
    }),
  );
  b.add('spamNotSpam', school);
  registerList(b, school, schoolList, schoolUnsub);

  b.add(
    'spamNotSpam',
    b.thread('notspam-dentist-reminder', { box: 'spam' }, (t) =>
      t.receive({
        from: CONTACTS.dentist,
        at: b.ago(1, 9, 5),
        subject: 'Reminder: check-up on Tuesday at 08:40',
        body: plain(
          'Dear Jordan Hale,\n\nThis is a reminder of your check-up on Tuesday at 08:40 with Dr Okoro.\nReply to this email if you need to change it.\n\nBrookside Dental\n',
        ),
        auth: weak(
          'reception@brooksidedental.example',
          'mailer.clinicbook.example',
          'neutral',
          'brooksidedental.example',
        ),
      }),
    ),
  );

  const spam: Array<{
    key: string;
    from: Person;
    subject: string;
    body: string;
    days: number;
    replyTo?: Person;
    zip?: boolean;
  }> = [
    {
      key: 'spam-gift-card',
      from: { name: 'Rewards Centre', email: 'winner@prize-claims.example' },
      subject: 'Congratulations! You have won a EUR 500 gift card',
      body: 'You were selected as our monthly winner. Claim your EUR 500 gift card now: https://prize-claims.example/claim?u=8812\nOffer expires in 12 hours.\n',
      days: 0.4,
    },
    {
      key: 'spam-crypto',
      from: { name: 'Anna from CoinHarbor', email: 'anna@coinharbor-invest.example' },
      subject: 'I turned 250 into 12,400 in six weeks',
      body: 'Hi,\n\nI never believed it either. Our trading bot does the work for you. Start with just 250:\nhttps://coinharbor-invest.example/start\n\nAnna\n',
      days: 2.2,
    },
    {
      key: 'spam-advance-fee',
      from: { name: 'Barrister Thomas Okafor', email: 'chambers@lawfirm-intl.example' },
      replyTo: { name: 'Thomas Okafor', email: 't.okafor.private@freemailbox.example' },
      subject: 'Unclaimed inheritance in your family name',
      body: 'Dear Friend,\n\nI write concerning an unclaimed deposit of 4.2 million left by a client who shares your surname.\nReply with your full name and phone number so we can begin.\n\nBarrister T. Okafor\n',
      days: 6.8,
    },
    {
      key: 'spam-invoice-zip',
      from: { name: 'Accounts Department', email: 'accounts@billing-dept.example' },
      subject: 'Overdue invoice 4471 - final notice',
      body: 'Your invoice 4471 is overdue. See the attached archive for details and pay today to avoid collection fees.\n',
      days: 9.3,
      zip: true,
    },
    {
      key: 'spam-seo',
      from: { name: 'Rank Boosters', email: 'outreach@rankboosters.example' },
      subject: 'Page one of search results in 30 days, guaranteed',
      body: 'Hello website owner,\n\nWe noticed your site is not ranking. We guarantee page one in 30 days or your money back.\n',
      days: 15.5,
    },
  ];
  for (const s of spam) {
    const dom = s.from.email.split('@')[1] ?? '';
    const body = s.zip
      ? mixed(
          plain(s.body),
          attachment(
            'Invoice_4471.zip',
            'application/zip',
            zipArchive(
              [
                {
                  name: 'Invoice_4471.pdf.js',
                  data: Buffer.from('// placeholder: a harmless file named like a script\n', 'utf8'),
                },
              ],
              b.ago(s.days, 1),
            ),
          ),
        )
      : alternative(plain(s.body), html(`<p>${s.body.replace(/\n/g, '<br>')}</p>`));
    b.add(
      'realSpam',
      b.thread(s.key, { box: 'spam' }, (t) =>
        t.receive({
          from: s.from,
          at: b.ago(s.days, rng.int(0, 6)),
          subject: s.subject,
          body,
          ...(s.replyTo ? { replyTo: s.replyTo } : {}),
          auth: weak(
            `bounce@${dom}`,
            `vps${rng.int(10, 99)}.cheaphost.example`,
            rng.pick(['softfail', 'neutral', 'fail']),
            dom,
          ),
          unread: rng.chance(0.7),
        }),
      ),
    );
  }

  // Trash: things the owner deleted.
  const trash: Array<
    [string, Person, string, string, number, 'CATEGORY_PROMOTIONS' | 'CATEGORY_SOCIAL' | 'CATEGORY_PERSONAL']
  > = [
    [
      'trash-promo-blackfriday',
      SHOPS.cobble,
      'Black Friday: 40% off everything',
      'Our biggest sale ends tonight. Shop now at https://cobbleandpine.example/sale\n',
      5.4,
      'CATEGORY_PROMOTIONS',
    ],
    [
      'trash-social-digest',
      SERVICES.chirpline,
      'You have 14 new notifications',
      'See what you missed on Chirpline: https://chirpline.example/notifications\n',
      12.2,
      'CATEGORY_SOCIAL',
    ],
    [
      'trash-old-lunch',
      COLLEAGUES.marcus,
      'Lunch on Friday?',
      'Anyone up for lunch on Friday? The new noodle place.\n',
      61.3,
      'CATEGORY_PERSONAL',
    ],
    [
      'trash-promo-streamly',
      SHOPS.streamly,
      'Come back: 3 months for 1',
      'We miss you. Rejoin today and get three months for the price of one.\n',
      88.8,
      'CATEGORY_PROMOTIONS',
    ],
  ];
  for (const [key, from, subject, body, days, category] of trash) {
    b.add(
      'trashed',
      b.thread(key, { box: 'trash', category }, (t) =>
        t.receive({ from, at: b.ago(days, 2), subject, body: plain(body) }),
      ),
    );
  }
  b.add(
    'trashed',
    b.thread('trash-sent-draft-mistake', { box: 'trash', labels: [LABELS.work] }, (t) =>
      t.send({ to: [COLLEAGUES.priya], at: b.ago(30, 5), subject: 'test', body: plain('test\n') }),
    ),
  );
}
