/**
 * Zip and gzip files built byte by byte (PKWARE APPNOTE 6.3 §4.3, RFC 1952), so tests can make
 * archives that lie: sizes that disagree with the data, encryption flags, unknown methods, and
 * bombs whose data inflates to a gibibyte.
 */
import { once } from 'node:events';
import { constants, createDeflateRaw, crc32, deflateRawSync } from 'node:zlib';

export const MiB = 1024 * 1024;

export interface FixtureEntry {
  name: string;
  /** The entry's real content; compressed with deflate unless `method` is 0 or `packed` is given. */
  data?: Uint8Array;
  /** Already-compressed data (a bomb); `declaredSize` must then be given. */
  packed?: Buffer;
  method?: number;
  /** uncompressed size written in both headers (default: the real size). */
  declaredSize?: number;
  /** general purpose flags; bit 0 = encrypted, bit 11 = UTF-8 names (always set here). */
  flags?: number;
  crc?: number;
}

export function buildZip(entries: readonly FixtureEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const method = e.method ?? 8;
    const data = Buffer.from(e.data ?? new Uint8Array(0));
    const packed = e.packed ?? (method === 8 ? deflateRawSync(data) : data);
    const size = e.declaredSize ?? data.length;
    const crc = e.crc ?? crc32(data);
    const flags = (e.flags ?? 0) | 0x0800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/**
 * A raw deflate stream of `mib` MiB of zeros, made without ever holding them. A sync-flushed
 * block that encodes 1 MiB of zeros refers only to the zeros before it (distances ≤ 32 KiB) and
 * ends on a byte boundary, so the same bytes can be repeated: first block, then the second one
 * mib−1 times, then the empty final block. 1 GiB comes out at about 1 MiB.
 */
export async function zerosDeflateRaw(mib: number): Promise<Buffer> {
  const zeros = Buffer.alloc(MiB);
  const d = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  d.on('data', (c: Buffer) => out.push(c));
  const flushed = async (): Promise<Buffer> => {
    await new Promise<void>((resolve) => d.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    return Buffer.concat(out.splice(0));
  };
  d.write(zeros);
  const first = await flushed();
  d.write(zeros);
  const repeat = await flushed();
  d.end();
  await once(d, 'end');
  const last = Buffer.concat(out.splice(0));
  return Buffer.concat([first, ...Array<Buffer>(Math.max(0, mib - 1)).fill(repeat), last]);
}

/** A gzip member around raw deflate data, with an ISIZE that may lie. */
export function gzipAround(raw: Buffer, isize: number, name?: string): Buffer {
  const head = Buffer.from([0x1f, 0x8b, 8, name === undefined ? 0 : 0x08, 0, 0, 0, 0, 0, 3]);
  const fname = name === undefined ? Buffer.alloc(0) : Buffer.from(`${name}\0`, 'latin1');
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(0, 0); // CRC: never reached, the limit stops inflating first
  trailer.writeUInt32LE(isize >>> 0, 4);
  return Buffer.concat([head, fname, raw, trailer]);
}

export interface MemoryPeak<T> {
  result: T;
  /** Peak growth over the baseline, in MiB. */
  rssMiB: number;
  arrayBuffersMiB: number;
  heapMiB: number;
}

/** Runs `fn`, sampling memory every few milliseconds, and reports the peak growth. */
export async function measurePeak<T>(fn: () => Promise<T>): Promise<MemoryPeak<T>> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  const peak = { rss: base.rss, ab: base.arrayBuffers, heap: base.heapUsed };
  const sample = (): void => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.ab = Math.max(peak.ab, m.arrayBuffers);
    peak.heap = Math.max(peak.heap, m.heapUsed);
  };
  const timer = setInterval(sample, 2);
  try {
    const result = await fn();
    sample();
    return {
      result,
      rssMiB: (peak.rss - base.rss) / MiB,
      arrayBuffersMiB: (peak.ab - base.arrayBuffers) / MiB,
      heapMiB: (peak.heap - base.heapUsed) / MiB,
    };
  } finally {
    clearInterval(timer);
  }
}
