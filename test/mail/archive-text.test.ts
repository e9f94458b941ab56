import { describe, expect, it } from 'vitest';
import { entryMatcher, globToRegExp, pageTexts } from '../../src/mail/archive/select.js';
import { gzipDeclaredSize, gzipMemberName, sniff } from '../../src/mail/archive/sniff.js';
import { decodeTextBytes, decodeWindows1252 } from '../../src/mail/archive/text.js';

const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);

describe('sniff', () => {
  it.each([
    [PNG, 'binary', 'PNG image'],
    [Buffer.from('%PDF-1.7\n'), 'binary', 'PDF document'],
    [Buffer.from('PK\x03\x04rest'), 'zip', 'zip archive'],
    [Buffer.from([0x1f, 0x8b, 8, 0]), 'gzip', 'gzip file'],
    [Buffer.from('7z\xbc\xaf\x27\x1c', 'latin1'), 'archive', '7-Zip archive'],
    [Buffer.from('RIFF\0\0\0\0WEBPVP8 '), 'binary', 'WebP image'],
    [Buffer.from('RIFF is a word'), 'unknown', 'no known signature'],
    [Buffer.from('date,amount\n'), 'unknown', 'no known signature'],
  ])('%#: %s', (bytes, kind, what) => {
    expect(sniff(bytes)).toEqual({ kind, what });
  });

  it('finds tar by its ustar magic at offset 257', () => {
    const tar = Buffer.alloc(512);
    tar.write('ustar', 257, 'latin1');
    expect(sniff(tar)).toEqual({ kind: 'archive', what: 'tar archive' });
  });

  it('reads the gzip FNAME and ISIZE fields', () => {
    const gz = Buffer.concat([
      Buffer.from([0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3]),
      Buffer.from('report.xml\0', 'latin1'),
      Buffer.from([3, 0]),
      Buffer.from([0, 0, 0, 0, 0x39, 0x30, 0, 0]),
    ]);
    expect(gzipMemberName(gz)).toBe('report.xml');
    expect(gzipDeclaredSize(gz)).toBe(12345);
  });
});

describe('decodeTextBytes: the bytes decide', () => {
  it('reads UTF-8 as UTF-8, not guessed', () => {
    expect(decodeTextBytes(Buffer.from('naïve,€5\r\nok\r\n'))).toEqual({
      text: 'naïve,€5\nok\n',
      charset: 'utf-8',
      guessedCharset: false,
    });
  });

  it('reads windows-1252 bytes as windows-1252 and marks the guess', () => {
    // "Caf\xe9 \x80 5 \x93quoted\x94 \x96 dash\x85"
    const bytes = Buffer.from([
      0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x35, 0x20, 0x93, 0x71, 0x94, 0x20, 0x96, 0x20, 0x64, 0x85,
    ]);
    expect(decodeTextBytes(bytes)).toEqual({
      text: 'Café € 5 “q” – d…',
      charset: 'windows-1252',
      guessedCharset: true,
    });
  });

  it('maps all of 0x80–0x9F the WHATWG way (Node’s own decoder does not)', () => {
    expect(decodeWindows1252(Buffer.from([0x80, 0x8a, 0x9f, 0x81]))).toBe('€ŠŸ\uFFFD');
  });

  it('honours UTF-16 byte-order marks', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a;b\r\n1;2', 'utf16le')]);
    const be = Buffer.from(le.subarray(2)).swap16();
    expect(decodeTextBytes(le)).toMatchObject({ text: 'a;b\n1;2', charset: 'utf-16le' });
    expect(decodeTextBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), be]))).toMatchObject({
      text: 'a;b\n1;2',
      charset: 'utf-16be',
    });
  });

  it('strips a UTF-8 BOM', () => {
    expect(decodeTextBytes(Buffer.from('\uFEFFid,name\n'))?.text).toBe('id,name\n');
  });

  it('calls bytes with NULs or many control characters binary', () => {
    expect(decodeTextBytes(PNG)).toBeUndefined();
    expect(decodeTextBytes(Buffer.from('text\0with nul'))).toBeUndefined();
    const noisy = Buffer.from(Array.from({ length: 400 }, (_, i) => (i % 10 === 0 ? 0x01 : 0x61)));
    expect(decodeTextBytes(noisy)).toBeUndefined();
  });

  it('keeps tabs, form feeds and ANSI escapes as text', () => {
    expect(decodeTextBytes(Buffer.from('\x1b[31mERROR\x1b[0m\tdisk full\f\n'))?.charset).toBe('utf-8');
  });
});

describe('entry selection', () => {
  const names = ['report.xml', 'data/2026/a.XML', 'data/readme.txt', 'img/logo.png'];
  const pick = (p: string) => names.filter(entryMatcher(p));

  it('takes exact names (case-insensitive), also as the last path segment', () => {
    expect(pick('REPORT.xml')).toEqual(['report.xml']);
    expect(pick('readme.txt')).toEqual(['data/readme.txt']);
  });

  it('globs: * and ? within a segment, ** across', () => {
    expect(pick('*.xml')).toEqual(['report.xml', 'data/2026/a.XML']);
    expect(pick('data/*')).toEqual(['data/readme.txt']);
    expect(pick('data/**')).toEqual(['data/2026/a.XML', 'data/readme.txt']);
    expect(pick('**/*.png')).toEqual(['img/logo.png']);
    expect(pick('img/logo.?ng')).toEqual(['img/logo.png']);
    expect(globToRegExp('a+b(c).txt').test('a+b(c).txt')).toBe(true);
  });
});

describe('pageTexts', () => {
  it('pages across entries by character offset', () => {
    const texts = ['abcdef', 'ghij', 'klmnopq'];
    const p1 = pageTexts(texts, 0, 8);
    expect(p1).toEqual({
      slices: [
        { index: 0, from: 0, to: 6 },
        { index: 1, from: 0, to: 2 },
      ],
      totalChars: 17,
      nextOffset: 8,
    });
    const p2 = pageTexts(texts, 8, 8);
    expect(p2.slices).toEqual([
      { index: 1, from: 2, to: 4 },
      { index: 2, from: 0, to: 6 },
    ]);
    expect(p2.nextOffset).toBe(16);
    const p3 = pageTexts(texts, 16, 8);
    expect(p3.slices).toEqual([{ index: 2, from: 6, to: 7 }]);
    expect(p3.nextOffset).toBeUndefined();
  });

  it('never cuts a surrogate pair in half', () => {
    const p = pageTexts(['ab😀cd'], 0, 3);
    expect(p.slices).toEqual([{ index: 0, from: 0, to: 2 }]);
    expect(p.nextOffset).toBe(2);
  });
});
