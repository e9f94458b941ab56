import { describe, expect, it } from 'vitest';

import { parseRawMessage } from '../../src/mail/mime.js';
import { ageOf, aggregateDigest, partsHidden, threadFacts, threadNeedsParts } from '../../src/mail/triage.js';
import type { ThreadFacts } from '../../src/mail/triage.js';
import type { MailMessage, MailThread } from '../../src/mail/types.js';

const NOW = Date.UTC(2026, 10, 30, 9, 0);
const DAY = 86_400_000;

let seq = 0;
function msg(raw: string[], labels: string[], daysAgo = 1): MailMessage {
  const text = raw.join('\r\n');
  const { headers, root } = parseRawMessage(text);
  seq++;
  return {
    id: `m${seq}`,
    threadId: 't',
    labelIds: labels,
    internalDate: NOW - daysAgo * DAY,
    snippet: '',
    sizeEstimate: text.length,
    headers,
    root,
  };
}

/** format=metadata: the top-level type is known (payload.mimeType), the parts are not. */
function metadataOf(m: MailMessage): MailMessage {
  const { body: _body, ...root } = m.root;
  return { ...m, root: { ...root, children: [] } };
}

const plain = (from: string, extra: string[] = [], body = 'Hi.') => [
  `From: ${from}`,
  'To: me@home.example',
  ...extra,
  'Content-Type: text/plain; charset=utf-8',
  '',
  body,
  '',
];

function mixed(from: string, part: string[]): string[] {
  return [
    `From: ${from}`,
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'See attached.',
    '--b1',
    ...part,
    '--b1--',
    '',
  ];
}
const PDF = [
  'Content-Type: application/pdf; name="a.pdf"',
  'Content-Disposition: attachment; filename="a.pdf"',
  '',
  'JVBERi0=',
];
const ICS = [
  'Content-Type: text/calendar; method=REQUEST; charset=utf-8',
  '',
  'BEGIN:VCALENDAR',
  'END:VCALENDAR',
];

const thread = (id: string, ...messages: MailMessage[]): MailThread => ({ id, messages });

describe('which threads need their parts read', () => {
  it('opens mixed and report mail, and Outlook invites; never text or alternative mail', () => {
    const withPdf = msg(mixed('a@x.example', PDF), ['INBOX']);
    expect(partsHidden(metadataOf(withPdf))).toBe(true);
    expect(partsHidden(withPdf)).toBe(false);
    expect(partsHidden(metadataOf(msg(plain('a@x.example'), ['INBOX'])))).toBe(false);
    const alt = msg(
      [
        'From: a@x.example',
        'Content-Type: multipart/alternative; boundary="b"',
        '',
        '--b',
        '',
        'x',
        '--b--',
        '',
      ],
      ['INBOX'],
    );
    expect(partsHidden(metadataOf(alt))).toBe(false);
    const outlook = metadataOf(
      msg(
        [
          'From: a@x.example',
          'Content-Class: urn:content-classes:calendarmessage',
          'Content-Type: multipart/alternative; boundary="b"',
          '',
          '--b',
          '',
          'x',
          '--b--',
          '',
        ],
        ['INBOX'],
      ),
    );
    expect(partsHidden(outlook)).toBe(true);
    expect(threadNeedsParts(thread('t', metadataOf(withPdf)))).toBe(true);
  });
});

describe('facts of one thread', () => {
  it('takes the kind of mail from who started it and risks from any received message', () => {
    const t = thread(
      't1',
      msg(plain('News <news@shop.example>', ['List-Id: <news.shop.example>']), ['INBOX']),
      msg(plain('Me <me@home.example>'), ['SENT'], 0.9),
      msg(plain('Clara <clara@shop.example>', ['Reply-To: pay@elsewhere.example']), ['INBOX', 'UNREAD'], 0.5),
    );
    const f = threadFacts(t, []);
    expect(f.sender).toEqual({ address: 'news@shop.example', name: 'News' });
    expect(f.signals).toEqual(['newsletter', 'replyToMismatch']);
    expect(f.unread).toBe(true);
    expect(f.labelIds.sort()).toEqual(['INBOX', 'SENT']);
    expect(f.lastAt).toBe(NOW - 0.5 * DAY);
  });

  it("does not call a thread automated because of an auto-reply to the owner's message", () => {
    const t = thread(
      't2',
      msg(plain('Ann <ann@friends.example>'), ['INBOX']),
      msg(plain('Ann <ann@friends.example>', ['Auto-Submitted: auto-replied']), ['INBOX']),
    );
    expect(threadFacts(t, []).signals).toEqual([]);
  });

  it('finds attachments and invites in a full read, and says when the parts were not read', () => {
    const pdf = msg(mixed('a@x.example', PDF), ['INBOX']);
    expect(threadFacts(thread('t', pdf), [])).toMatchObject({
      attachment: true,
      partsRead: true,
      signals: [],
    });
    const invite = msg(mixed('a@x.example', ICS), ['INBOX']);
    expect(threadFacts(thread('t', invite), []).signals).toEqual(['calendar']);
    expect(threadFacts(thread('t', metadataOf(pdf)), [])).toMatchObject({
      attachment: false,
      partsRead: false,
    });
  });

  it('does not count an inline image as an attachment', () => {
    const related = msg(
      [
        'From: a@x.example',
        'Content-Type: multipart/related; boundary="r"',
        '',
        '--r',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<img src="cid:logo">',
        '--r',
        'Content-Type: image/png',
        'Content-ID: <logo>',
        '',
        'iVBORw0KGgo=',
        '--r--',
        '',
      ],
      ['INBOX'],
    );
    expect(threadFacts(thread('t', related), []).attachment).toBe(false);
  });
});

