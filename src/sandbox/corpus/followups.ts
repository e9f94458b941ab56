/**
 * Mail waiting on a reply, both ways: the owner wrote last 3–20 days ago and nobody answered
 * (plus near misses outside that window and a note to self, which waits on nobody), and people
 * whose newest message asks the owner something.
 */
import { pdfDocument } from './archives.js';
import type { CorpusBuilder } from './builder.js';
import { attachment, mixed, plain, type Person } from './mime.js';
import { COLLEAGUES, CONTACTS, FRIENDS, LABELS, OWNER } from './people.js';
import { reply } from './conversations.js';

export function addFollowups(b: CorpusBuilder): void {
  // The owner wrote last and is waiting.
  const waiting: Array<{
    key: string;
    to: Person;
    days: number;
    subject: string;
    body: string;
    labels?: string[];
  }> = [
    {
      key: 'fu-landlord-boiler',
      to: CONTACTS.landlord,
      days: 5.2,
      subject: 'Boiler service date?',
      body: 'Hi Derek,\n\nThe boiler service is overdue (last one was in October last year). Could you let me know when the engineer can come?\n\nThanks,\nJordan\n',
    },
    {
      key: 'fu-grace-onboarding-copy',
      to: COLLEAGUES.grace,
      days: 3.5,
      subject: 'Onboarding copy: could you review?',
      body: 'Hi Grace,\n\nCould you review the new onboarding copy before Thursday? It is in the shared doc, tab "v3".\n\nJordan\n',
      labels: [LABELS.work],
    },
    {
      key: 'fu-sam-hike',
      to: FRIENDS.sam,
      days: 19.1,
      subject: 'Hike on the 12th?',
      body: 'Sam,\n\nAre you still up for the ridge walk on the 12th? I can drive if you bring the map.\n\nJ\n',
    },
  ];
  for (const w of waiting) {
    b.add(
      'awaitingReplyFromOwner',
      b.thread(w.key, { box: 'sent', ...(w.labels ? { labels: w.labels } : {}) }, (t) =>
        t.send({ to: [w.to], at: b.ago(w.days, 2, 17), subject: w.subject, body: plain(w.body) }),
      ),
    );
  }

  const taxAt = b.ago(14, 3);
  b.add(
    'awaitingReplyFromOwner',
    b.thread('fu-fiona-tax-documents', { box: 'sent' }, (t) =>
      t.send({
        to: [CONTACTS.fiona],
        at: taxAt,
        subject: 'Documents for the tax return',
        body: mixed(
          plain(
            "Hi Fiona,\n\nAttached are the documents for this year's return. Is anything missing?\n\nBest,\nJordan\n",
          ),
          attachment(
            'income-summary-2026.pdf',
            'application/pdf',
            pdfDocument(['Income summary 2026', 'Jordan Hale', 'Consulting: see ledger']),
          ),
        ),
      }),
    ),
  );

  // Recruiter wrote first; the owner answered with a question 10 days ago; silence since.
  const ines = CONTACTS.recruiter;
  b.add(
    'awaitingReplyFromOwner',
    b.thread(
      'fu-recruiter-salary',
      { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.hiring] },
      (t) => {
        const first = {
          body: 'Hi Jordan,\n\nI am working with a climate-data company looking for a senior platform engineer. Would you be open to a call?\n\nBest,\nInes Carvalho\nTalentBridge\n',
          at: b.ago(12, 4),
          from: ines,
        };
        t.receive({
          from: ines,
          at: first.at,
          subject: 'Senior platform role at a climate-data company',
          body: plain(first.body),
        });
        t.send({
          to: [ines],
          at: b.ago(10, 1),
          body: plain(
            reply(
              'Hi Ines,\n\nPossibly. Could you share the salary range and whether it is remote first?\n\nJordan',
              first,
            ),
          ),
        });
      },
    ),
  );

  // Near misses: owner wrote last, but too recently or too long ago to chase.
  b.thread('fu-sent-too-recent', { box: 'sent', labels: [LABELS.work] }, (t) =>
    t.send({
      to: [COLLEAGUES.lena],
      at: b.ago(0, 20),
      subject: 'Slides for Thursday',
      body: plain('Lena, could you send me your two slides for Thursday?\n\nJordan\n'),
    }),
  );
  b.thread('fu-sent-long-ago', { box: 'sent' }, (t) =>
    t.send({
      to: [CONTACTS.dentist],
      at: b.ago(44, 2),
      subject: 'Appointment change',
      body: plain('Hello,\n\nCould I move my check-up to a morning slot?\n\nJordan Hale\n'),
    }),
  );

  // A note to self is the owner's last word, but waits on nobody.
  b.mark(
    'noteToSelf',
    b.thread('fu-note-to-self', { box: 'inbox' }, (t) =>
      t.send({
        to: [OWNER],
        at: b.ago(6, 1, 30),
        subject: 'note: renew passport + book dentist',
        body: plain('- renew passport (expires March)\n- book dentist\n- ask Derek about the boiler\n'),
        selfNote: true,
      }),
    ),
  );

  // People waiting on the owner: their newest message asks something.
  const asks: Array<{
    key: string;
    from: Person;
    days: number;
    subject: string;
    body: string;
    unread: boolean;
    labels?: string[];
  }> = [
    {
      key: 'ask-elise-christmas',
      from: FRIENDS.elise,
      days: 1.1,
      subject: 'Christmas: are you coming on the 24th?',
      body: 'Hey!\n\nMum wants to know numbers for Christmas Eve. Are you coming on the 24th, and are you bringing anyone?\n\nE x\n',
      unread: true,
      labels: [LABELS.family],
    },
    {
      key: 'ask-noor-book-club',
      from: FRIENDS.noor,
      days: 2.5,
      subject: 'Book club in January',
      body: 'Hi Jordan,\n\nWould you be able to host book club in January? We are reading "The Salt Road".\n\nNoor\n',
      unread: false,
    },
    {
      key: 'ask-ravi-rate-limits',
      from: COLLEAGUES.ravi,
      days: 0.6,
      subject: 'Quick question about API rate limits',
      body: 'Hi Jordan,\n\nFor the public API, do we cap requests per user or per project? The docs say both.\n\nThanks,\nRavi\n',
      unread: true,
      labels: [LABELS.work],
    },
    {
      key: 'ask-mum-parcel',
      from: FRIENDS.mum,
      days: 3.2,
      subject: 'Did the parcel arrive?',
      body: 'Hello love,\n\nI posted the parcel last Monday. Did it arrive? The post office said three days.\n\nLove, Mum\n',
      unread: false,
      labels: [LABELS.family],
    },
  ];
  for (const a of asks) {
    b.add(
      'awaitingOwnerReply',
      b.thread(
        a.key,
        {
          box: 'inbox',
          category: 'CATEGORY_PERSONAL',
          important: true,
          ...(a.labels ? { labels: a.labels } : {}),
        },
        (t) =>
          t.receive({
            from: a.from,
            at: b.ago(a.days, 0, 25),
            subject: a.subject,
            body: plain(a.body),
            unread: a.unread,
          }),
      ),
    );
  }
}
