import { describe, expect, it } from 'vitest';

import {
  asciiImitation,
  isMixedScript,
  judgeLookalike,
  scriptsOf,
  skeleton,
} from '../../src/mail/lookalike.js';
import { messageSignals, senderDomains } from '../../src/mail/signals.js';
import type { Header, MailMessage, MimeNode } from '../../src/mail/types.js';

const node = (mimeType: string, children: MimeNode[] = [], filename = ''): MimeNode => ({
  partId: '',
  mimeType,
  headers: [],
  filename,
  size: 0,
  children,
});

function message(headers: Array<[string, string]>, root: MimeNode = node('text/plain')): MailMessage {
  const hs: Header[] = headers.map(([name, value]) => ({ name, value }));
  return {
    id: 'm',
    threadId: 't',
    labelIds: [],
    internalDate: 0,
    snippet: '',
    sizeEstimate: 0,
    headers: hs,
    root,
  };
}

const signalsOf = (headers: Array<[string, string]>, root?: MimeNode, refs: string[] = []) =>
  messageSignals(message(headers, root), refs);
const present = (headers: Array<[string, string]>, root?: MimeNode, refs: string[] = []) =>
  signalsOf(headers, root, refs).present;
const FROM: [string, string] = ['From', 'Ann Lee <ann@shop.example>'];

describe('newsletter', () => {
  it.each([
    ['List-Id', 'Weekend Bakes <news.weekendbakes.example>'],
    ['List-Unsubscribe', '<mailto:unsubscribe@shop.example>'],
    ['Precedence', 'bulk'],
    ['Precedence', 'list'],
    ['Precedence', 'Junk'],
  ])('%s: %s', (name, value) => {
    expect(present([FROM, [name, value]])).toEqual(['newsletter']);
  });

  it('is not set for person-to-person mail or other Precedence values', () => {
    expect(present([FROM, ['Subject', 'lunch?']])).toEqual([]);
    expect(present([FROM, ['Precedence', 'first-class']])).toEqual([]);
  });
});

describe('automated', () => {
  it.each([
    ['Auto-Submitted', 'auto-generated'],
    ['Auto-Submitted', 'auto-replied; owner-email="x@y.example"'],
    ['X-Autoreply', 'yes'],
    ['X-Autorespond', 'vacation'],
    ['X-Auto-Response-Suppress', 'All'],
    ['Precedence', 'auto_reply'],
  ])('%s: %s', (name, value) => {
    expect(present([FROM, [name, value]])).toEqual(['automated']);
  });

  it('is not set by Auto-Submitted: no (RFC 3834 §5)', () => {
    expect(present([FROM, ['Auto-Submitted', 'no']])).toEqual([]);
  });

  it.each([
    'noreply@x.example',
    'no-reply@x.example',
    'No_Reply+billing@x.example',
    'donotreply@x.example',
    'do-not-reply@x.example',
    'MAILER-DAEMON@mx1.x.example',
    'postmaster@x.example',
    'messages-noreply@linkmesh.example',
    'team.no-reply@x.example',
  ])('no-reply sender %s', (address) => {
    expect(present([['From', `Robot <${address}>`]])).toEqual(['automated']);
  });

  it('does not take people for robots', () => {
    expect(present([['From', 'Noreen <noreen@x.example>']])).toEqual([]);
    expect(present([['From', 'replies@x.example']])).toEqual([]);
    expect(present([['From', 'anna.noreen@x.example']])).toEqual([]);
  });

  it('is set for a delivery status report (multipart/report)', () => {
    expect(present([FROM], node('multipart/report', [node('text/plain')]))).toEqual(['automated']);
  });
});

describe('calendar', () => {
  it('finds a text/calendar part inside multipart/alternative', () => {
    const root = node('multipart/mixed', [
      node('multipart/alternative', [node('text/plain'), node('text/calendar')]),
    ]);
    expect(present([FROM], root)).toEqual(['calendar']);
  });

  it('finds an .ics attachment whatever its type', () => {
    const root = node('multipart/mixed', [
      node('text/plain'),
      node('application/octet-stream', [], 'Invite.ICS'),
    ]);
    expect(present([FROM], root)).toEqual(['calendar']);
  });

  it('is not set for other attachments', () => {
    const root = node('multipart/mixed', [node('text/plain'), node('application/pdf', [], 'invoice.pdf')]);
    expect(present([FROM], root)).toEqual([]);
  });
});

describe('replyToMismatch', () => {
  it("names the Reply-To's registrable domain when it is another organisation", () => {
    const s = signalsOf([
      ['From', 'Fiona Blake <fiona.blake@ledgerwise.example>'],
      ['Reply-To', 'Fiona Blake <fiona.blake.accounts@quickmail-box.example>'],
    ]);
    expect(s).toEqual({ present: ['replyToMismatch'], details: { replyTo: 'quickmail-box.example' } });
  });

  it('accepts a Reply-To on a sibling subdomain or the same domain', () => {
    expect(
      present([
        ['From', 'a@news.shop.co.uk'],
        ['Reply-To', 'help@support.shop.co.uk'],
      ]),
    ).toEqual([]);
    expect(present([FROM, ['Reply-To', 'Ann <ann@SHOP.example>']])).toEqual([]);
  });

  it('flags another tenant of a hosting suffix (private PSL section)', () => {
    expect(
      present([
        ['From', 'a@victim.github.io'],
        ['Reply-To', 'b@attacker.github.io'],
      ]),
    ).toEqual(['replyToMismatch']);
  });
});

