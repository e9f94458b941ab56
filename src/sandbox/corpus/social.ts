/**
 * Social notifications (CATEGORY_SOCIAL), forum digests and a mailing list where several people
 * talk in one thread (CATEGORY_FORUMS).
 */
import { alignedAuth } from './auth.js';
import { HOUR, type CorpusBuilder } from './builder.js';
import { alternative, html, plain, type Person } from './mime.js';
import { listHeaders, registerList, type Unsub } from './newsletter-kit.js';
import { SERVICES } from './people.js';

const NAMES = [
  'Ada Brenner',
  'Luis Ortega',
  'Mia Sørensen',
  'Kofi Mensah',
  'Hana Novak',
  'Theo Marsh',
  'Rosa Lind',
  'Amir Farouk',
];

export function addSocial(b: CorpusBuilder): void {
  const rng = b.rng('social');
  const chirp = SERVICES.chirpline;
  const mesh = SERVICES.linkmesh;
  for (let i = 0; i < 12; i++) {
    const who = rng.pick(NAMES);
    const onMesh = i % 3 === 0;
    const [subject, text] = onMesh
      ? rng.pick([
          [`${who} wants to connect`, `${who} would like to join your professional network.`],
          [`${who} viewed your profile`, `${who} and 3 others viewed your profile this week.`],
          [`Congratulate ${who} on a work anniversary`, `${who} celebrates 5 years at their company.`],
        ] as const)
      : rng.pick([
          [`${who} replied to your post`, `${who} replied: "Great photo, where was this taken?"`],
          [`${who} mentioned you`, `${who} mentioned you in a post about the harbour festival.`],
          [
            `${who} and 6 others liked your post`,
            'Your post about the allotment harvest is getting attention.',
          ],
          [`New follower: ${who}`, `${who} started following you.`],
        ] as const);
    const from: Person = onMesh ? mesh : chirp;
    const link = `https://${from.email.split('@')[1]}/n/${rng.hex(10)}`;
    const days = i < 5 ? 0.2 + i * 1.3 : 9 + i * 8.3;
    b.thread(`social-${i + 1}`, { box: 'inbox', category: 'CATEGORY_SOCIAL' }, (t) =>
      t.receive({
        from: { ...from, name: onMesh ? `${who} via Linkmesh` : 'Chirpline' },
        at: b.ago(days, rng.int(0, 11)),
        subject,
        body: alternative(
          plain(`${text}\n\n${link}\n`),
          html(`<p>${text.replace(/"/g, '&quot;')}</p><p><a href="${link}">Open</a></p>`),
        ),
        headers: [['X-Notification-Type', onMesh ? 'network' : 'activity']],
        unread: i % 2 === 0 && i < 5,
      }),
    );
  }

  // Forum digests with one-click unsubscribe.
  const kiln = SERVICES.kiln;
  const kilnUnsub: Unsub = {
    kind: 'one-click',
    https: 'https://forum.kilnworks.example/email/unsubscribe/9f2c41e0',
    mailto: 'mailto:digest-unsubscribe@forum.kilnworks.example',
  };
  const kilnList = 'Kiln Forum digest <digest.forum.kilnworks.example>';
  const topics = [
    'Cone 6 glaze that does not craze',
    'Wedging table plans',
    'Best clay for beginners',
    'Kiln shelf wash recipes',
    'Selling at craft fairs',
  ];
  topics.forEach((topic, i) => {
    const key = b.thread(
      `forum-digest-${i + 1}`,
      { box: i < 2 ? 'inbox' : 'archive', category: 'CATEGORY_FORUMS' },
      (t) =>
        t.receive({
          from: kiln,
          at: b.ago(1.5 + i * 7, 2),
          subject: `[Kiln Forum] Summary: ${topic} and ${rng.int(3, 12)} more`,
          body: plain(
            `Popular this week\n\n1. ${topic} (${rng.int(5, 60)} replies)\n2. Show us your mugs (${rng.int(5, 60)} replies)\n\nRead more: https://forum.kilnworks.example/latest\n\nUnsubscribe: ${kilnUnsub.https ?? ''}\n`,
          ),
          headers: listHeaders(kilnList, kilnUnsub),
          unread: i === 0,
        }),
    );
    registerList(b, key, kilnList, kilnUnsub);
  });

  // A mailing list: people answer one another in the same thread.
  const list: Person = { name: 'ceramics-l', email: 'ceramics-l@lists.potters.example' };
  const listUnsub: Unsub = { kind: 'mailto-only', mailto: 'mailto:ceramics-l-leave@lists.potters.example' };
  const listId = 'Ceramics discussion <ceramics-l.lists.potters.example>';
  const members: Person[] = [
    { name: 'Hana Novak', email: 'hana.novak@example.net', tz: 60 },
    { name: 'Theo Marsh', email: 'theo@example.com', tz: 0 },
    { name: 'Rosa Lind', email: 'rosa.lind@example.org', tz: 60 },
  ];
  const threads: Array<[string, string[]]> = [
    [
      'Glaze crawling on bisque',
      [
        'My glaze pulls away from the pot in patches after firing. Any ideas?',
        'Usually dust or oil on the bisque. Wipe with a damp sponge before glazing.',
        'Also check application thickness; thick glaze shrinks more and crawls.',
      ],
    ],
    [
      'Second-hand kiln: what to check?',
      [
        'Looking at a used kiln for sale. What should I check first?',
        'Elements and the relay. Ask for a recent firing log.',
        'And the wiring to the wall: get an electrician to look.',
        'Thanks all, I got it and it fires evenly!',
      ],
    ],
    [
      'Recycling clay scraps',
      [
        'How do you reclaim trimmings without making a mess?',
        'Dry them out completely, then slake in water and dry on plaster bats.',
      ],
    ],
  ];
  threads.forEach(([subject, posts], i) => {
    const end = 4 + i * 15;
    const key = b.thread(
      `list-ceramics-${i + 1}`,
      { box: i === 0 ? 'inbox' : 'archive', category: 'CATEGORY_FORUMS' },
      (t) =>
        posts.forEach((post, j) => {
          const from = members[j % members.length] as Person;
          t.receive({
            from,
            to: [list],
            at: b.ago(end) - (posts.length - 1 - j) * 7 * HOUR,
            subject: j === 0 ? `[ceramics-l] ${subject}` : `Re: [ceramics-l] ${subject}`,
            body: plain(
              `${post}\n\n--\n${from.name}\n_______________________________________________\nceramics-l mailing list\nTo leave, write to ceramics-l-leave@lists.potters.example\n`,
            ),
            headers: [
              ...listHeaders(listId, listUnsub),
              ['List-Post', `<mailto:${list.email}>`],
              ['Sender', `"ceramics-l" <ceramics-l-bounces@lists.potters.example>`],
            ],
            auth: alignedAuth(from.email, {
              mailfrom: 'ceramics-l-bounces@lists.potters.example',
              host: 'lists.potters.example',
            }),
            unread: false,
          });
        }),
    );
    registerList(b, key, listId, listUnsub);
  });
}
