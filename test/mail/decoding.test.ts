import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { decodeTextBytes } from '../../src/mail/archive/text.js';
import { extractBody, listAttachments } from '../../src/mail/body.js';
import { decodeCharset, decodeUnlabelled, decodeWords, headerValue } from '../../src/mail/headers.js';
import { cleanLine } from '../../src/mail/invisible.js';
import { decodeIso2022Jp } from '../../src/mail/iso-2022-jp.js';
import { parseRawMessage } from '../../src/mail/mime.js';

const bytes = (...parts: Array<string | number[]>): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

function subjectOf(subject: Buffer): string | undefined {
  const raw = Buffer.concat([
    Buffer.from('From: a@example.org\r\nSubject: '),
    subject,
    Buffer.from('\r\n\r\nx\r\n'),
  ]);
  return headerValue(parseRawMessage(raw).headers, 'Subject');
}

function bodyOf(contentType: string, body: Buffer): string {
  const raw = Buffer.concat([
    Buffer.from(
      `From: a@example.org\r\nContent-Type: ${contentType}\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`,
    ),
    body,
  ]);
  return extractBody(parseRawMessage(raw).root).text;
}

describe('RFC 2047 words holding raw 8-bit bytes decode once, in their charset', () => {
  it.each([
    ['ISO-8859-1 Q', bytes('=?iso-8859-1?Q?Fr', [0xf6], 'sche?='), 'Frösche'],
    ['windows-1252 Q', bytes('=?windows-1252?Q?', [0x93], 'quoted', [0x94], '?='), '“quoted”'],
    ['KOI8-R Q', bytes('=?koi8-r?Q?', [0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4], '?='), 'Привет'],
    ['UTF-8 Q', bytes('=?utf-8?Q?Fr', [0xc3, 0xb6], 'sche?='), 'Frösche'],
    [
      'UTF-8 Q beside a Latin-1 word',
      bytes('=?utf-8?Q?', [0xc3, 0xa9], '?= =?iso-8859-1?Q?', [0xe9], '?='),
      'éé',
    ],
    ['8-bit byte in a B word is skipped', bytes('=?utf-8?B?', [0xff], 'SGk=?='), 'Hi'],
  ])('%s', (_name, subject, expected) => {
    expect(subjectOf(subject)).toBe(expected);
  });

  it('reads a word the Gmail API already gave as text the same way', () => {
    expect(decodeWords('=?iso-8859-1?Q?Frösche?=')).toBe('Frösche');
    expect(decodeWords('=?utf-8?Q?Frösche?=')).toBe('Frösche');
    expect(decodeWords('=?koi8-r?Q?Пр?=')).toBe('Пр');
  });
});

describe('one decoder for unlabelled headers and bodies', () => {
  it.each([
    ['UTF-8 with one invalid byte', bytes('Привет ', [0xff]), 'Привет ÿ'],
    ['Latin-1', bytes('Gr', [0xfc, 0xdf], 'e aus K', [0xf6], 'ln'), 'Grüße aus Köln'],
    ['UTF-8 list tag before a Latin-1 subject', bytes('[Übung] Gr', [0xfc, 0xdf], 'e'), '[Übung] Grüße'],
    ['windows-1252 punctuation', bytes([0x93], 'hi', [0x94, 0x20, 0x84]), '“hi” „'],
    ['a truncated UTF-8 sequence', bytes('ok ', [0xe2, 0x82], ' end'), 'ok â‚ end'],
  ])('%s', (_name, raw, expected) => {
    expect(subjectOf(raw)).toBe(expected);
    expect(bodyOf('text/plain', raw)).toBe(expected);
    expect(decodeUnlabelled(raw)).toBe(expected);
  });

  it('reads a stray 0x80 in a header as the NUL Dovecot wrote it for (Gmail drops the NUL); a body keeps €', () => {
    expect(subjectOf(bytes('nul', [0x80], 'in', [0x80], 'subject'))).toBe('nulinsubject');
    expect(cleanLine(subjectOf(bytes('nul', [0x00], 'in', [0x00], 'subject')) ?? '')).toBe('nulinsubject');
    expect(subjectOf(bytes('price ', [0xe2, 0x82, 0xac], '5'))).toBe('price €5');
    expect(subjectOf(bytes('=?windows-1252?Q?=80_5?='))).toBe('€ 5');
    expect(bodyOf('text/plain', bytes([0x93], 'hi', [0x94, 0x20, 0x80]))).toBe('“hi” €');
  });

  it('keeps U+FFFD for a part labelled UTF-8 (WHATWG), so the label is still honoured', () => {
    expect(bodyOf('text/plain; charset=utf-8', bytes('caf', [0xe9], ' ok'))).toBe('caf\ufffd ok');
  });
});

