/**
 * Conversations in the shapes quote-stripping must handle: a long thread where every reply
 * quotes everything before it, an Outlook "-----Original Message-----" reply, an inline reply and
 * a forwarded message.
 */
import type { CorpusBuilder } from './builder.js';
import { plain, type Person } from './mime.js';
import { COLLEAGUES, LABELS, OWNER } from './people.js';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const LONG_MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

const local = (ms: number, p: Person): Date => new Date(ms + (p.tz ?? 0) * 60_000);
const hhmm = (d: Date): string =>
  `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;

/** "Mon, 23 Nov 2026 at 14:05" in the writer's zone, as Gmail prints it. */
function gmailDate(ms: number, p: Person): string {
  const d = local(ms, p);
  return `${WEEKDAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} at ${hhmm(d)}`;
}

/** Gmail's attribution line. */
export const gmailAttribution = (ms: number, p: Person): string =>
  `On ${gmailDate(ms, p)}, ${p.name} <${p.email}> wrote:`;

/** Every line prefixed with "> " (">" alone before an already quoted line), RFC 3676 style. */
export const quote = (text: string): string =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (l === '' ? '>' : l.startsWith('>') ? `>${l}` : `> ${l}`))
    .join('\n');

export const reply = (text: string, prev: { body: string; at: number; from: Person }): string =>
  `${text}\n\n${gmailAttribution(prev.at, prev.from)}\n\n${quote(prev.body)}\n`;

function outlookSent(ms: number, p: Person): string {
  const d = local(ms, p);
  const h = d.getUTCHours() % 12 || 12;
  const ampm = d.getUTCHours() < 12 ? 'AM' : 'PM';
  return `${LONG_DAYS[d.getUTCDay()]}, ${LONG_MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} ${h}:${String(d.getUTCMinutes()).padStart(2, '0')} ${ampm}`;
}

export function addConversations(b: CorpusBuilder): void {
  const { priya, tomas, hannah, marcus, oskar, lena } = COLLEAGUES;
  const work = {
    box: 'inbox',
    category: 'CATEGORY_PERSONAL',
    labels: [LABELS.work, LABELS.projects],
  } as const;

  // 1. Eight messages, each quoting the whole history below it.
  const cast = [priya, OWNER, tomas, hannah];
  const steps: Array<[Person, number, string]> = [
    [
      priya,
      18.2,
      'Hi all,\n\nHere is the draft launch checklist for Atlas (launch 14 January):\n1. Data migration\n2. Monitoring and on-call\n3. Customer comms\n4. Rollback plan\n\nCan each of you take a section?\n\nPriya',
    ],
    [
      tomas,
      17.9,
      'I will take data migration. One question: are we freezing schema changes from 7 January?\n\nTomás',
    ],
    [OWNER, 17.6, 'Yes, freeze from 7 January. I will take monitoring and on-call.\n\nJordan'],
    [hannah, 16.8, 'Comms is mine. I will have the announcement drafted by Friday.\n\nHannah'],
    [priya, 15.4, 'Great, thank you. Tomás, could you also add the rollback steps under section 4?\n\nPriya'],
    [tomas, 13.7, 'Rollback steps are in the doc now, sections 4.1 to 4.3. They need a dry run.\n\nTomás'],
    [
      hannah,
      11.9,
      'Announcement draft is in the shared folder. Jordan, could you check the monitoring paragraph?\n\nHannah',
    ],
    [priya, 9.3, 'Thanks everyone, this is in good shape. I will lock the checklist on Monday.\n\nPriya'],
  ];
  const long = b.thread('conv-long-quoted', work, (t) => {
    let prev: { body: string; at: number; from: Person } | undefined;
    for (const [who, days, text] of steps) {
      const at = b.ago(days, 0, 13);
      const body = prev ? reply(text, prev) : `${text}\n`;
      const to = cast.filter((p) => p !== who);
      if (who === OWNER) t.send({ to, at, body: plain(body) });
      else
        t.receive({
          from: who,
          to,
          at,
          body: plain(body),
          ...(prev ? {} : { subject: 'Atlas launch checklist' }),
        });
      prev = { body, at, from: who };
    }
  });
  b.mark('longQuoted', long);

  // 2. Outlook's reply header block instead of an attribution line.
  const outlook = b.thread('conv-outlook-vendor', { ...work, labels: [LABELS.work] }, (t) => {
    const asked = b.ago(8, 5, 4);
    const question =
      'Hi Marcus,\n\nThe support contract with Halyard Systems renews on 31 December. Do you want to renew for one year or two?\nThe two-year price is 8% lower.\n\nJordan\n';
    t.send({
      to: [marcus],
      at: asked,
      subject: 'Vendor contract renewal: Halyard Systems',
      body: plain(question),
    });
    const answer =
      `Jordan,\n\nLet's go with two years, and please ask them to add the weekend support option.\n\nThanks,\nMarcus\n\n` +
      `-----Original Message-----\nFrom: Jordan Hale [mailto:${OWNER.email}]\nSent: ${outlookSent(asked, marcus)}\n` +
      `To: Marcus Webb <${marcus.email}>\nSubject: Vendor contract renewal: Halyard Systems\n\n${question}`;
    t.receive({
      from: marcus,
      at: b.ago(7, 20, 41),
      subject: 'RE: Vendor contract renewal: Halyard Systems',
      body: plain(answer),
      idHost: 'MW4PR11MB5872.namprd11.prod.outlook.example',
      headers: [
        ['Thread-Topic', 'Vendor contract renewal: Halyard Systems'],
        ['Thread-Index', 'AdtK3q0cW1Zl0x9rQ4m2JkE7V1bPzA=='],
        ['X-MS-Has-Attach', ''],
        ['X-Mailer', 'Microsoft Outlook 16.0'],
      ],
    });
  });
  b.mark('outlookReply', outlook);

  // 3. Answers written between the quoted questions.
  const inline = b.thread('conv-inline-deploy', work, (t) => {
    const at = b.ago(4, 6, 30);
    const questions =
      'Hi Oskar,\n\nThree things before the release:\n\n1. Can we move the deploy window to Tuesday?\n2. Who is on call that night?\n3. Do we need a change ticket?\n\nJordan\n';
    t.send({ to: [oskar], cc: [lena], at, subject: 'Release questions', body: plain(questions) });
    t.receive({
      from: oskar,
      cc: [lena],
      at: b.ago(4, 3, 2),
      body: plain(
        `Hi Jordan, answers inline.\n\n${gmailAttribution(at, OWNER)}\n> Hi Oskar,\n>\n> Three things before the release:\n>\n> 1. Can we move the deploy window to Tuesday?\n\nYes, Tuesday 06:00 UTC works for us.\n\n> 2. Who is on call that night?\n\nMe, with Lena as backup.\n\n> 3. Do we need a change ticket?\n\nAlready filed: CHG-4471.\n\n> Jordan\n\nOskar\n`,
      ),
    });
  });
  b.mark('inlineReply', inline);

  // 4. A forwarded message (Gmail's inline forward block).
  const fwdAt = b.ago(2, 9, 12);
  const forwarded = b.thread('conv-forwarded-quote', { ...work, labels: [LABELS.work] }, (t) =>
    t.receive({
      from: hannah,
      at: fwdAt,
      subject: 'Fwd: Quote for the new office chairs',
      body: plain(
        `Jordan, see below. Is this within the budget we agreed?\n\nHannah\n\n---------- Forwarded message ---------\nFrom: Sales <sales@seatwell-furniture.example>\n` +
          `Date: ${gmailDate(b.ago(3, 1), { name: '', email: '', tz: 0 })}\nSubject: Quote for the new office chairs\n` +
          `To: Hannah Cole <${hannah.email}>\n\n\nHello Hannah,\n\nThank you for your enquiry. For 24 Arden task chairs we can offer EUR 289 each,\nEUR 6,936 in total, delivery included. The offer is valid for 30 days.\n\nKind regards,\nSeatwell Furniture sales team\n`,
      ),
      unread: true,
    }),
  );
  b.mark('forwarded', forwarded);
  b.add('awaitingOwnerReply', forwarded);
}
