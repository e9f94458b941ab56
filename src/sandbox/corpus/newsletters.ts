/**
 * Newsletters: every way a sender offers (or hides) the way out, hidden preheaders — one of
 * them carrying a prompt injection — and invisible characters in a subject and body.
 */
import { alignedAuth } from './auth.js';
import type { CorpusBuilder } from './builder.js';
import { plain, type Person } from './mime.js';
import { listHeaders, newsletterBody, registerList, type Unsub } from './newsletter-kit.js';
import { FIRST_LETTERS, sec, type Letter } from './newsletter-issues.js';
import { OWNER } from './people.js';

const LETTERS: Letter[] = [
  ...FIRST_LETTERS,
  {
    from: { name: 'Citizen Science Weekly', email: 'weekly@citizenscience.example.org', tz: 60 },
    listId: '<weekly.citizenscience.example.org>',
    unsub: {
      kind: 'mailto-only',
      mailto: 'mailto:sympa@citizenscience.example.org?subject=unsubscribe%20weekly',
    },
    accent: '#6a4c93',
    postal: 'Citizen Science Network, Observatory Road 3, Lindhaven',
    textPart: false,
    box: 'archive',
    category: 'CATEGORY_FORUMS',
    issues: [
      {
        key: 'nl-citsci-1',
        subject: 'Count the starlings this Saturday',
        daysAgo: 16.4,
        preheader: 'Ten minutes at dusk is all it takes.',
        intro: 'Our winter roost survey needs counts from every town.',
        sections: [
          sec(
            'Starling roost survey',
            'Note the time the first flock arrives and a rough count.',
            'https://citizenscience.example.org/starlings',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Kernel Notes', email: 'notes@kernelnotes.example', tz: 0 },
    listId: 'Kernel Notes <notes.kernelnotes.example>',
    unsub: { kind: 'https-no-post', https: 'https://kernelnotes.example/unsubscribe?u=30c1f9&l=notes' },
    accent: '#333333',
    postal: 'Kernel Notes, PO Box 212, Westmarch',
    textPart: true,
    box: 'inbox',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-kernel-1',
        subject: 'Kernel Notes: scheduler changes in the next release',
        daysAgo: 5.1,
        preheader: 'What the new fairness rules mean for your laptop.',
        intro: 'A quieter cycle, but the scheduler work finally landed.',
        sections: [
          sec(
            'Scheduler fairness',
            'Interactive tasks now keep their latency under heavy batch load.',
            'https://kernelnotes.example/scheduler',
          ),
        ],
      },
      {
        key: 'nl-kernel-2',
        subject: 'Kernel Notes: filesystems round-up',
        daysAgo: 33.1,
        preheader: 'Snapshots, quotas and a long-standing bug.',
        intro: 'Three filesystems shipped notable fixes this month.',
        sections: [
          sec(
            'Snapshot fixes',
            'A rare corruption on rename during a snapshot is fixed.',
            'https://kernelnotes.example/fs',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Lumen Gallery', email: 'events@lumengallery.example', tz: 0 },
    listId: 'Lumen Gallery events <events.lumengallery.example>',
    unsub: { kind: 'body-link-only', bodyLink: 'https://lumengallery.example/mail/unsubscribe?id=lg-40711' },
    accent: '#8d0801',
    postal: 'Lumen Gallery, 1 Canal Yard, Ashby',
    textPart: false,
    box: 'archive',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-lumen-1',
        subject: 'Late opening: winter light installations',
        daysAgo: 6.7,
        preheader: 'Open until 10pm every Thursday in December.',
        intro: 'Our courtyard is lit by six new installations this winter.',
        sections: [
          sec(
            'Winter light',
            'Walk the courtyard after dark; the pieces respond to sound.',
            'https://lumengallery.example/winter-light',
          ),
        ],
      },
      {
        key: 'nl-lumen-2',
        subject: 'Members preview: the print room reopens',
        daysAgo: 47.7,
        preheader: 'Be first through the doors.',
        intro: 'After a year of work the print room opens to members first.',
        sections: [
          sec(
            'Print room',
            'Three centuries of prints, now in a room with proper light.',
            'https://lumengallery.example/print-room',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Fernhollow Garden Centre', email: 'offers@fernhollow.example', tz: 0 },
    listId: 'Fernhollow offers <offers.fernhollow.example>',
    unsub: { kind: 'body-link-only', bodyLink: 'https://fernhollow.example/unsubscribe/c/9a71' },
    accent: '#386641',
    postal: 'Fernhollow Garden Centre, Mill Road, Brackwell',
    textPart: true,
    box: 'inbox',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-fernhollow-1',
        subject: 'Bare-root season starts now',
        daysAgo: 1.9,
        preheader: 'Fruit trees and hedging at their cheapest.',
        intro: 'Plant bare-root while the ground is soft and cold.',
        sections: [
          sec(
            'Bare-root fruit trees',
            'Apples, pears and plums on dwarfing rootstocks for small gardens.',
            'https://fernhollow.example/bare-root',
          ),
        ],
        unread: true,
      },
    ],
  },
];

export function addNewsletters(b: CorpusBuilder): void {
  const rng = b.rng('newsletters');
  for (const l of LETTERS) {
    for (const issue of l.issues) {
      const footerLink =
        l.unsub.bodyLink ?? l.unsub.https ?? `https://${l.from.email.split('@')[1]}/unsubscribe`;
      const body = newsletterBody({
        brand: l.from.name,
        accent: l.accent,
        preheader: issue.preheader,
        intro: issue.intro,
        sections: issue.sections,
        footerLink,
        postal: l.postal,
        textPart: l.textPart,
      });
      const domain = l.from.email.split('@')[1] ?? '';
      b.thread(issue.key, { box: l.box, category: l.category }, (t) =>
        t.receive({
          from: l.from,
          at: b.ago(issue.daysAgo, rng.int(0, 2), rng.int(0, 59)),
          subject: issue.subject,
          body,
          headers: listHeaders(l.listId, l.unsub),
          auth: alignedAuth(l.from.email, {
            mailfrom: `bounce-${rng.hex(10)}@em.${domain}`,
            host: `o${rng.int(1, 9)}.em.${domain}`,
          }),
          unread: issue.unread ?? false,
          idHost: `em.${domain}`,
        }),
      );
      registerList(b, issue.key, l.listId, l.unsub);
    }
  }
  addAllotmentThread(b);
}

/**
 * A society newsletter the owner answered and the editor answered back: the newest message is a
 * person's, so the unsubscribe headers sit on the oldest one.
 */
function addAllotmentThread(b: CorpusBuilder): void {
  const list: Person = {
    name: 'Riverside Allotment Society',
    email: 'newsletter@riverside-allotments.example',
  };
  const editor: Person = { name: 'Clara Voss', email: 'clara.voss@riverside-allotments.example' };
  const listId = 'Riverside Allotment Society <news.riverside-allotments.example>';
  const unsub: Unsub = {
    kind: 'one-click',
    https: 'https://riverside-allotments.example/newsletter/unsubscribe?m=4471',
    mailto: 'mailto:newsletter-unsubscribe@riverside-allotments.example',
  };
  const key = b.thread('nl-allotment-reply', { box: 'inbox', category: 'CATEGORY_PERSONAL' }, (t) => {
    t.receive({
      from: list,
      at: b.ago(6, 3),
      subject: 'Riverside Allotments: winter newsletter and plot inspections',
      body: newsletterBody({
        brand: 'Riverside Allotment Society',
        accent: '#606c38',
        preheader: 'Inspections on 14 December. Seed swap in January.',
        intro: 'Dear members, a short winter update from the committee.',
        sections: [
          sec(
            'Plot inspections',
            'The committee walks the site on 14 December. Please clear paths and label your plot.',
            'https://riverside-allotments.example/inspections',
          ),
          sec(
            'Volunteers wanted',
            'We need two people to help run the seed swap. Reply to this email if you can.',
            'https://riverside-allotments.example/seed-swap',
          ),
        ],
        footerLink: unsub.https ?? '',
        postal: 'Riverside Allotment Society, The Hut, Riverside Lane',
        textPart: true,
      }),
      headers: listHeaders(listId, unsub),
    });
    t.send({
      to: [list],
      at: b.ago(5, 20),
      body: plain('Hi,\n\nI can help with the seed swap in January. Plot 17B.\n\nJordan\n'),
    });
    t.receive({
      from: editor,
      to: [OWNER],
      at: b.ago(5, 2),
      body: plain(
        'Hi Jordan,\n\nWonderful, thank you! I have put you down for the morning shift, 9 to 12.\nWould you be able to bring a folding table?\n\nClara\n(newsletter editor)\n',
      ),
      unread: true,
    });
  });
  b.mark('newsletterReplyNewest', key);
  registerList(b, key, listId, unsub);
  b.add('awaitingOwnerReply', key);
}