describe('ISO-2022-JP', () => {
  const esc = (s: string): number[] => [0x1b, ...Buffer.from(s, 'latin1')];
  it('decodes JIS X 0208, Roman and half-width katakana, NEC specials included', () => {
    expect(decodeIso2022Jp(bytes(esc('$B'), '$3$s$K$A$O', esc('(B'), ' ok'))).toBe('こんにちは ok');
    expect(decodeIso2022Jp(bytes(esc('(J'), '\\~', esc('(I'), '1', esc('(B'), '\\'))).toBe('¥‾ｱ\\');
    expect(decodeIso2022Jp(bytes(esc('$B'), '-!', esc('(B')))).toBe('①');
  });

  it('gives one U+FFFD per byte that is not JIS, never a surrogate, and keeps the neighbours', () => {
    const sjis = [0x82, 0xa0, 0x82, 0xa2]; // "あい" in Shift_JIS under an ISO-2022-JP label
    const text = decodeCharset(bytes('a', sjis, 'b'), 'ISO-2022-JP');
    expect(text).toBe('a\ufffd\ufffd\ufffd\ufffdb');
    expect(text).not.toMatch(/[\ud800-\udfff]/);
    expect(decodeIso2022Jp(bytes(esc('$B'), '$3', [0xff], '$A', esc('(B'), 'x'))).toBe('こ\ufffdちx');
  });

  it('a lead byte without its trail costs one character, and what follows is read', () => {
    expect(decodeIso2022Jp(bytes(esc('$B'), '$3$', esc('(B'), 'q'))).toBe('こ\ufffdq');
    expect(decodeIso2022Jp(bytes(esc('$B'), '$3'))).toBe('こ');
    expect(decodeIso2022Jp(bytes(esc('$B'), '~!', esc('(B'), 'z'))).toBe('\ufffdz');
  });

  it('an unknown escape is one error; a line end returns to ASCII', () => {
    expect(decodeIso2022Jp(bytes(esc('.A'), 'x'))).toBe('\ufffd.Ax');
    expect(decodeIso2022Jp(bytes(esc('$B'), '$3\nab'))).toBe('こ\nab');
  });

  it('works in an encoded-word split across two words', () => {
    const word = (b: number[]) => `=?ISO-2022-JP?B?${Buffer.from(b).toString('base64')}?=`;
    const all = [...esc('$B'), ...Buffer.from('$3$s', 'latin1'), ...esc('(B')];
    expect(decodeWords(`${word(all.slice(0, 5))} ${word(all.slice(5))}`)).toBe('こん');
  });
});

describe('UTF-7 (RFC 2152)', () => {
  it('decodes bodies and encoded words, unterminated shifts included', () => {
    expect(bodyOf('text/plain; charset=utf-7', bytes('Hi Mom -+Jjo--! +ZeVnLIqe-'))).toBe(
      'Hi Mom -☺-! 日本語',
    );
    expect(bodyOf('text/plain; charset="UNICODE-1-1-UTF-7"', bytes('price +AKM-1 and +ZeVnLIqe'))).toBe(
      'price £1 and 日本語',
    );
    expect(subjectOf(bytes('=?utf-7?Q?Hi_Mom_-+Jjo--!?='))).toBe('Hi Mom -☺-!');
  });
});

