import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAuthentication } from '../../src/mail/auth-results.js';
import type { Harness } from './helpers.js';
import { ALICE, startHarness, textMail } from './helpers.js';

/*
 * The sandbox models how mail reaches a Gmail mailbox: its MX puts its trace and its own
 * Authentication-Results on top of mail received over SMTP; mail fetched over POP or imported
 * has no report of Gmail's, so a report the sender wrote can never sit on top of SMTP mail.
 */

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

const FORGED =
  'Authentication-Results: mx.google.com; spf=pass smtp.mailfrom=bob@example.com; dkim=pass header.d=example.com; dmarc=pass header.from=example.com';

async function headersOf(id: string): Promise<Array<{ name: string; value: string }>> {
  const res = await h.gmail(`messages/${id}?format=metadata`);
  expect(res.status).toBe(200);
  return res.json.payload.headers as Array<{ name: string; value: string }>;
}

describe('deliver: what each way of arriving adds on top', () => {
  it('SMTP (the default): Gmail’s trace and its own report above the sender’s forged one', async () => {
    const d = h.sandbox.deliver(
      ALICE,
      textMail({ subject: 'smtp', messageId: 's1@x', extraHeaders: [FORGED] }),
      ['INBOX'],
    );
    const headers = await headersOf(d.id);
    const names = headers.map((x) => x.name);
    expect(names.slice(0, 2)).toEqual(['Delivered-To', 'Received']);
    const reports = headers.filter((x) => x.name === 'Authentication-Results').map((x) => x.value);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(
      /^mx\.google\.com;\s+spf=none \(google\.com: example\.com does not designate permitted sender hosts\) smtp\.mailfrom=bob@example\.com$/,
    );
    expect(names.indexOf('Authentication-Results')).toBeLessThan(names.indexOf('From'));
    const auth = readAuthentication(headers, 'mx.google.com');
    expect(auth).toMatchObject({ authservId: 'mx.google.com', spf: 'none', otherReports: 1 });
    expect(auth).not.toHaveProperty('dkim');
  });

  it('SMTP with verdicts given: the report says what the scenario says', async () => {
    const d = h.sandbox.deliver(ALICE, textMail({ subject: 'smtp2', messageId: 's2@x' }), ['INBOX'], {
      auth: {
        spf: 'pass',
        mailfrom: 'bob@example.com',
        ip: '192.0.2.5',
        host: 'mail.example.com',
        dkim: [{ result: 'pass', d: 'example.com', s: 's1' }],
        dmarc: { result: 'pass', policy: 'p=NONE', headerFrom: 'example.com' },
      },
    });
    const auth = readAuthentication(await headersOf(d.id), 'mx.google.com');
    expect(auth).toMatchObject({
      spf: 'pass',
      dkim: 'pass',
      dkimAligned: true,
      dmarc: 'pass',
      otherReports: 0,
    });
  });

  it('POP fetch: the fetcher’s lines and no report of Gmail’s', async () => {
    const d = h.sandbox.deliver(ALICE, textMail({ subject: 'pop', messageId: 'p1@x' }), ['INBOX'], {
      via: 'pop',
    });
    const headers = await headersOf(d.id);
    expect(headers.map((x) => x.name).slice(0, 3)).toEqual([
      'Delivered-To',
      'Received',
      'X-Gmail-Fetch-Info',
    ]);
    expect(headers.find((x) => x.name === 'Received')?.value).toMatch(/by mx\.google\.com with POP3/);
    expect(headers.some((x) => x.name === 'Authentication-Results')).toBe(false);
    expect(readAuthentication(headers, 'mx.google.com')).toMatchObject({ unchecked: true, otherReports: 0 });
  });

  it('import: the source exactly as given', async () => {
    const raw = textMail({ subject: 'imported', messageId: 'i1@x' });
    const d = h.sandbox.deliver(ALICE, raw, ['INBOX'], { via: 'import' });
    const res = await h.gmail(`messages/${d.id}?format=raw`);
    expect(Buffer.from(res.json.raw as string, 'base64url').toString('utf8')).toBe(raw);
  });
});
