import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, MiB } from '../../src/mail/archive/limits.js';
import { readAttachmentText } from '../../src/mail/archive/read.js';
import type { ReadOptions } from '../../src/mail/archive/read.js';
import { storeDecompressors } from '../../src/store/zip.js';
import { buildZip } from '../store/zip-fixtures.js';

const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);
const CP1252 = Buffer.from([
  0x50, 0x72, 0x69, 0x78, 0x3a, 0x20, 0x35, 0x80, 0x20, 0x93, 0x6f, 0x6b, 0x94, 0x0a,
]); // Prix: 5€ “ok”

function read(bytes: Uint8Array, opts: Partial<ReadOptions> = {}) {
  return readAttachmentText(
    bytes,
    { name: 'file', list: false, offset: 0, maxChars: 30_000, limits: DEFAULT_LIMITS, ...opts },
    storeDecompressors,
  );
}

describe('plain attachments: judged by bytes, not by name', () => {
  it('refuses a ".txt" that is really a PNG, pointing at download_attachment', async () => {
    await expect(read(PNG, { name: 'notes.txt' })).rejects.toMatchObject({
      code: 'unsupported',
      message: expect.stringMatching(/PNG image.*download_attachment/),
    });
  });

  it('refuses binary without a known signature too', async () => {
    const noise = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 37) % 256));
    await expect(read(noise, { name: 'data.csv' })).rejects.toMatchObject({ code: 'unsupported' });
  });

  it('reads a ".bin" that is really CSV', async () => {
    const r = await read(Buffer.from('date,amount\n2026-11-01,12.50\n'), { name: 'export.bin' });
    expect(r).toMatchObject({ format: 'text', detected: 'text', skipped: [], totalChars: 29 });
    expect(r.entries).toEqual([
      {
        name: 'export.bin',
        size: 29,
        charset: 'utf-8',
        guessedCharset: false,
        chars: 29,
        from: 0,
        text: 'date,amount\n2026-11-01,12.50\n',
      },
    ]);
  });

  it('marks windows-1252 text as a guessed charset', async () => {
    const r = await read(CP1252, { name: 'prix.txt' });
    expect(r.entries[0]).toMatchObject({
      text: 'Prix: 5€ “ok”\n',
      charset: 'windows-1252',
      guessedCharset: true,
    });
  });

  it('refuses plain text over 5 MiB before decoding it', async () => {
    await expect(read(Buffer.alloc(5 * MiB + 1, 'a'))).rejects.toMatchObject({ message: /5\.0 MiB/ });
  });
});

describe('zip attachments', () => {
  const inner = buildZip([{ name: 'x.txt', data: Buffer.from('x') }]);
  const zip = buildZip([
    { name: 'summary.csv', data: Buffer.from('a,b\n1,2\n') },
    { name: 'reports/', data: Buffer.alloc(0), method: 0 },
    { name: 'reports/old.xml', data: CP1252 },
    { name: 'reports/logo.png', data: PNG },
    { name: 'nested.zip', data: inner },
    { name: 'nested.csv.gz', data: gzipSync('a,b\n') },
    { name: 'secret.txt', data: Buffer.from('s'), flags: 1 },
    { name: 'nul.log', data: Buffer.from('abc\0def') },
  ]);

  it('reads text entries and lists every other one as skipped with the reason', async () => {
    const r = await read(zip, { name: 'bundle.zip' });
    expect(r.format).toBe('zip');
    expect(r.entries.map((e) => [e.name, e.charset, e.guessedCharset, e.text])).toEqual([
      ['summary.csv', 'utf-8', false, 'a,b\n1,2\n'],
      ['reports/old.xml', 'windows-1252', true, 'Prix: 5€ “ok”\n'],
    ]);
    expect(r.skipped.map((s) => [s.name, s.reason, s.detail])).toEqual([
      ['reports/logo.png', 'binary', 'PNG image'],
      ['nested.zip', 'nested-archive', expect.stringMatching(/^zip archive/)],
      ['nested.csv.gz', 'nested-archive', expect.stringMatching(/^gzip file/)],
      ['secret.txt', 'encrypted', expect.any(String)],
      ['nul.log', 'binary', expect.any(String)],
    ]);
    expect(r.notSelectedNames).toBeUndefined();
    expect(r.nextOffset).toBeUndefined();
  });

  it('list: names and declared sizes only, directories left out', async () => {
    const r = await read(zip, { list: true });
    expect(r.entries).toEqual([]);
    expect(r.listing?.map((l) => l.name)).toEqual([
      'summary.csv',
      'reports/old.xml',
      'reports/logo.png',
      'nested.zip',
      'nested.csv.gz',
      'secret.txt',
      'nul.log',
    ]);
    expect(r.listing?.[0]).toMatchObject({ size: 8, compressedSize: expect.any(Number) });
    expect(r.listing?.find((l) => l.name === 'secret.txt')?.encrypted).toBe(true);
  });

  it('entry glob reads only what matches and names the rest', async () => {
    const r = await read(zip, { entry: '*.xml' });
    expect(r.entries.map((e) => e.name)).toEqual(['reports/old.xml']);
    expect(r.skipped).toEqual([]);
    expect(r.notSelectedNames).toEqual([
      'summary.csv',
      'reports/logo.png',
      'nested.zip',
      'nested.csv.gz',
      'secret.txt',
      'nul.log',
    ]);
  });

  it('pages across entries with offset and nextOffset until the text is whole', async () => {
    const parts = ['A', 'B', 'C'].map((c) => `${c.repeat(19_999)}\n`);
    const big = buildZip(parts.map((text, i) => ({ name: `part${i}.txt`, data: Buffer.from(text) })));
    let offset = 0;
    let joined = '';
    const pages: Array<Array<[string, number | undefined]>> = [];
    for (;;) {
      const r = await read(big, { offset, maxChars: 25_000 });
      expect(r.totalChars).toBe(60_000);
      pages.push(r.entries.filter((e) => e.text !== undefined).map((e) => [e.name, e.from]));
      joined += r.entries.map((e) => e.text ?? '').join('');
      if (r.nextOffset === undefined) break;
      offset = r.nextOffset;
    }
    expect(pages).toEqual([
      [
        ['part0.txt', 0],
        ['part1.txt', 0],
      ],
      [
        ['part1.txt', 5_000],
        ['part2.txt', 0],
      ],
      [['part2.txt', 10_000]],
    ]);
    expect(joined).toBe(parts.join(''));
  });
});

describe('gzip attachments', () => {
  it('reads the member and names it from FNAME or the attachment name', async () => {
    const r = await read(gzipSync('<feedback/>\n'), { name: 'report.xml.gz' });
    expect(r).toMatchObject({ format: 'gzip', detected: 'gzip file' });
    expect(r.entries).toEqual([expect.objectContaining({ name: 'report.xml', text: '<feedback/>\n' })]);
  });

  it('reports a tar inside as a nested archive', async () => {
    const tar = Buffer.alloc(1024);
    tar.write('a.txt', 0);
    tar.write('ustar', 257, 'latin1');
    const r = await read(gzipSync(tar), { name: 'logs.tar.gz' });
    expect(r.skipped).toEqual([
      expect.objectContaining({
        name: 'logs.tar',
        reason: 'nested-archive',
        detail: expect.stringMatching(/^tar/),
      }),
    ]);
  });
});
