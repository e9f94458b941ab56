import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { extractBody, htmlToReadableText } from '../../src/mail/body.js';
import { parseRawMessage } from '../../src/mail/mime.js';
import { stripQuotedHistory } from '../../src/mail/quotes.js';

function bodyOf(name: string): string {
  return extractBody(parseRawMessage(readFileSync(new URL(`../fixtures/eml/${name}`, import.meta.url))).root)
    .text;
}

const lines = (...l: string[]): string => l.join('\n');

describe('stripQuotedHistory: drops trailing history', () => {
  it('cuts a Gmail attribution wrapped over two lines and the quote under it', () => {
    expect(stripQuotedHistory(bodyOf('reply-on-wrote.eml'))).toEqual({
      text: 'Thursday works for me. See you at noon.\n\nBob',
      removed: true,
    });
  });

  it('cuts an Outlook "-----Original Message-----" block', () => {
    expect(stripQuotedHistory(bodyOf('outlook-reply.eml'))).toEqual({
      text: 'Approved. Please go ahead.\n\nErin',
      removed: true,
    });
  });

  it('cuts an Outlook From/Sent/To/Subject block with the underscore separator above it', () => {
    const text = lines(
      'Sounds good.',
      '',
      '________________________________',
      'From: Frank <frank@example.com>',
      'Sent: Monday, November 4, 2024 3:12 PM',
      'To: Erin <erin@example.com>',
      'Subject: Budget',
      '',
      'Can you approve the budget?',
    );
    expect(stripQuotedHistory(text)).toEqual({ text: 'Sounds good.', removed: true });
  });

  it.each([
    ['German', 'Am 04.11.2024 um 09:15 schrieb Alice <alice@example.com>:', 'Danke!'],
    ['French', 'Le lun. 4 nov. 2024 à 09:15, Alice <alice@example.com> a écrit :', 'Merci !'],
    ['Spanish', 'El lun, 4 nov 2024 a las 9:15, Alice (<alice@example.com>) escribió:', '¡Gracias!'],
    ['Apple Mail', 'On Nov 4, 2024, at 09:15, Alice <alice@example.com> wrote:', 'Thanks!'],
  ])('cuts a %s attribution', (_lang, attribution, answer) => {
    expect(stripQuotedHistory(lines(answer, '', attribution, '', '> original', '> > older'))).toEqual({
      text: answer,
      removed: true,
    });
  });

  it('cuts a trailing block of ">" lines, with a bare "X wrote:" line above it', () => {
    expect(stripQuotedHistory(lines('Agreed.', '', 'Alice wrote:', '> plan A', '>', '> plan B', ''))).toEqual(
      {
        text: 'Agreed.',
        removed: true,
      },
    );
    expect(stripQuotedHistory(lines('Agreed.', '> plan A'))).toEqual({ text: 'Agreed.', removed: true });
  });

  it('drops a signature separator left dangling and trailing whitespace, with CRLF input', () => {
    const text =
      'Thanks!  \r\n-- \r\n\r\nOn Mon, 4 Nov 2024 at 09:15, Alice <a@example.com> wrote:\r\n> q\r\n';
    expect(stripQuotedHistory(text)).toEqual({ text: 'Thanks!', removed: true });
  });

  it('cuts a Gmail HTML reply once rendered (blockquote becomes "> " lines)', () => {
    const html =
      '<div dir="ltr">Sounds good!<br><br>Bob</div><br><div class="gmail_quote"><div class="gmail_attr">' +
      'On Mon, Nov 4, 2024 at 9:15 AM Alice &lt;<a href="mailto:alice@example.com">alice@example.com</a>&gt; wrote:<br></div>' +
      '<blockquote class="gmail_quote"><div dir="ltr">Lunch?<ul><li>Thu</li><li>Fri</li></ul></div></blockquote></div>';
    expect(stripQuotedHistory(htmlToReadableText(html))).toEqual({
      text: 'Sounds good!\n\nBob',
      removed: true,
    });
  });

  it('cuts the history of a reply to a forward', () => {
    const text = lines(
      'Signed and returned.',
      '',
      'On Mon, Nov 4, 2024 at 11:30 AM Bob <bob@example.com> wrote:',
      '> ---------- Forwarded message ---------',
      '> From: Legal <legal@example.com>',
      '> The contract is ready.',
    );
    expect(stripQuotedHistory(text)).toEqual({ text: 'Signed and returned.', removed: true });
  });
});

describe('stripQuotedHistory: keeps what is not trailing history', () => {
  it('keeps an inline reply whole', () => {
    expect(stripQuotedHistory(bodyOf('inline-reply.eml'))).toEqual({
      text: lines(
        'Answers below.',
        '',
        'On Tue, Nov 5, 2024 at 8:00 AM Alice Example <alice@example.com> wrote:',
        '> Can you send the slides by Friday?',
        '',
        'Yes, Thursday evening at the latest.',
        '',
        '> And who books the room?',
        '',
        'I will.',
      ),
      removed: false,
    });
  });

  it('keeps a Gmail forward whole, including the quote inside it', () => {
    const body = bodyOf('forwarded.eml');
    const out = stripQuotedHistory(body);
    expect(out.removed).toBe(false);
    expect(out.text).toBe(body.trimEnd());
    expect(out.text).toContain('The contract is ready for signature.');
    expect(out.text).toContain('> Is the contract ready?');
  });

  it('keeps an Apple Mail "Begin forwarded message:" whole', () => {
    const text = lines(
      'FYI',
      '',
      'Begin forwarded message:',
      '',
      'From: Legal <legal@example.com>',
      'Subject: Contract',
      'Date: November 4, 2024 at 11:00:00 GMT+1',
      'To: Bob <bob@example.com>',
      '',
      'Ready for signature.',
    );
    expect(stripQuotedHistory(text)).toEqual({ text, removed: false });
  });

  it('does not take a sentence starting with "On" and ending with "wrote:" for an attribution', () => {
    const text = lines('Hi,', 'On reflection, this is what she wrote:', 'the plan is fine.', 'Cheers');
    expect(stripQuotedHistory(text)).toEqual({ text, removed: false });
  });

  it('keeps the text when the history is all there is', () => {
    const text = lines('On Mon, 4 Nov 2024 at 09:15, Alice <a@example.com> wrote:', '> only a quote');
    expect(stripQuotedHistory(text)).toEqual({ text, removed: false });
  });

  it('leaves a message without history as it is (trailing whitespace trimmed)', () => {
    expect(stripQuotedHistory('Plain note.\n\n')).toEqual({ text: 'Plain note.', removed: false });
  });
});
