/**
 * The regular newsletters of the demo mailbox, as data: who sends them, how they let you leave
 * and what each issue says. newsletters.ts turns them into threads.
 */
import type { Category } from './builder.js';
import type { Person } from './mime.js';
import type { Section, Unsub } from './newsletter-kit.js';

export interface Issue {
  key: string;
  subject: string;
  daysAgo: number;
  preheader: string;
  intro: string;
  sections: Section[];
  unread?: boolean;
}

export interface Letter {
  from: Person;
  listId: string;
  unsub: Unsub;
  accent: string;
  postal: string;
  textPart: boolean;
  box: 'inbox' | 'archive';
  category: Category;
  issues: Issue[];
}

export const sec = (title: string, text: string, link: string): Section => ({ title, text, link });

/** Daily and weekly letters with one-click unsubscribe, and a members list with mailto only. */
export const FIRST_LETTERS: Letter[] = [
  {
    from: { name: 'The Morning Ledger', email: 'briefing@news.morningledger.example', tz: -300 },
    listId: 'The Morning Ledger <briefing.morningledger.example>',
    unsub: {
      kind: 'one-click',
      https: 'https://news.morningledger.example/u/1c7e9a2f?list=briefing',
      mailto: 'mailto:unsubscribe@news.morningledger.example?subject=unsubscribe%201c7e9a2f',
    },
    accent: '#1f3a5f',
    postal: 'Morning Ledger Media, 400 Harbour Row, Suite 9, Port Ellis',
    textPart: true,
    box: 'inbox',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-ledger-1',
        subject: 'Morning briefing: port strike talks resume, rates hold steady',
        daysAgo: 0.2,
        preheader: 'Five things to know before your first coffee.',
        intro: 'Good morning. Here is what moved overnight, in under five minutes.',
        sections: [
          sec(
            'Harbour talks resume',
            'Negotiators return to the table after a two-week pause; both sides say a deal is close.',
            'https://news.morningledger.example/a/harbour-talks',
          ),
          sec(
            'Rates unchanged',
            'The central bank held its benchmark rate and signalled patience into spring.',
            'https://news.morningledger.example/a/rates-hold',
          ),
        ],
        unread: true,
      },
      {
        key: 'nl-ledger-2',
        subject: 'Morning briefing: the long weekend traffic plan',
        daysAgo: 1.2,
        preheader: 'Road closures, rail swaps and where to park.',
        intro: 'Good morning. The city publishes its holiday traffic plan today.',
        sections: [
          sec(
            'Closures on the ring road',
            'Two lanes close overnight from Thursday for resurfacing.',
            'https://news.morningledger.example/a/ring-road',
          ),
          sec(
            'A quieter budget',
            'Councillors trimmed the festival budget by a tenth.',
            'https://news.morningledger.example/a/festival-budget',
          ),
        ],
      },
      {
        key: 'nl-ledger-3',
        subject: 'Morning briefing: what the census says about your street',
        daysAgo: 9.2,
        preheader: 'A new map of who lives where.',
        intro: 'Good morning. The first neighbourhood-level census tables are out.',
        sections: [
          sec(
            'Census maps',
            'Household size fell again in the centre and rose in the suburbs.',
            'https://news.morningledger.example/a/census-maps',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Weekend Bakes', email: 'hello@weekendbakes.example', tz: 0 },
    listId: 'Weekend Bakes weekly <weekly.weekendbakes.example>',
    unsub: {
      kind: 'one-click',
      https: 'https://weekendbakes.example/list/unsubscribe?t=wb-88f1d2',
      mailto: 'mailto:leave-wb-88f1d2@lists.weekendbakes.example',
    },
    accent: '#b5542b',
    postal: 'Weekend Bakes Ltd, 12 Flour Mill Lane, Ashby',
    textPart: true,
    box: 'archive',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-bakes-1',
        subject: 'This weekend: brown butter pear cake',
        daysAgo: 4.5,
        preheader: 'One bowl, forty minutes, no mixer.',
        intro: 'A forgiving cake for the last pears of the season.',
        sections: [
          sec(
            'Brown butter pear cake',
            'Brown the butter until it smells of hazelnuts, then fold through sliced pears.',
            'https://weekendbakes.example/r/pear-cake',
          ),
        ],
      },
      {
        key: 'nl-bakes-2',
        subject: 'This weekend: seeded rye, slowly',
        daysAgo: 11.5,
        preheader: 'A loaf that asks for patience and little else.',
        intro: 'Rye rewards a long, cool rise. Start it on Friday night.',
        sections: [
          sec(
            'Seeded rye',
            'Soak the seeds overnight so they do not steal water from the dough.',
            'https://weekendbakes.example/r/seeded-rye',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Dev Digest', email: 'digest@devdigest.example', tz: -480 },
    listId: 'Dev Digest <weekly.devdigest.example>',
    unsub: {
      kind: 'one-click',
      https: 'https://devdigest.example/unsubscribe/one-click/5b0c44aa',
      mailto: 'mailto:unsubscribe+5b0c44aa@devdigest.example',
    },
    accent: '#2d6a4f',
    postal: 'Dev Digest, 77 Commit Street, Fogtown',
    textPart: false,
    box: 'inbox',
    category: 'CATEGORY_PROMOTIONS',
    issues: [
      {
        key: 'nl-devdigest-1',
        subject: 'Dev Digest #212: flaky tests, and why retries hide them',
        daysAgo: 2.6,
        preheader: 'Plus: a tiny profiler worth a look.',
        intro: 'This week: test suites that lie, a profiler in 300 lines, and a reading list.',
        sections: [
          sec(
            'Retries hide flakiness',
            'Automatic retries turn a red build green and leave the race in the code.',
            'https://devdigest.example/212/retries',
          ),
          sec(
            'A profiler in 300 lines',
            'Sampling the stack every millisecond gets you surprisingly far.',
            'https://devdigest.example/212/profiler',
          ),
        ],
      },
      {
        key: 'nl-devdigest-2',
        subject: 'Dev Digest #211: the cost of a cold start',
        daysAgo: 9.6,
        preheader: 'Measure before you bundle.',
        intro: 'Startup time is a feature; here is how three teams measured theirs.',
        sections: [
          sec(
            'Cold starts',
            'Most of the time went into imports nobody used on the first request.',
            'https://devdigest.example/211/cold-start',
          ),
        ],
      },
    ],
  },
  {
    from: { name: 'Trail & Tide', email: 'list@lists.trailandtide.example', tz: 0 },
    listId: '"Trail & Tide members" <members.lists.trailandtide.example>',
    unsub: { kind: 'mailto-only', mailto: 'mailto:members-leave@lists.trailandtide.example' },
    accent: '#00557f',
    postal: 'Trail & Tide Walking Club, c/o The Boathouse, Kelby Quay',
    textPart: true,
    box: 'inbox',
    category: 'CATEGORY_FORUMS',
    issues: [
      {
        key: 'nl-trail-1',
        subject: '[Trail & Tide] December walks and the coast path closure',
        daysAgo: 3.3,
        preheader: 'Four walks, one detour, mince pies at the end.',
        intro: 'Hello walkers. December is short on light, so all walks start at ten.',
        sections: [
          sec(
            'Coast path closure',
            'The cliff section past Gull Point is shut after the landslip; we detour inland.',
            'https://trailandtide.example/walks/december',
          ),
        ],
      },
      {
        key: 'nl-trail-2',
        subject: '[Trail & Tide] AGM minutes and new membership fees',
        daysAgo: 38.3,
        preheader: 'Fees rise by two pounds from January.',
        intro: 'Thank you to everyone who came to the AGM.',
        sections: [
          sec(
            'Membership fees',
            'The committee voted to raise the annual fee to cover insurance.',
            'https://trailandtide.example/agm',
          ),
        ],
      },
    ],
  },
];