describe('displayNameSpoof', () => {
  it('flags an address of another domain in the display name', () => {
    const s = signalsOf([['From', '"security@northwind-bank.com" <alerts@evil.example>']]);
    expect(s).toEqual({ present: ['displayNameSpoof'], details: { claims: 'northwind-bank.com' } });
  });

  it('flags a URL or a domain name in the display name', () => {
    expect(signalsOf([['From', '"https://www.paypal.com/help" <x@evil.example>']]).details.claims).toBe(
      'paypal.com',
    );
    expect(signalsOf([['From', 'Amazon.co.uk Orders <x@evil.example>']]).details.claims).toBe('amazon.co.uk');
  });

  it('accepts its own organisation and words that only look like domains', () => {
    expect(present([['From', 'Amazon.com <ship-confirm@amazon.com>']])).toEqual([]);
    expect(present([['From', '"help@support.shop.example" <ann@shop.example>']])).toEqual([]);
    expect(present([['From', 'J.R.R. Tolkien <jrr@shop.example>']])).toEqual([]);
    expect(present([['From', 'Dr.Smith <smith@shop.example>']])).toEqual([]);
  });
});

describe('lookalike domains (UTS #39)', () => {
  it('skeletons come from the confusables table: m is rn, Greek alpha and Cyrillic a are a', () => {
    expect(skeleton('marlowefreight')).toBe(skeleton('rnarlowefreight'));
    expect(skeleton('northwind-b\u03b1nk')).toBe(skeleton('northwind-bank'));
    expect(skeleton('g00gle')).toBe(skeleton('google'));
    expect(skeleton('northwind-bank')).not.toBe(skeleton('northwind-banc'));
  });

  it('knows scripts and which mixes UTS #39 allows', () => {
    expect([...scriptsOf('northwind-b\u03b1nk')]).toEqual(['Latin', 'Greek']);
    expect(isMixedScript('northwind-b\u03b1nk')).toBe(true);
    expect(isMixedScript('\u043f\u0440\u0438\u043c\u0435\u0440')).toBe(false);
    expect(isMixedScript('abc\u6771\u4eac\u3072\u3089')).toBe(false);
    expect(isMixedScript('b\u00fccher-2024')).toBe(false);
    expect(asciiImitation('northwind-bank')).toBeUndefined();
  });

  it('flags a mixed-script From label and names what it passes for', () => {
    const s = signalsOf([['From', 'Northwind Bank <security@northwind-b\u03b1nk.com>']]);
    expect(s).toEqual({ present: ['lookalikeDomain'], details: { resembles: 'northwind-bank.com' } });
  });

  it('flags an A-label that decodes to a mixed-script label', () => {
    expect(judgeLookalike('xn--northwind-bnk-61k.com')).toEqual({ resembles: 'northwind-bank.com' });
  });

  it('flags a whole-script imitation (every letter Cyrillic)', () => {
    expect(judgeLookalike('\u0455\u0441\u043e\u0440\u0435.com')).toEqual({ resembles: 'scope.com' });
  });

  it('flags an A-label that does not decode', () => {
    expect(judgeLookalike('xn--zz.example')).toEqual({});
  });

  it('flags rn-for-m against the real name in the same result, and not the real name', () => {
    const refs = ['marlowefreight.com', 'rnarlowefreight.com', 'northwind-bank.com'];
    expect(judgeLookalike('rnarlowefreight.com', refs)).toEqual({ resembles: 'marlowefreight.com' });
    expect(judgeLookalike('tracking.marlowefreight.com', refs)).toBeUndefined();
    expect(judgeLookalike('rnarlowefreight.com')).toBeUndefined();
  });

  it('flags digits for letters against the real name, not the other way round', () => {
    expect(judgeLookalike('g00gle.example', ['google.example'])).toEqual({ resembles: 'google.example' });
    expect(judgeLookalike('google.example', ['g00gle.example'])).toBeUndefined();
  });

  it('does not flag genuine brand mail next to its imitations', () => {
    const refs = ['northwind-b\u03b1nk.com', 'xn--northwind-bnk-61k.com', 'rnarlowefreight.com'];
    for (const from of ['statements@northwind-bank.com', 'tracking@marlowefreight.com']) {
      expect(present([['From', `Brand <${from}>`]], undefined, refs)).toEqual([]);
    }
  });

  it('does not flag genuine internationalised names', () => {
    expect(judgeLookalike('xn--bcher-kva.de')).toBeUndefined();
    expect(judgeLookalike('\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444')).toBeUndefined();
    expect(judgeLookalike('\u6771\u4eac.jp')).toBeUndefined();
  });
});

describe('senderDomains', () => {
  it('collects every From domain of a result once', () => {
    const t = (from: string) => ({ id: from, messages: [message([['From', from]])] });
    expect(senderDomains([t('A <a@x.example>'), t('b@X.example'), t('c@y.example, d@z.example')])).toEqual([
      'x.example',
      'y.example',
      'z.example',
    ]);
  });
});

describe('multipleFrom (issue 23)', () => {
  it('flags several From addresses or fields, never one', () => {
    expect(present([['From', 'PayPal <service@paypal.com>, Evil <x@evil.example>']])).toContain(
      'multipleFrom',
    );
    expect(present([FROM, ['From', 'x@evil.example']])).toContain('multipleFrom');
    expect(present([FROM])).not.toContain('multipleFrom');
  });
});
