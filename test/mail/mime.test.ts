import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import {
  decodeCharset,
  decodeWords,
  formatAddress,
  headerValue,
  headerValues,
  parseAddressList,
} from '../../src/mail/headers.js';
import { parseRawMessage, parseStructuredHeader } from '../../src/mail/mime.js';
import type { MimeNode } from '../../src/mail/types.js';

function fixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/eml/${name}`, import.meta.url));
}

/** partId → mimeType for every node, depth first. */
function shape(node: MimeNode): Array<[string, string]> {
  return [[node.partId, node.mimeType], ...node.children.flatMap(shape)];
}

function find(node: MimeNode, partId: string): MimeNode {
  if (node.partId === partId) return node;
  for (const c of node.children) {
    const hit = c.partId.length <= partId.length && partId.startsWith(c.partId) ? find(c, partId) : undefined;
    if (hit) return hit;
  }
  throw new Error(`no part ${partId}`);
}

function text(node: MimeNode): string {
  return Buffer.from(node.body ?? new Uint8Array()).toString('latin1');
}

describe('parseRawMessage: tree', () => {
  it('gives Gmail-style part ids through mixed > related > alternative', () => {
    const { root } = parseRawMessage(fixture('nested-mixed-related.eml'));
    expect(shape(root)).toEqual([
      ['', 'multipart/mixed'],
      ['0', 'multipart/related'],
      ['0.0', 'multipart/alternative'],
      ['0.0.0', 'text/plain'],
      ['0.0.1', 'text/html'],
      ['0.1', 'image/png'],
      ['1', 'application/pdf'],
    ]);
    expect(text(find(root, '0.0.0'))).toBe('Hi Bob,\r\nthe report is attached.');
    expect(root.body).toBeUndefined();
    expect(root.size).toBe(0);
  });

  it('decodes base64 to the exact bytes and sizes them', () => {
    const { root } = parseRawMessage(fixture('nested-mixed-related.eml'));
    const pdf = find(root, '1');
    expect(pdf.filename).toBe('Q3 report.pdf');
    expect(text(pdf)).toBe(
      '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
    );
    expect(pdf.size).toBe(77);
    const png = find(root, '0.1');
    expect(
      Buffer.from(png.body ?? [])
        .subarray(0, 8)
        .toString('hex'),
    ).toBe('89504e470d0a1a0a');
    expect(png.headers).toContainEqual({ name: 'Content-ID', value: '<logo@example.org>' });
  });

  it('does not take a longer nested boundary for the outer one, and drops preamble and epilogue', () => {
    const { root } = parseRawMessage(fixture('alternative-qp.eml'));
    expect(shape(root)).toEqual([
      ['', 'multipart/alternative'],
      ['0', 'text/plain'],
      ['1', 'text/html'],
    ]);
    expect(text(find(root, '1'))).not.toContain('Epilogue');
    expect(text(find(root, '0'))).not.toContain('multi-part message');
  });

  it('decodes quoted-printable: soft breaks, =XX, and keeps hard CRLFs', () => {
    const { root } = parseRawMessage(fixture('alternative-qp.eml'));
    const plain = Buffer.from(find(root, '0').body ?? []).toString('utf8');
    expect(plain).toBe(
      'Bonjour Bob,\r\n\r\nShall we meet at the café on Tuesday? This line is long enough that the encoder had to wrap it with a soft line break.\r\nPrice: 5 € = cheap.\r\n',
    );
    expect(Buffer.from(find(root, '1').body ?? []).toString('utf8')).toBe(
      '<html><body><p>Bonjour Bob,</p><p>Shall we meet at the <b>café</b> on Tuesday?</p></body></html>',
    );
  });

  it('quoted-printable: trailing transport whitespace, lower-case hex, malformed "=" kept', () => {
    const raw =
      'Content-Type: text/plain\r\nContent-Transfer-Encoding: Quoted-Printable\r\n\r\n' +
      'a=3d=3Db   \r\nsoft = \r\nbreak =ZZ =4\r\nend';
    const { root } = parseRawMessage(raw);
    expect(text(root)).toBe('a==b\r\nsoft break =ZZ =4\r\nend');
  });

  it('base64 ignores line breaks and junk characters', () => {
    const raw = 'Content-Transfer-Encoding: base64\n\naGVs\nbG8g*d29y\r\nbGQ=\n';
    expect(text(parseRawMessage(raw).root)).toBe('hello world');
  });

  it('ends the last part at the end of data when the close delimiter is missing', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary=XYZ',
      '',
      '--XYZ',
      'Content-Type: text/plain',
      '',
      'first',
      '--XYZ',
      '',
      'second part, no headers',
      'and no close delimiter',
    ].join('\r\n');
    const { root } = parseRawMessage(raw);
    expect(shape(root)).toEqual([
      ['', 'multipart/mixed'],
      ['0', 'text/plain'],
      ['1', 'text/plain'],
    ]);
    expect(text(find(root, '0'))).toBe('first');
    expect(text(find(root, '1'))).toBe('second part, no headers\r\nand no close delimiter');
  });

  it('ends an inner multipart that lacks its close delimiter at the outer delimiter', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary="o"',
      '',
      '--o',
      'Content-Type: multipart/alternative; boundary="i"',
      '',
      '--i',
      '',
      'inner text',
      '--o',
      'Content-Type: text/csv; name=data.csv',
      '',
      'a,b',
      '--o--',
    ].join('\n');
    const { root } = parseRawMessage(raw);
    expect(shape(root)).toEqual([
      ['', 'multipart/mixed'],
      ['0', 'multipart/alternative'],
      ['0.0', 'text/plain'],
      ['1', 'text/csv'],
    ]);
    expect(text(find(root, '0.0'))).toBe('inner text');
    expect(find(root, '1').filename).toBe('data.csv');
  });

  it('keeps message/rfc822 as a leaf holding the embedded message bytes', () => {
    const inner = 'From: a@example.com\r\nSubject: Inner\r\n\r\nInner body\r\n';
    const raw = [
      'Content-Type: multipart/mixed; boundary="m"',
      '',
      '--m',
      '',
      'See attached.',
      '--m',
      'Content-Type: message/rfc822',
      'Content-Disposition: attachment',
      '',
      inner,
      '--m--',
    ].join('\r\n');
    const { root } = parseRawMessage(raw);
    const msg = find(root, '1');
    expect(msg.mimeType).toBe('message/rfc822');
    expect(msg.children).toEqual([]);
    expect(text(msg)).toBe(inner);
    expect(headerValue(parseRawMessage(msg.body ?? '').headers, 'subject')).toBe('Inner');
  });

  it('defaults parts of multipart/digest to message/rfc822 (RFC 2046 §5.1.5)', () => {
    const raw = 'Content-Type: multipart/digest; boundary=d\n\n--d\n\nFrom: x@example.com\n\nhi\n--d--\n';
    expect(shape(parseRawMessage(raw).root)).toEqual([
      ['', 'multipart/digest'],
      ['0', 'message/rfc822'],
    ]);
  });

  it('defaults a missing or invalid Content-Type to text/plain and lower-cases types (RFC 2045 §5.2)', () => {
    expect(parseRawMessage('Subject: x\n\nbody').root.mimeType).toBe('text/plain');
    expect(parseRawMessage('Content-Type: garbage\n\nbody').root.mimeType).toBe('text/plain');
    expect(parseRawMessage('Content-Type: Text/HTML; Charset=UTF-8\n\n<p>x</p>').root.mimeType).toBe(
      'text/html',
    );
    // A multipart without a boundary cannot be split: invalid, hence text/plain.
    const noBoundary = parseRawMessage('Content-Type: multipart/mixed\n\n--x\n\nbody\n');
    expect(noBoundary.root.mimeType).toBe('text/plain');
    expect(noBoundary.root.children).toEqual([]);
  });

  it('treats a string as latin1 bytes so 8-bit sources survive', () => {
    const bytes = Buffer.concat([
      Buffer.from('Content-Type: text/plain; charset=windows-1252\r\n\r\n', 'latin1'),
      Buffer.from([0x80, 0x93, 0x94]),
    ]);
    const fromString = parseRawMessage(bytes.toString('latin1')).root;
    expect(Buffer.from(fromString.body ?? []).equals(Buffer.from([0x80, 0x93, 0x94]))).toBe(true);
    expect(decodeCharset(fromString.body ?? new Uint8Array(), 'windows-1252')).toBe('€“”');
  });

  it('handles a message that is only headers', () => {
    const { headers, root } = parseRawMessage('Subject: hi\r\nFrom: a@example.com');
    expect(headers).toEqual([
      { name: 'Subject', value: 'hi' },
      { name: 'From', value: 'a@example.com' },
    ]);
    expect(root.size).toBe(0);
  });
});

describe('parseRawMessage: headers', () => {
  it('unfolds headers, keeps values RFC 2047-encoded, and gives the root the same headers', () => {
    const { headers, root } = parseRawMessage(fixture('iso-2022-jp.eml'));
    const subject = headers.find((h) => h.name === 'Subject');
    expect(subject?.value).toMatch(/^=\?ISO-2022-JP\?B\?[^?]+\?= =\?ISO-2022-JP\?B\?[^?]+\?=$/);
    expect(root.headers).toBe(headers);
    expect(headers.map((h) => h.name)).toEqual([
      'From',
      'To',
      'Subject',
      'MIME-Version',
      'Content-Type',
      'Content-Transfer-Encoding',
    ]);
  });

  it('keeps the whitespace of a fold (RFC 5322 §2.2.3) and skips an mbox From_ line', () => {
    const { headers } = parseRawMessage('From bob Mon Nov  4 2024\nSubject: one\n\ttwo\nX-A:b\n\nbody');
    expect(headers).toEqual([
      { name: 'Subject', value: 'one\ttwo' },
      { name: 'X-A', value: 'b' },
    ]);
  });

  it('decodes raw 8-bit UTF-8 header bytes (RFC 6532)', () => {
    const raw = Buffer.concat([
      Buffer.from('Subject: ', 'latin1'),
      Buffer.from('Grüße – 日本', 'utf8'),
      Buffer.from('\r\n\r\nx'),
    ]);
    const { headers } = parseRawMessage(raw);
    expect(headerValue(headers, 'subject')).toBe('Grüße – 日本');
    // The same bytes handed over one char per byte (a latin1 string) are repaired too.
    const latin1 = Buffer.from('Grüße – 日本', 'utf8').toString('latin1');
    expect(headerValue([{ name: 'Subject', value: latin1 }], 'Subject')).toBe('Grüße – 日本');
  });
});

describe('filenames', () => {
  it('reassembles RFC 2231 continuations in UTF-8 and decodes ISO-8859-1 and RFC 2047 names', () => {
    const { root } = parseRawMessage(fixture('rfc2231-filename.eml'));
    expect(root.children.map((c) => [c.partId, c.filename])).toEqual([
      ['0', ''],
      ['1', '報告書 — final version 2024.pdf'],
      ['2', 'Grüße.txt'],
      ['3', 'Résumé.docx'],
    ]);
  });

  it('parses parameters: quoting, comments, continuations out of order, extended value wins', () => {
    const p = parseStructuredHeader(
      'Attachment (a comment); filename="plain; \\"x\\".txt"; name*1="b.txt"; name*0="a"; ' +
        "title=old; title*=us-ascii'en'New%20Title",
    );
    expect(p.value).toBe('attachment');
    expect(p.params.get('filename')).toBe('plain; "x".txt');
    expect(p.params.get('name')).toBe('ab.txt');
    expect(p.params.get('title')).toBe('New Title');
  });
});

describe('headerValue / decodeWords', () => {
  const headers = [
    { name: 'Subject', value: '=?UTF-8?B?5pel5pys6Kqe?=' },
    { name: 'received', value: 'one' },
    { name: 'Received', value: 'two' },
  ];

  it('finds the first match case-insensitively, and all matches in order', () => {
    expect(headerValue(headers, 'SUBJECT')).toBe('日本語');
    expect(headerValue(headers, 'Received')).toBe('one');
    expect(headerValues(headers, 'received')).toEqual(['one', 'two']);
    expect(headerValue(headers, 'X-Missing')).toBeUndefined();
  });

  it('decodes ISO-2022-JP split across encoded-words', () => {
    const { headers: h } = parseRawMessage(fixture('iso-2022-jp.eml'));
    expect(headerValue(h, 'subject')).toBe('会議の日程について');
    expect(headerValue(h, 'from')).toBe('山田 <yamada@example.jp>');
  });

  it('decodes Shift_JIS (with cp932 extensions) and windows-1252 encoded-words', () => {
    expect(headerValue(parseRawMessage(fixture('shift-jis.eml')).headers, 'subject')).toBe('①会議のご案内');
    expect(headerValue(parseRawMessage(fixture('windows-1252.eml')).headers, 'subject')).toBe(
      '“Deal” – 20 €',
    );
    expect(headerValue(parseRawMessage(fixture('latin1-qp.eml')).headers, 'subject')).toBe('Grüße aus Köln');
  });

  it('drops whitespace between encoded-words only, and joins split multi-byte characters', () => {
    expect(decodeWords('=?utf-8?q?a?= =?utf-8?q?b?= c =?utf-8?q?d?=')).toBe('ab c d');
    // "€" (E2 82 AC) split across two words.
    expect(decodeWords('=?UTF-8?Q?=E2=82?=\r\n =?UTF-8?Q?=AC_5?=')).toBe('€ 5');
    expect(decodeWords('=?UTF-8*en?Q?Hello_World?=')).toBe('Hello World');
    expect(decodeWords('Re: =?iso-8859-1?q?caf=E9?=!')).toBe('Re: café!');
    expect(decodeWords('no words here')).toBe('no words here');
  });

  it('decodes UTF-7 (RFC 2152) and falls back for unknown charsets', () => {
    expect(decodeWords('=?utf-7?Q?+ADw-script+AD4-?=')).toBe('<script>');
    expect(decodeWords('=?x-unknown-cs?Q?caf=C3=A9?=')).toBe('café');
    expect(decodeWords('=?x-unknown-cs?Q?caf=E9?=')).toBe('café');
  });
});

describe('parseAddressList / formatAddress', () => {
  it('parses quoted names with commas, comments, groups and bare addresses', () => {
    expect(
      parseAddressList(
        '"Doe, Jane" <jane@example.com>, bob@example.com (Bob Smith), Team: a@example.com, "B" <b@example.com>;, undisclosed-recipients:;',
      ),
    ).toEqual([
      { name: 'Doe, Jane', address: 'jane@example.com' },
      { name: 'Bob Smith', address: 'bob@example.com' },
      { name: '', address: 'a@example.com' },
      { name: 'B', address: 'b@example.com' },
    ]);
  });

  it('decodes encoded names after splitting, so an encoded comma does not split', () => {
    expect(parseAddressList('=?UTF-8?Q?M=C3=BCller=2C_J=C3=BCrgen?= <j@example.de>, x@example.com')).toEqual([
      { name: 'Müller, Jürgen', address: 'j@example.de' },
      { name: '', address: 'x@example.com' },
    ]);
  });

  it('handles no address, a name without quotes, a quoted local part and an obsolete route', () => {
    expect(parseAddressList('"Just a name"')).toEqual([{ name: 'Just a name', address: '' }]);
    expect(parseAddressList('Jane Q. Public <jane@example.com>')).toEqual([
      { name: 'Jane Q. Public', address: 'jane@example.com' },
    ]);
    expect(parseAddressList('"john doe"@example.com')).toEqual([
      { name: '', address: '"john doe"@example.com' },
    ]);
    expect(parseAddressList('<@relay.example:joe@example.com>')).toEqual([
      { name: '', address: 'joe@example.com' },
    ]);
    expect(parseAddressList('Name Without Brackets joe@example.com')).toEqual([
      { name: 'Name Without Brackets', address: 'joe@example.com' },
    ]);
    expect(parseAddressList('')).toEqual([]);
  });

  it('formats for display, quoting specials', () => {
    expect(formatAddress({ name: 'Doe, Jane', address: 'jane@example.com' })).toBe(
      '"Doe, Jane" <jane@example.com>',
    );
    expect(formatAddress({ name: 'Jane', address: 'jane@example.com' })).toBe('Jane <jane@example.com>');
    expect(formatAddress({ name: 'Say "hi"', address: 'a@b.example' })).toBe('"Say \\"hi\\"" <a@b.example>');
    expect(formatAddress({ name: '', address: 'a@b.example' })).toBe('a@b.example');
    expect(formatAddress({ name: 'Only name', address: '' })).toBe('Only name');
  });
});
