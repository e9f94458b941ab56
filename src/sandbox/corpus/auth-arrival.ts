/**
 * Authentication-Results by how mail arrived. Gmail puts its own report on top of mail its MX
 * received over SMTP; mail imported from an old mailbox or fetched over POP has no report of
 * Gmail's, so whatever report it carries was written by another server — or by the sender.
 * Only the topmost report counts, and only when it is the trusted id's (RFC 8601 §5, §7.1).
 */
import { authResultsValue, ipFor, type AuthSpec } from './auth.js';
import type { CorpusBuilder } from './builder.js';
import { formatDate, plain, type Person } from './mime.js';

const spec = (over: Partial<AuthSpec> & { mailfrom: string; host: string }): AuthSpec => ({
  spf: 'pass',
  ip: ipFor(over.host),
  dkim: [],
  dmarc: null,
  ...over,
});

/** The report a sender forges: Gmail's authserv-id, everything passing. */
function forgedPass(domain: string, rng: ReturnType<CorpusBuilder['rng']>): string {
  return authResultsValue(
    spec({
      mailfrom: `billing@${domain}`,
      host: `mail-out.${domain}`,
      dkim: [{ result: 'pass', d: domain, s: 'k2026' }],
      dmarc: { result: 'pass', policy: 'p=REJECT sp=REJECT dis=NONE', headerFrom: domain },
    }),
    rng,
  );
}

export function addAuthArrivalCases(b: CorpusBuilder): void {
  const rng = b.rng('auth-arrival');

  // 1. Imported from an old mailbox: its top report is the old provider's; a forged Gmail "pass"
  //    sits below it. Nothing of Gmail's is on top, so nothing was checked.
  const harbour: Person = { name: 'Harbour Water', email: 'billing@harbour-water.example' };
  const oldHost = 'mx1.oldmail.example';
  const importedAt = b.ago(40, 6, 12);
  const imported = b.thread('auth-imported-forged-below', { box: 'archive' }, (t) =>
    t.receive({
      from: harbour,
      to: [{ name: 'Jordan Hale', email: 'jordan.hale@oldmail.example' }],
      at: importedAt,
      subject: 'Final notice: your water account is overdue',
      body: plain(
        'Your account is 60 days overdue. Pay today to avoid disconnection:\nhttps://harbour-water-payments.example/pay\n\nHarbour Water\n',
      ),
      via: 'import',
      auth: null,
      lower: [
        ['Return-Path', `<${harbour.email}>`],
        [
          'Received',
          `from smtp.bulk-relay.example (smtp.bulk-relay.example [${ipFor('smtp.bulk-relay.example')}])\n        by ${oldHost}; ${formatDate(importedAt, 0)}`,
        ],
        [
          'Authentication-Results',
          `${oldHost};\n       spf=softfail smtp.mailfrom=harbour-water.example;\n       dkim=none;\n       dmarc=fail header.from=harbour-water.example`,
        ],
        ['Authentication-Results', forgedPass('harbour-water.example', rng)],
      ],
    }),
  );
  b.mark('authImportedForgedBelow', imported);

  // 2. Received over SMTP: Gmail's failing report on top, and below it a forged "pass" whose
  //    field name is written "Authentication-Results :" (space before the colon).
  const parcel: Person = { name: 'Parcelpoint', email: 'notify@parcelpoint.example' };
  const spaced = b.thread('auth-spaced-field-name', { box: 'archive' }, (t) =>
    t.receive({
      from: parcel,
      at: b.ago(16, 3, 40),
      subject: 'We could not deliver your parcel: confirm your address',
      body: plain(
        'We tried to deliver parcel PP-88213 today. Confirm your address and pay the EUR 1.99 redelivery fee:\nhttps://parcelpoint-redelivery.example/confirm\n',
      ),
      auth: spec({
        spf: 'fail',
        mailfrom: parcel.email,
        host: 'vps-77.hosting.example',
        dmarc: { result: 'fail', policy: 'p=REJECT sp=REJECT dis=NONE', headerFrom: 'parcelpoint.example' },
      }),
      lower: [['Authentication-Results ', forgedPass('parcelpoint.example', rng)]],
    }),
  );
  b.mark('authSpacedFieldName', spaced);

  // 3. Gmail's report with an RFC 8601 version token ("mx.google.com 1;"), the only report:
  //    a well-formed report of the trusted id, so its verdicts stand.
  const club: Person = { name: 'Kelby Rowing Club', email: 'secretary@kelby-rowing.example', tz: 0 };
  const versioned = b.thread('auth-versioned-only-report', { box: 'archive' }, (t) =>
    t.receive({
      from: club,
      at: b.ago(21, 9, 5),
      subject: 'Winter training timetable',
      body: plain(
        'Hello all,\n\nWinter training starts on Saturday: 08:00 on the water, 10:00 ergs in the boathouse.\n\nThe timetable is on the noticeboard.\n\nMorag\n',
      ),
      auth: spec({
        mailfrom: club.email,
        host: 'mail.kelby-rowing.example',
        dkim: [{ result: 'pass', d: 'kelby-rowing.example', s: 'krc1' }],
        dmarc: {
          result: 'pass',
          policy: 'p=QUARANTINE sp=QUARANTINE dis=NONE',
          headerFrom: 'kelby-rowing.example',
        },
        version: 1,
      }),
    }),
  );
  b.mark('authVersionedOnlyReport', versioned);
  b.add('notViaSmtp', imported);
}
