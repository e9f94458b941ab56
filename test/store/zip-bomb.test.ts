import { inflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/mail/archive/limits.js';
import { readAttachmentText } from '../../src/mail/archive/read.js';
import { gunzip, storeDecompressors, unzip } from '../../src/store/zip.js';
import { buildZip, gzipAround, measurePeak, MiB, zerosDeflateRaw } from './zip-fixtures.js';

const GiB = 1024 * MiB;
/** A bomb that got through would need 1 GiB; the limits allow one 5 MiB entry plus buffers. */
const MAX_GROWTH_MIB = 64;
const all = () => true;

let bomb: Buffer;
beforeAll(async () => {
  bomb = await zerosDeflateRaw(1024);
});

describe('the test bomb itself', () => {
  it('is about a thousandth of what it inflates to, and really inflates to zeros', async () => {
    expect(bomb.length).toBeLessThan(1.5 * MiB);
    const small = await zerosDeflateRaw(8);
    const out = inflateRawSync(small);
    expect(out.length).toBe(8 * MiB);
    expect(out.every((b) => b === 0)).toBe(true);
  });
});

describe('a zip whose one entry inflates to 1 GiB of zeros', () => {
  it('is refused from its honest header before anything is inflated', async () => {
    const zip = buildZip([{ name: 'zeros.txt', packed: bomb, declaredSize: GiB, crc: 0 }]);
    const peak = await measurePeak(() => unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all }));
    const [entry] = peak.result.entries;
    expect(entry).toMatchObject({ name: 'zeros.txt', skipped: 'oversize', size: GiB });
    expect(entry?.bytes).toBeUndefined();
    expect(peak.rssMiB).toBeLessThan(MAX_GROWTH_MIB);
  });

  it('is stopped by yauzl (validateEntrySizes) when the header claims 1000 bytes', async () => {
    const zip = buildZip([{ name: 'small.txt', packed: bomb, declaredSize: 1000, crc: 0 }]);
    const peak = await measurePeak(() => unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all }));
    expect(peak.result.entries[0]).toMatchObject({ skipped: 'size-mismatch' });
    expect(peak.result.entries[0]?.detail).toMatch(/1000 bytes/);
    expect(peak.rssMiB).toBeLessThan(MAX_GROWTH_MIB);
    expect(peak.arrayBuffersMiB).toBeLessThan(MAX_GROWTH_MIB);
    console.log(
      `lying zip (yauzl check): rss +${peak.rssMiB.toFixed(1)} MiB, arrayBuffers +${peak.arrayBuffersMiB.toFixed(1)} MiB, heap +${peak.heapMiB.toFixed(1)} MiB`,
    );
  });

  it('is stopped by our own byte counter at the 5 MiB entry limit even without yauzl’s check', async () => {
    const zip = buildZip([{ name: 'small.txt', packed: bomb, declaredSize: 4 * MiB, crc: 0 }]);
    const peak = await measurePeak(() =>
      unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all, validateEntrySizes: false }),
    );
    expect(peak.result.entries[0]).toMatchObject({ skipped: 'size-mismatch' });
    expect(peak.result.entries[0]?.detail).toMatch(/past the limit/);
    expect(peak.rssMiB).toBeLessThan(MAX_GROWTH_MIB);
    expect(peak.arrayBuffersMiB).toBeLessThan(MAX_GROWTH_MIB);
    console.log(
      `lying zip (counter only): rss +${peak.rssMiB.toFixed(1)} MiB, arrayBuffers +${peak.arrayBuffersMiB.toFixed(1)} MiB, heap +${peak.heapMiB.toFixed(1)} MiB`,
    );
  });

  it('costs read_attachment a skipped entry and little memory, whatever the header says', async () => {
    const zip = buildZip([
      { name: 'honest.bin', packed: bomb, declaredSize: GiB, crc: 0 },
      { name: 'liar.csv', packed: bomb, declaredSize: 100, crc: 0 },
      { name: 'fine.csv', data: Buffer.from('a,b\n1,2\n') },
    ]);
    const peak = await measurePeak(() =>
      readAttachmentText(
        zip,
        { name: 'r.zip', list: false, offset: 0, maxChars: 30_000, limits: DEFAULT_LIMITS },
        storeDecompressors,
      ),
    );
    const r = peak.result;
    expect(r.skipped.map((s) => [s.name, s.reason])).toEqual([
      ['honest.bin', 'oversize'],
      ['liar.csv', 'size-mismatch'],
    ]);
    expect(r.entries.map((e) => [e.name, e.text])).toEqual([['fine.csv', 'a,b\n1,2\n']]);
    expect(peak.rssMiB).toBeLessThan(MAX_GROWTH_MIB);
  });
});

