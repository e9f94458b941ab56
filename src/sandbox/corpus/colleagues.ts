/**
 * Colleagues trading files: pdf, png, csv, docx and a non-ASCII file name (RFC 2231), across the
 * Work, Work/Projects and Work/Hiring labels.
 */
import type { ThreadOptions } from './builder.js';
import { addConversationList, csv, docx, pdf, png, type Conversation } from './conversation-kit.js';
import type { CorpusBuilder } from './builder.js';
import { COLLEAGUES, LABELS, OWNER } from './people.js';

const { priya, tomas, hannah, oskar, grace, marcus, lena, ravi } = COLLEAGUES;
const work = (...extra: string[]): ThreadOptions => ({
  box: 'inbox',
  category: 'CATEGORY_PERSONAL',
  labels: [LABELS.work, ...extra],
});
const done = (...extra: string[]): ThreadOptions => ({
  box: 'archive',
  category: 'CATEGORY_PERSONAL',
  labels: [LABELS.work, ...extra],
});

const CONVERSATIONS: Conversation[] = [
  {
    key: 'work-q4-deck',
    subject: 'Q4 metrics deck',
    days: 1.3,
    opts: work(LABELS.projects),
    unreadLast: true,
    steps: [
      [
        priya,
        'Hi Jordan,\n\nHere is the Q4 metrics deck for Thursday. Page 6 has the latency numbers.\n\nPriya',
        [pdf('atlas-q4-metrics.pdf', 'Atlas Q4 metrics', 'p95 latency: 212 ms', 'Uptime: 99.95%')],
      ],
      [OWNER, 'Thanks Priya, looks good. One typo on page 4 ("recieved").\n\nJordan'],
      [priya, 'Fixed, thank you!\n\nPriya'],
    ],
  },
  {
    key: 'work-dry-run-csv',
    subject: 'Migration dry-run results',
    days: 4.2,
    opts: work(LABELS.projects),
    steps: [
      [
        tomas,
        "Results of last night's dry run attached. Two tables were slower than expected.\n\nTomás",
        [
          csv('dry-run-results.csv', [
            ['table', 'rows', 'seconds'],
            ['accounts', '120433', '41'],
            ['events', '9120044', '1260'],
            ['audit_log', '4410228', '702'],
          ]),
        ],
      ],
    ],
  },
  {
    key: 'work-announcement-docx',
    subject: 'Announcement draft v2',
    days: 6.4,
    opts: done(LABELS.projects),
    steps: [
      [
        hannah,
        'Second draft of the launch announcement attached. Comments welcome in the doc.\n\nHannah',
        [
          docx(
            'atlas-announcement-v2.docx',
            'Atlas is here',
            'Today we launch Atlas, a faster way to export your data.',
          ),
        ],
      ],
      [OWNER, 'Read it, two comments in the monitoring paragraph. Otherwise good to go.\n\nJordan'],
      [hannah, 'Great, merged your comments. Sending to Priya for sign-off.\n\nHannah'],
    ],
  },
  {
    key: 'work-dashboard-png',
    subject: 'Latency dashboard after the fix',
    days: 0.9,
    opts: work(),
    unreadLast: true,
    steps: [
      [
        oskar,
        'Screenshot of the dashboard since the connection pool fix went out. The spike is gone.\n\nOskar',
        [png('latency-dashboard.png', [240, 240, 240], [66, 135, 245], [240, 240, 240])],
      ],
    ],
  },
  {
    key: 'work-mockups-png',
    subject: 'Onboarding flow mockups',
    days: 11.6,
    opts: done(LABELS.projects),
    steps: [
      [
        grace,
        'Three mockups for the new onboarding flow.\n\nGrace',
        [
          png('onboarding-1-welcome.png', [255, 255, 255], [230, 57, 70]),
          png('onboarding-2-connect.png', [255, 255, 255], [69, 123, 157]),
          png('onboarding-3-done.png', [255, 255, 255], [42, 157, 143]),
        ],
      ],
      [OWNER, 'Love the second one. Could the "Skip" link be less prominent?\n\nJordan'],
      [grace, 'Yes, will tone it down in the next round.\n\nGrace'],
    ],
  },
  {
    key: 'work-signed-sow',
    subject: 'Signed SOW for 2027',
    days: 22.5,
    opts: done(),
    steps: [
      [
        marcus,
        'Jordan,\n\nCountersigned statement of work attached for your records.\n\nMarcus',
        [
          pdf(
            'SOW-Brightfold-2027-signed.pdf',
            'Statement of Work 2027',
            'Brightfold and Jordan Hale',
            'Signed',
          ),
        ],
      ],
    ],
  },
  {
    key: 'work-budget-csv',
    subject: 'Q1 budget sheet',
    days: 7.8,
    opts: work(),
    steps: [
      [
        lena,
        'Q1 budget as CSV, as requested. Travel is the line that moved most.\n\nLena',
        [
          csv('q1-budget.csv', [
            ['line', 'q4', 'q1'],
            ['travel', '4200', '6100'],
            ['software', '12900', '13100'],
            ['contractors', '38000', '38000'],
          ]),
        ],
      ],
    ],
  },
  {
    key: 'work-loadtest',
    subject: 'Load test report, November',
    days: 2.2,
    opts: work(LABELS.projects),
    steps: [
      [
        ravi,
        'Load test report and the raw numbers. We hold 2,000 requests per second with p99 under 400 ms.\n\nRavi',
        [
          pdf('loadtest-2026-11.pdf', 'Load test, November', '2,000 rps sustained', 'p99 < 400 ms'),
          csv('loadtest-raw.csv', [
            ['rps', 'p50_ms', 'p99_ms'],
            ['500', '41', '120'],
            ['1000', '55', '190'],
            ['2000', '88', '391'],
          ]),
        ],
      ],
    ],
  },
  {
    key: 'hiring-cv',
    subject: 'Candidate CV: Mateo Ruiz',
    days: 16.3,
    opts: { ...done(LABELS.hiring) },
    steps: [
      [
        grace,
        'CV for the platform role attached. Could you do the technical interview?\n\nGrace',
        [pdf('Mateo_Ruiz_CV.pdf', 'Mateo Ruiz', 'Platform engineer, 7 years')],
      ],
      [OWNER, 'Happy to. Tuesday or Wednesday afternoon works.\n\nJordan'],
      [grace, 'Booked for Wednesday at 14:00. Thanks!\n\nGrace'],
    ],
  },
  {
    key: 'hiring-schedule-docx',
    subject: 'Interview schedule for Thursday',
    days: 0.4,
    opts: work(LABELS.hiring),
    unreadLast: true,
    steps: [
      [
        grace,
        "Schedule for Thursday's interviews attached; you are on the 11:00 slot.\n\nGrace",
        [
          docx(
            'interview-schedule.docx',
            'Thursday interviews',
            '09:30 Hannah',
            '11:00 Jordan',
            '14:00 Oskar',
          ),
        ],
      ],
    ],
  },
  {
    key: 'work-lieferanten',
    subject: 'Lieferantenübersicht für das Audit',
    days: 9.9,
    opts: work(),
    steps: [
      [
        lena,
        'Hi Jordan,\n\nthe supplier overview for the audit, in German as the auditors asked.\n\nLena',
        [pdf('Lieferanten-Übersicht.pdf', 'Lieferantenuebersicht 2026', '12 Lieferanten')],
      ],
    ],
  },
  {
    key: 'work-offsite',
    subject: 'Team offsite ideas',
    days: 25.2,
    opts: done(),
    steps: [
      [priya, 'Ideas for the spring offsite? Budget is about EUR 150 per person.', []],
      [hannah, 'A walk along the coast path and lunch at the harbour?', []],
      [OWNER, 'Coast path gets my vote. Trail & Tide know a good route.', []],
      [priya, 'Coast path it is. I will book the harbour restaurant.', []],
    ],
  },
  {
    key: 'work-staging-access',
    subject: 'Access to the staging database',
    days: 30.1,
    opts: done(),
    steps: [
      [tomas, 'Could you give me read access to the staging database?', []],
      [OWNER, 'Done, you should have it now.', []],
      [tomas, 'Works, thanks!', []],
    ],
  },
  {
    key: 'work-invoice-nov',
    subject: 'Invoice for November',
    days: 1.9,
    opts: work(),
    steps: [
      [
        OWNER,
        'Hi Marcus,\n\nMy invoice for November is attached.\n\nJordan',
        [pdf('Hale-invoice-2026-11.pdf', 'Invoice 2026-11', 'Consulting, 14 days')],
      ],
      [marcus, "Approved, it goes out with next week's payment run.\n\nMarcus"],
    ],
  },
  {
    key: 'work-usability-notes',
    subject: 'Usability test notes',
    days: 36.7,
    opts: done(LABELS.projects),
    steps: [
      [
        grace,
        'Notes from the five usability sessions.\n\nGrace',
        [
          docx(
            'usability-notes.docx',
            'Session 1: found export quickly',
            'Session 2: missed the filter',
            'Session 3-5: see table',
          ),
        ],
      ],
    ],
  },
];

export function addColleagues(b: CorpusBuilder): void {
  addConversationList(b, CONVERSATIONS);
}
