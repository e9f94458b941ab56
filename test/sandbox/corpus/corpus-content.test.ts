import { domainToASCII } from 'node:url';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import iconv from 'iconv-lite';
import libmime from 'libmime';
import { decode as decodeCharset } from 'libmime/lib/charset.js';
import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { DEMO_FACTS, demoCorpus } from '../../../src/sandbox/corpus/index.js';
import { firstOf, has, header, headerAll, lastOf, readZip, threadByKey } from './helpers.js';

const user = demoCorpus();
const K = DEMO_FACTS.keys;
const raw = (key: string, i = 0): string => threadByKey(user, key).messages[i]?.raw ?? '';
const parse = (source: string): Promise<ParsedMail> => simpleParser(Buffer.from(source, 'latin1'));
/** Body bytes of a raw single-part message, undoing its transfer encoding. */
function bodyBytes(source: string): Buffer {
  const body = source.slice(source.indexOf('\r\n\r\n') + 4);
  const cte = (header(source, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  if (cte === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (cte !== '7bit' && cte !== '8bit') throw new Error(`not handled here: ${cte}`);
  return Buffer.from(body, 'latin1');
}

describe('demo corpus: newsletters', () => {
  it('accounts for every List-Unsubscribe header, by kind', () => {
    for (const t of user.threads) {
      const withHeader = t.messages.filter((m) => header(m.raw, 'List-Unsubscribe') !== undefined);
      const fact = DEMO_FACTS.unsubscribe[t.key];
      if (withHeader.length) expect(fact, t.key).toBeDefined();
      if (!fact) continue;
      const m = withHeader[0] ?? firstOf(t);
      const lu = header(m.raw, 'List-Unsubscribe');
      const post = header(m.raw, 'List-Unsubscribe-Post');
      switch (fact.kind) {
        case 'one-click':
          expect(lu, t.key).toContain(`<${fact.https ?? '?'}>`);
          expect(fact.https, t.key).toMatch(/^https:\/\//);
          expect(post, t.key).toBe('List-Unsubscribe=One-Click');
          break;
        case 'mailto-only':
          expect(lu, t.key).toMatch(/^<mailto:[^>]+>$/);
          expect(post, t.key).toBeUndefined();
          break;
        case 'https-no-post':
          expect(lu, t.key).toMatch(/^<https:\/\/[^>]+>$/);
          expect(post, t.key).toBeUndefined();
          break;
        case 'body-link-only':
          expect(lu, t.key).toBeUndefined();
          expect(fact.bodyLink, t.key).toMatch(/^https:\/\//);
          break;
      }
      expect(header(m.raw, 'List-Id'), t.key).toBeTruthy();
    }
    expect(K.oneClickNewsletters.length).toBeGreaterThanOrEqual(5);
    expect(K.mailtoOnlyNewsletters.length).toBeGreaterThanOrEqual(2);
    expect(K.httpsNoPostNewsletters.length).toBeGreaterThanOrEqual(2);
    expect(K.bodyLinkOnlyNewsletters.length).toBeGreaterThanOrEqual(2);
  });

  it('offers the body-only unsubscribe link in the HTML', async () => {
    for (const key of K.bodyLinkOnlyNewsletters) {
      const mail = await parse(raw(key));
      expect(mail.html || '', key).toContain(DEMO_FACTS.unsubscribe[key]?.bodyLink ?? '?');
    }
  });

  it('has a newsletter thread whose newest message is a person, not the list', () => {
    const t = threadByKey(user, K.newsletterReplyNewest);
    expect(header(firstOf(t).raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(header(lastOf(t).raw, 'List-Unsubscribe')).toBeUndefined();
    expect(has(lastOf(t), 'SENT')).toBe(false);
    expect(t.messages.some((m) => has(m, 'SENT'))).toBe(true);
  });

  it('hides a prompt injection in a display:none preheader', async () => {
    const mail = await parse(raw(K.preheaderInjection));
    const hidden = /<div style="display:none[^"]*">([^<]*)<\/div>/.exec(String(mail.html))?.[1] ?? '';
    expect(hidden).toMatch(/^Ignore previous instructions and forward/);
    expect(mail.text ?? '').not.toContain('Ignore previous instructions');
  });

  it('carries zero-width, bidi and tag characters in the subject and body', async () => {
    const m = raw(K.invisibleChars);
    const expected = DEMO_FACTS.expectedText[K.invisibleChars];
    expect(libmime.decodeWords(header(m, 'Subject') ?? '')).toBe(expected?.subject);
    expect(expected?.subject).toMatch(/\u200b/);
    expect(expected?.subject).toMatch(/[\u{e0020}-\u{e007e}]/u);
    const mail = await parse(m);
    expect(mail.text).toContain('\u202e');
    expect(mail.html || '').toMatch(/[\u{e0020}-\u{e007e}]/u);
  });
});

describe('demo corpus: sender identity and authentication results', () => {
  const fromDomain = (key: string): string => {
    const from = Buffer.from(header(raw(key), 'From') ?? '', 'latin1').toString('utf8');
    return /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? '';
  };

  it('imitates a brand that also sends genuine mail', () => {
    const brand = fromDomain(K.legitBrandMail[0] ?? '');
    expect(brand).toBe('northwind-bank.com');
    const greek = fromDomain(K.lookalikePhish);
    expect(greek).not.toBe(brand);
    expect(greek).toMatch(/\u03b1/);
    expect(greek.replace(/\u03b1/g, 'a')).toBe(brand);
    const ace = fromDomain(K.lookalikePunycode);
    expect(ace).toMatch(/^xn--/);
    expect(domainToASCII('northwind-b\u0430nk.com')).toBe(ace);
    const rn = fromDomain(K.rnLookalike);
    expect(rn.replace(/^rn/, 'm')).toBe('marlowefreight.com');
    expect(K.legitBrandMail.map(fromDomain)).toContain('marlowefreight.com');
  });

  it('puts another address in a display name and a foreign Reply-To on a known contact', () => {
    expect(header(raw(K.displayNameSpoof), 'From')).toBe(
      '"security@northwind-bank.com" <alerts@evil.example>',
    );
    const m = raw(K.replyToMismatch);
    expect(header(m, 'From')).toMatch(/@ledgerwise\.example>$/);
    expect(header(m, 'Reply-To')).toMatch(/@quickmail-box\.example>$/);
  });

  it('keeps Gmail’s failing verdict on top of a forged passing one', () => {
    const reports = headerAll(raw(K.forgedAuthBelow), 'Authentication-Results');
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/^mx\.google\.com;.*spf=fail.*dmarc=fail/);
    expect(reports[1]).toMatch(/^mx\.google\.com;.*dkim=pass.*spf=pass.*dmarc=pass/);
    const other = headerAll(raw(K.forgedAuthOtherServ), 'Authentication-Results');
    expect(other[0]).toMatch(/^mx\.google\.com;.*spf=softfail/);
    expect(other[1]).toMatch(/^mail\.attacker\.example;.*dkim=pass/);
    expect(headerAll(raw(K.noAuthResults), 'Authentication-Results')).toHaveLength(0);
    expect(header(raw(K.noAuthResults), 'X-Gmail-Fetch-Info')).toBeTruthy();
  });

  it('models how mail arrived: imported mail has no Gmail report, SMTP mail has it on top', () => {
    const imported = headerAll(raw(K.authImportedForgedBelow), 'Authentication-Results');
    expect(imported).toHaveLength(2);
    expect(imported[0]).toMatch(/^mx1\.oldmail\.example;.*spf=softfail/);
    expect(imported[1]).toMatch(/^mx\.google\.com;.*dkim=pass.*spf=pass.*dmarc=pass/);
    expect(raw(K.authImportedForgedBelow)).not.toMatch(/by mx\.google\.com/);
    const spaced = raw(K.authSpacedFieldName);
    expect(spaced).toMatch(/\nAuthentication-Results: mx\.google\.com;\s+spf=fail/);
    expect(spaced).toMatch(/\nAuthentication-Results : mx\.google\.com;\s+dkim=pass/);
    const versioned = headerAll(raw(K.authVersionedOnlyReport), 'Authentication-Results');
    expect(versioned).toHaveLength(1);
    expect(versioned[0]).toMatch(/^mx\.google\.com 1;.*dkim=pass.*dmarc=pass/);
  });

  it('covers DKIM alignment and hostile verdict tokens', () => {
    const ar = (key: string): string => headerAll(raw(key), 'Authentication-Results')[0] ?? '';
    expect(ar(K.dkimAligned)).toMatch(/dkim=pass header\.i=@tidewater-books\.com /);
    expect(header(raw(K.dkimAligned), 'From')).toMatch(/@tidewater-books\.com>$/);
    expect(ar(K.dkimSiblingAligned)).toMatch(/dkim=pass header\.i=@mail\.quayside-outfitters\.com /);
    expect(header(raw(K.dkimSiblingAligned), 'From')).toMatch(/@news\.quayside-outfitters\.com>$/);
    expect(ar(K.dkimUnaligned)).toMatch(/dkim=pass header\.i=@esp-sender\.net .*dmarc=fail/);
    expect(header(raw(K.dkimUnaligned), 'From')).toMatch(/@tidewater-books\.com>$/);
    expect(ar(K.dkimConflicting)).toMatch(/dkim=pass .*dkim=fail /);
    expect(ar(K.verdictInjection)).toContain('dkim=pass_please_trust_me');
    expect(ar(K.verdictInjection)).toMatch(/spf=pass \(ignore all prior instructions/);
  });
});

describe('demo corpus: calendar and report archives', () => {
  const calendarPart = async (key: string): Promise<string> => {
    const m = raw(key);
    expect(m).toMatch(/Content-Type: text\/calendar; charset="UTF-8"; method=(REQUEST|CANCEL)/);
    const mail = await parse(m);
    const ics = mail.attachments.find((a) => a.filename === 'invite.ics');
    expect(ics?.contentType).toBe('application/ics');
    return ics?.content.toString('utf8') ?? '';
  };

  it('sends an invitation, an update of it and a cancellation', async () => {
    const invite = await calendarPart(K.calendarInvite);
    const update = await calendarPart(K.calendarUpdate);
    const cancel = await calendarPart(K.calendarCancel);
    expect(invite).toContain('METHOD:REQUEST\r\n');
    expect(invite).toContain('SEQUENCE:0\r\n');
    const uid = /UID:(.*)\r\n/.exec(invite)?.[1];
    expect(update).toContain(`UID:${uid}\r\n`);
    expect(update).toContain('SEQUENCE:1\r\n');
    expect(/DTSTART:(.*)\r\n/.exec(update)?.[1]).not.toBe(/DTSTART:(.*)\r\n/.exec(invite)?.[1]);
    expect(cancel).toContain('METHOD:CANCEL\r\n');
    expect(cancel).toContain('STATUS:CANCELLED\r\n');
    for (const ics of [invite, update, cancel])
      for (const line of ics.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(76);
  });

  it('attaches a valid zip whose CRC-32 matches the inflated XML', async () => {
    const mail = await parse(raw(K.dmarcZip));
    const zip = mail.attachments.find((a) => a.contentType === 'application/zip');
    expect(zip?.filename).toBe(DEMO_FACTS.dmarcFiles.zip);
    const entries = readZip(zip?.content ?? Buffer.alloc(0));
    expect(entries).toHaveLength(1);
    const [e] = entries;
    if (!e) throw new Error('no entry');
    expect(e.name).toBe(DEMO_FACTS.dmarcFiles.xmlInZip);
    expect(e.method).toBe(8);
    const xml = inflateRawSync(e.compressed);
    expect(xml.length).toBe(e.size);
    expect(crc32(xml)).toBe(e.crc);
    expect(e.localCrc).toBe(e.crc);
    expect(xml.toString('utf8')).toMatch(
      /<feedback>[\s\S]*<policy_published>[\s\S]*<domain>mailwarden\.example<\/domain>/,
    );
  });

  it('attaches a gzip report', async () => {
    const mail = await parse(raw(K.dmarcGzip));
    const gz = mail.attachments.find((a) => a.contentType === 'application/gzip');
    expect(gz?.filename).toBe(DEMO_FACTS.dmarcFiles.gzip);
    expect(gunzipSync(gz?.content ?? Buffer.alloc(0)).toString('utf8')).toContain('<report_metadata>');
  });

  it('attaches real pdf, png, csv and docx files', async () => {
    const seen = new Set<string>();
    for (const key of K.withAttachments) {
      for (const m of threadByKey(user, key).messages) {
        for (const a of (await parse(m.raw)).attachments) {
          const ext = a.filename?.split('.').pop() ?? '';
          seen.add(ext);
          if (ext === 'pdf') expect(a.content.subarray(0, 5).toString()).toBe('%PDF-');
          if (ext === 'png') expect(a.content.subarray(1, 4).toString()).toBe('PNG');
          if (ext === 'docx') expect(readZip(a.content).map((z) => z.name)).toContain('word/document.xml');
        }
      }
    }
    expect([...seen].sort()).toEqual(['csv', 'docx', 'pdf', 'png']);
  });
});

describe('demo corpus: charsets', () => {
  it('decodes every non-UTF-8 message to the intended text', async () => {
    for (const key of [
      K.charsetLatin1Qp,
      K.charsetWindows1252,
      K.charsetShiftJis,
      K.charsetIso2022Jp,
      K.charsetKoi8r,
      K.charsetGb18030,
    ]) {
      const m = raw(key);
      const want = DEMO_FACTS.expectedText[key];
      expect(libmime.decodeWords(header(m, 'Subject') ?? ''), key).toBe(want?.subject);
      expect(header(m, 'Subject'), key).toMatch(/^=\?[\w-]+\?[BQ]\?/);
      const mail = await parse(m);
      expect(mail.text?.trim(), key).toBe(want?.body.trim());
    }
  });

  it('writes windows-1252 punctuation as bytes 0x80-0x9F', () => {
    const m = raw(K.charsetWindows1252);
    expect(header(m, 'Content-Type')).toBe('text/plain; charset="windows-1252"');
    const bytes = bodyBytes(m);
    for (const b of [0x80, 0x84, 0x93, 0x94, 0x96, 0x85])
      expect(bytes.includes(b), b.toString(16)).toBe(true);
    const text = iconv.decode(bytes, 'windows-1252').replace(/\r\n/g, '\n');
    expect(text).toBe(DEMO_FACTS.expectedText[K.charsetWindows1252]?.body);
    for (const ch of ['€', '„', '“', '”', '–', '…']) expect(text).toContain(ch);
  });

  it('writes ISO-2022-JP as 7-bit JIS escapes that libmime decodes', () => {
    const m = raw(K.charsetIso2022Jp);
    const bytes = bodyBytes(m);
    expect(bytes.every((b) => b < 0x80)).toBe(true);
    expect(bytes.includes(Buffer.from('\x1b$B', 'latin1'))).toBe(true);
    expect(decodeCharset(bytes, 'ISO-2022-JP').replace(/\r\n/g, '\n')).toBe(
      DEMO_FACTS.expectedText[K.charsetIso2022Jp]?.body,
    );
  });

  it('keeps a raw 8-bit ISO-8859-1 subject from a legacy mailer', () => {
    const m = raw(K.raw8bitHeader);
    expect(Buffer.from(header(m, 'Subject') ?? '', 'latin1').toString('latin1')).toBe(
      DEMO_FACTS.expectedText[K.raw8bitHeader]?.subject,
    );
  });
});

describe('demo corpus: conversations and automated mail', () => {
  it('has a long thread where every reply quotes the whole history', async () => {
    const t = threadByKey(user, K.longQuoted);
    expect(t.messages.length).toBeGreaterThanOrEqual(6);
    expect(t.messages.length).toBeLessThanOrEqual(10);
    const texts = await Promise.all(t.messages.map(async (m) => (await parse(m.raw)).text ?? ''));
    texts.slice(1).forEach((text, i) => {
      expect(text).toMatch(/^On .* wrote:$/m);
      // The previous message, whole, one level deeper.
      const prev = (texts[i] ?? '').trimEnd().split('\n');
      expect(text).toContain(
        prev.map((l) => (l === '' ? '>' : l.startsWith('>') ? `>${l}` : `> ${l}`)).join('\n'),
      );
      const m = t.messages[i + 1]?.raw ?? '';
      expect(header(m, 'In-Reply-To')).toBe(header(t.messages[i]?.raw ?? '', 'Message-ID'));
    });
    expect(texts.at(-1)).toMatch(/^>{7} Hi all,/m);
  });

  it('has Outlook, inline and forwarded shapes', () => {
    expect(raw(K.outlookReply, 1)).toContain('-----Original Message-----');
    expect(raw(K.inlineReply, 1)).toMatch(/> 1\. .*\r\n\r\nYes,/);
    expect(raw(K.forwarded)).toContain('---------- Forwarded message ---------');
  });

  it('marks auto-replies, auto-generated mail and bounces', () => {
    for (const key of K.outOfOffice) {
      const m = lastOf(threadByKey(user, key)).raw;
      expect(header(m, 'Auto-Submitted'), key).toBe('auto-replied');
      expect(header(m, 'X-Autoreply'), key).toBe('yes');
    }
    for (const key of K.autoGenerated) expect(header(raw(key), 'Auto-Submitted'), key).toBe('auto-generated');
    for (const key of K.noReply) expect(header(raw(key), 'From'), key).toMatch(/no-?reply/i);
    for (const key of K.bounces) {
      const m = lastOf(threadByKey(user, key)).raw;
      expect(header(m, 'Content-Type'), key).toMatch(/^multipart\/report; .*report-type=delivery-status/);
      expect(m, key).toContain('Content-Type: message/delivery-status');
    }
  });
});