describe('a gzip of 1 GiB of zeros', () => {
  it('is refused from its ISIZE before inflating when ISIZE is honest', async () => {
    const gz = gzipAround(bomb, GiB, 'zeros.txt');
    const r = await readAttachmentText(
      gz,
      { name: 'zeros.txt.gz', list: false, offset: 0, maxChars: 30_000, limits: DEFAULT_LIMITS },
      storeDecompressors,
    );
    expect(r.skipped).toEqual([
      expect.objectContaining({
        name: 'zeros.txt',
        reason: 'oversize',
        detail: expect.stringMatching(/declares/),
      }),
    ]);
  });

  it('is stopped by the byte counter at 5 MiB when ISIZE lies', async () => {
    const gz = gzipAround(bomb, 1000);
    const peak = await measurePeak(() => gunzip(gz, DEFAULT_LIMITS.entryBytes));
    expect(peak.result).toMatchObject({ ok: false, reason: 'oversize' });
    expect(peak.rssMiB).toBeLessThan(MAX_GROWTH_MIB);
    expect(peak.arrayBuffersMiB).toBeLessThan(MAX_GROWTH_MIB);
    console.log(
      `lying gzip: rss +${peak.rssMiB.toFixed(1)} MiB, arrayBuffers +${peak.arrayBuffersMiB.toFixed(1)} MiB, heap +${peak.heapMiB.toFixed(1)} MiB`,
    );
  });
});

describe('archive-wide limits', () => {
  it('reads at most 50 entries and counts the rest', async () => {
    const zip = buildZip(
      Array.from({ length: 60 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(`line ${i}\n`) })),
    );
    const r = await unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all });
    expect(r.entries).toHaveLength(50);
    expect(r.omittedEntries).toBe(10);
  });

  it('stops reading once 20 MiB have been inflated in total', async () => {
    const text = Buffer.alloc(4.5 * MiB, 'abcdefgh\n');
    const zip = buildZip(Array.from({ length: 6 }, (_, i) => ({ name: `part${i}.txt`, data: text })));
    const r = await unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all });
    expect(r.entries.map((e) => e.skipped ?? 'read')).toEqual([
      'read',
      'read',
      'read',
      'read',
      'archive-limit',
      'archive-limit',
    ]);
  });

  it('reports encrypted and unknown-method entries without trying them', async () => {
    const zip = buildZip([
      { name: 'secret.txt', data: Buffer.from('x'), flags: 0x1 },
      { name: 'bzip2.txt', data: Buffer.from('y'), method: 12 },
      { name: 'stored.txt', data: Buffer.from('plain stored'), method: 0 },
    ]);
    const r = await unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all });
    expect(r.entries.map((e) => [e.name, e.skipped ?? Buffer.from(e.bytes ?? []).toString()])).toEqual([
      ['secret.txt', 'encrypted'],
      ['bzip2.txt', 'unsupported-compression'],
      ['stored.txt', 'plain stored'],
    ]);
  });

  it('reads names that would be unsafe to extract, since nothing is extracted', async () => {
    const zip = buildZip([{ name: '../../etc/passwd', data: Buffer.from('root:x:0:0\n') }]);
    const r = await unzip(zip, { limits: DEFAULT_LIMITS, list: false, select: all });
    expect(r.entries[0]).toMatchObject({ name: '../../etc/passwd' });
    expect(Buffer.from(r.entries[0]?.bytes ?? []).toString()).toBe('root:x:0:0\n');
  });

  it('refuses a damaged archive with its own words', async () => {
    const zip = buildZip([{ name: 'a.txt', data: Buffer.from('a') }]);
    await expect(
      unzip(zip.subarray(0, zip.length - 10), { limits: DEFAULT_LIMITS, list: false, select: all }),
    ).rejects.toMatchObject({ code: 'unsupported', message: expect.stringMatching(/damaged/) });
  });
});