describe('the digest', () => {
  const facts = (id: string, o: Partial<ThreadFacts> = {}): ThreadFacts => ({
    threadId: id,
    sender: { address: 'ann@x.example', name: 'Ann' },
    lastAt: NOW - DAY * 2,
    unread: false,
    labelIds: ['INBOX'],
    signals: [],
    attachment: false,
    partsRead: true,
    ...o,
  });
  const options = {
    now: NOW,
    topSenders: 2,
    maxLabels: 10,
    labelName: (id: string) => (id === 'Label_1' ? 'Work' : id),
  };

  it('buckets ages on rolling windows from the newest message', () => {
    expect(ageOf(NOW - DAY + 1, NOW)).toBe('today');
    expect(ageOf(NOW - DAY, NOW)).toBe('thisWeek');
    expect(ageOf(NOW - 7 * DAY, NOW)).toBe('thisMonth');
    expect(ageOf(NOW - 30 * DAY, NOW)).toBe('older');
    expect(ageOf(NOW + DAY, NOW)).toBe('today');
  });

  it('counts, names labels, groups senders and keeps at most 3 newest examples', () => {
    const d = aggregateDigest(
      [
        facts('t1', {
          unread: true,
          signals: ['newsletter'],
          labelIds: ['INBOX', 'Label_1'],
          lastAt: NOW - 1000,
        }),
        facts('t2', { sender: { address: 'ANN@x.example'.toLowerCase(), name: 'Ann L.' }, attachment: true }),
        facts('t3', {
          sender: { address: 'bo@y.example', name: 'Bo' },
          signals: ['newsletter', 'automated'],
        }),
        facts('t4', {
          sender: { address: 'cy@z.example', name: 'Cy' },
          lastAt: NOW - 40 * DAY,
          partsRead: false,
        }),
        facts('t5', { unread: true, signals: ['newsletter'], lastAt: NOW - 10 * DAY }),
      ],
      options,
    );
    expect(d.threads).toBe(5);
    expect(d.unread).toEqual({ threads: 2, examples: ['t1', 't5'] });
    expect(d.attachments).toEqual({ threads: 1, examples: ['t2'] });
    expect(d.signals.newsletter).toEqual({ threads: 3, unread: 2, examples: ['t1', 't3', 't5'] });
    expect(d.signals.calendar).toEqual({ threads: 0, unread: 0, examples: [] });
    expect(d.ages.today.examples).toEqual(['t1']);
    expect(d.ages.thisWeek.threads).toBe(2);
    expect(d.ages.thisMonth.examples).toEqual(['t5']);
    expect(d.ages.older.examples).toEqual(['t4']);
    expect(d.labels).toEqual([
      { label: 'INBOX', threads: 5, unread: 2, examples: ['t1', 't2', 't3'] },
      { label: 'Work', threads: 1, unread: 1, examples: ['t1'] },
    ]);
    expect(d.sendersFound).toBe(3);
    expect(d.senders).toHaveLength(2);
    expect(d.senders[0]).toMatchObject({
      address: 'ann@x.example',
      threads: 3,
      unread: 2,
      signals: { newsletter: 2 },
      examples: ['t1', 't2', 't5'],
      lastDate: new Date(NOW - 1000).toISOString(),
    });
    expect(d.partsNotRead).toBe(1);
  });

  it('cuts the label list and says how many there were', () => {
    const d = aggregateDigest(
      [facts('t1', { labelIds: ['INBOX', 'A', 'B', 'C'] }), facts('t2', { labelIds: ['B'] })],
      { ...options, maxLabels: 2 },
    );
    expect(d.labels.map((l) => l.label)).toEqual(['B', 'A']);
    expect(d.labelsFound).toBe(4);
  });
});
