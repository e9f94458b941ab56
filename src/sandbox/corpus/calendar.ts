/**
 * iTIP (RFC 5546) mail: an invitation, an update of it (same UID, higher SEQUENCE) and a
 * cancellation, each as multipart/alternative with a text/calendar part plus an .ics attachment,
 * the layout calendar servers commonly send.
 */
import { HOUR, type CorpusBuilder, DAY } from './builder.js';
import { alternative, attachment, html, icsDate, mixed, plain, textEntity, type Person } from './mime.js';
import { COLLEAGUES, LABELS, OWNER } from './people.js';

interface EventSpec {
  method: 'REQUEST' | 'CANCEL';
  uid: string;
  sequence: number;
  summary: string;
  start: number;
  minutes: number;
  location: string;
  description: string;
  organizer: Person;
  attendees: Person[];
  stamp: number;
}

/** RFC 5545 §3.1: lines longer than 75 octets are folded with CRLF + one space. */
function foldIcs(line: string): string {
  const out: string[] = [];
  let rest = line;
  while (rest.length > 75) {
    out.push(rest.slice(0, 75));
    rest = ` ${rest.slice(75)}`;
  }
  out.push(rest);
  return out.join('\r\n');
}

const icsText = (s: string): string =>
  s.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\n/g, '\\n');

export function icsCalendar(e: EventSpec): string {
  const cancel = e.method === 'CANCEL';
  const lines = [
    'BEGIN:VCALENDAR',
    'PRODID:-//Brightfold//Team Calendar 4.2//EN',
    'VERSION:2.0',
    'CALSCALE:GREGORIAN',
    `METHOD:${e.method}`,
    'BEGIN:VEVENT',
    `DTSTART:${icsDate(e.start)}`,
    `DTEND:${icsDate(e.start + e.minutes * 60_000)}`,
    `DTSTAMP:${icsDate(e.stamp)}`,
    `ORGANIZER;CN=${e.organizer.name}:mailto:${e.organizer.email}`,
    `UID:${e.uid}`,
    ...e.attendees.map(
      (a) =>
        `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=${a.email === e.organizer.email ? 'ACCEPTED' : 'NEEDS-ACTION'};RSVP=TRUE;CN=${a.name}:mailto:${a.email}`,
    ),
    `DESCRIPTION:${icsText(e.description)}`,
    `LOCATION:${icsText(e.location)}`,
    `SEQUENCE:${e.sequence}`,
    `STATUS:${cancel ? 'CANCELLED' : 'CONFIRMED'}`,
    `SUMMARY:${cancel ? 'Canceled: ' : ''}${icsText(e.summary)}`,
    'TRANSP:OPAQUE',
    ...(cancel
      ? []
      : ['BEGIN:VALARM', 'ACTION:DISPLAY', 'DESCRIPTION:Reminder', 'TRIGGER:-P0DT0H15M0S', 'END:VALARM']),
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return `${lines.map(foldIcs).join('\r\n')}\r\n`;
}

function inviteBody(e: EventSpec, heading: string): ReturnType<typeof mixed> {
  const ics = icsCalendar(e);
  const when = new Date(e.start).toISOString().replace('T', ' ').slice(0, 16);
  const who = e.attendees.map((a) => `${a.name} <${a.email}>`).join('\n');
  const text = `${heading}\n\n${e.summary}\nWhen: ${when} UTC (${e.minutes} minutes)\nWhere: ${e.location}\n\nGuests:\n${who}\n\n${e.description}\n`;
  const markup = `<div style="font-family:Arial,sans-serif"><h2>${heading}</h2><p><b>${e.summary}</b></p><p>When: ${when} UTC (${e.minutes} minutes)<br>Where: ${e.location}</p><p>${e.description.replace(/\n/g, '<br>')}</p></div>`;
  return mixed(
    alternative(plain(text), html(markup), textEntity('calendar', ics, { params: `method=${e.method}` })),
    attachment('invite.ics', 'application/ics', Buffer.from(ics, 'utf8')),
  );
}

export function addCalendar(b: CorpusBuilder): void {
  const priya = COLLEAGUES.priya;
  const team = [priya, OWNER, COLLEAGUES.tomas, COLLEAGUES.hannah];
  const startAt = (days: number, hourUtc: number): number =>
    Math.floor((b.now + days * DAY) / DAY) * DAY + hourUtc * HOUR;
  const review: EventSpec = {
    method: 'REQUEST',
    uid: 'atlas-q4-review-7f3a1c@brightfold.example',
    sequence: 0,
    summary: 'Atlas quarterly review',
    start: startAt(10, 13),
    minutes: 60,
    location: 'Brightfold HQ, room Lovelace / video link in description',
    description:
      'Agenda:\n1. Milestones since September\n2. Budget for Q1\n3. Risks\nVideo: https://meet.brightfold.example/atlas-review',
    organizer: priya,
    attendees: team,
    stamp: b.ago(6, 2),
  };
  b.mark(
    'calendarInvite',
    b.thread(
      'cal-invite-atlas-review',
      { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
      (t) =>
        t.receive({
          from: priya,
          to: team.filter((p) => p !== priya),
          at: review.stamp,
          subject: 'Invitation: Atlas quarterly review',
          body: inviteBody(review, 'You have been invited to the following event.'),
        }),
    ),
  );

  const moved: EventSpec = { ...review, sequence: 1, start: startAt(11, 9), stamp: b.ago(1, 4) };
  b.mark(
    'calendarUpdate',
    b.thread(
      'cal-update-atlas-review',
      { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
      (t) =>
        t.receive({
          from: priya,
          to: team.filter((p) => p !== priya),
          at: moved.stamp,
          subject: 'Updated invitation: Atlas quarterly review',
          body: inviteBody(moved, 'This event has been changed: the time moved to the next morning.'),
          unread: true,
        }),
    ),
  );

  const critique: EventSpec = {
    method: 'CANCEL',
    uid: 'design-critique-0b92e4@brightfold.example',
    sequence: 2,
    summary: 'Design critique: onboarding flow',
    start: startAt(3, 15),
    minutes: 45,
    location: 'Video call',
    description: 'Cancelled: Grace is out this week; we will pick a new slot.',
    organizer: COLLEAGUES.grace,
    attendees: [COLLEAGUES.grace, OWNER, COLLEAGUES.oskar],
    stamp: b.ago(2, 7),
  };
  b.mark(
    'calendarCancel',
    b.thread(
      'cal-cancel-design-critique',
      { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
      (t) =>
        t.receive({
          from: COLLEAGUES.grace,
          to: [OWNER, COLLEAGUES.oskar],
          at: critique.stamp,
          subject: 'Canceled event: Design critique: onboarding flow',
          body: inviteBody(critique, 'This event has been canceled.'),
        }),
    ),
  );
}
