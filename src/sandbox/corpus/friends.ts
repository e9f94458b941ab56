/** Family and friends: photos, recipes, plans, and group threads that end with somebody else. */
import type { CorpusBuilder } from './builder.js';
import { addConversationList, pdf, png, type Conversation } from './conversation-kit.js';
import { FRIENDS, LABELS, OWNER } from './people.js';

const FAMILY_AND_FRIENDS: Conversation[] = [
  {
    key: 'family-photos',
    subject: 'Photos from Sunday',
    days: 3.0,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.family] },
    unreadLast: true,
    steps: [
      [
        FRIENDS.elise,
        'A couple of photos from Sunday lunch!\n\nE',
        [
          png('sunday-lunch-1.png', [250, 210, 160], [120, 80, 40]),
          png('sunday-lunch-2.png', [180, 220, 250], [60, 90, 30]),
        ],
      ],
    ],
  },
  {
    key: 'family-plum-cake',
    subject: 'Recipe for the plum cake',
    days: 12.4,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.family] },
    steps: [
      [OWNER, 'Mum, could you send me the plum cake recipe?', []],
      [
        FRIENDS.mum,
        'Of course love. 250g flour, 200g butter, 150g sugar, 3 eggs, a kilo of plums. 180 degrees for 50 minutes.\n\nMum',
        [],
      ],
    ],
  },
  {
    key: 'friends-football',
    subject: 'Five-a-side on Wednesday',
    days: 0.8,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL' },
    unreadLast: true,
    steps: [
      [FRIENDS.sam, 'Five-a-side on Wednesday at 8? We need one more.', []],
      [OWNER, 'Count me in.', []],
      [FRIENDS.ben, 'Me too. Bringing the good ball this time.', []],
      [FRIENDS.sam, 'Great, that makes ten. See you there.', []],
    ],
  },
  {
    key: 'friends-dinner-thanks',
    subject: 'Thanks for dinner!',
    days: 5.7,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL' },
    steps: [[FRIENDS.noor, 'Thank you for a lovely dinner on Saturday. The soup was amazing.\n\nNoor', []]],
  },
  {
    key: 'friends-guitar',
    subject: 'Guitar for sale',
    days: 47.3,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL' },
    steps: [[FRIENDS.ben, 'Selling my old acoustic if you know anyone who wants one. EUR 120.', []]],
  },
  {
    key: 'friends-tokyo',
    subject: 'Tokyo recommendations',
    days: 34.4,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.travel] },
    steps: [
      [OWNER, 'Yuki, any tips for a first week in Tokyo?', []],
      [
        FRIENDS.yuki,
        'Yes! Walk the old streets of Yanaka, get a day pass for the metro, and eat at the small places near the stations.\n\nYuki',
        [],
      ],
    ],
  },
  {
    key: 'family-dad-birthday',
    subject: "Dad's birthday present",
    days: 8.6,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.family] },
    steps: [
      [
        FRIENDS.elise,
        'Shall we get Dad the bird feeder camera? About EUR 90 each if we split it three ways.',
        [],
      ],
      [FRIENDS.mum, 'He would love that.', []],
      [OWNER, 'Yes, go for it. I will send you my share.', []],
      [FRIENDS.elise, 'Done, ordered it. Arrives Friday.', []],
    ],
  },
  {
    key: 'family-cottage',
    subject: 'Cottage booking for Easter',
    days: 52.1,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.family, LABELS.travel] },
    steps: [
      [
        FRIENDS.elise,
        'Booked the cottage for Easter. Confirmation attached.',
        [pdf('cottage-booking-easter.pdf', 'Gorse Cottage', 'Four nights, sleeps six')],
      ],
    ],
  },
];

export function addFriends(b: CorpusBuilder): void {
  addConversationList(b, FAMILY_AND_FRIENDS);
}