describe('issue 23: decoding like a careful reader', () => {
  const KR = Buffer.concat([
    Buffer.from([0x1b, 0x24, 0x29, 0x43]),
    Buffer.from([0x0e]),
    iconv.encode('한국어', 'euc-kr').map((b) => b & 0x7f),
    Buffer.from([0x0f]),
    Buffer.from(' '),
    Buffer.from([0x0e]),
    iconv.encode('시험', 'euc-kr').map((b) => b & 0x7f),
    Buffer.from([0x0f]),
  ]);

  it('decodes an iso-2022-kr body as Korean', () => {
    expect(bodyOf('text/plain; charset=iso-2022-kr', KR)).toBe('한국어 시험');
  });

  it('stops base64 at a pad in the middle of the stream', () => {
    const raw = Buffer.concat([
      Buffer.from(
        'From: a@example.org\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n',
      ),
      Buffer.from(
        `${Buffer.from('Grüße').toString('base64')}\r\n${Buffer.from('&6ScB').toString('base64')}\r\n`,
      ),
    ]);
    expect(Buffer.from('Grüße').toString('base64')).toMatch(/==$/);
    expect(extractBody(parseRawMessage(raw).root).text).toBe('Grüße');
  });

  it('reads the text of a 200-deep multipart and lists its attachment', () => {
    const lines: string[] = ['From: a@example.org', 'Content-Type: multipart/mixed; boundary=b0', ''];
    for (let i = 1; i < 200; i++)
      lines.push(`--b${i - 1}`, `Content-Type: multipart/mixed; boundary=b${i}`, '');
    lines.push('--b199', 'Content-Type: text/plain', '', 'Found at the bottom.', '--b199');
    lines.push('Content-Type: application/pdf; name="deep.pdf"', '', '%PDF-1.4', '--b199--');
    for (let i = 198; i >= 0; i--) lines.push(`--b${i}--`);
    const { root } = parseRawMessage(lines.join('\r\n'));
    const body = extractBody(root);
    expect(body.text).toBe('Found at the bottom.');
    expect(body.emptyReason).toBeUndefined();
    expect(listAttachments(root).map((a) => a.filename)).toEqual(['deep.pdf']);
  });

  it('shows a text/plain part with name= and no disposition as the body, and lists it', () => {
    const raw = [
      'From: a@example.org',
      'Content-Type: multipart/mixed; boundary=z',
      '',
      '--z',
      'Content-Type: text/plain; charset=utf-8; name="note.txt"',
      '',
      'The gate code changes on Monday.',
      '--z--',
    ].join('\r\n');
    const { root } = parseRawMessage(raw);
    expect(extractBody(root).text).toBe('The gate code changes on Monday.');
    expect(listAttachments(root).map((a) => a.filename)).toEqual(['note.txt']);
  });

  it('judges a text attachment by decoding it in its declared charset first', () => {
    const sjis = iconv.encode('請求書の確認をお願いします。金額は１２３円です。', 'shift_jis');
    expect(decodeTextBytes(sjis)).toBeUndefined();
    expect(decodeTextBytes(sjis, 'Shift_JIS')).toEqual({
      text: '請求書の確認をお願いします。金額は１２３円です。',
      charset: 'shift_jis',
      guessedCharset: false,
    });
    expect(decodeTextBytes(KR, 'ISO-2022-KR')?.text).toBe('한국어 시험');
    // A declared charset does not turn binary into text.
    expect(decodeTextBytes(Buffer.from([0x50, 0x4b, 0, 0, 1, 2, 3, 0]), 'shift_jis')).toBeUndefined();
  });
});
