import type { SeedMessage, SeedThread, SeedUser } from '../../../src/sandbox/seed.js';

export interface RawHeader {
  name: string;
  /** Unfolded value, one char per byte. */
  value: string;
}

/** The header block of a raw message, unfolded (RFC 5322 §2.2.3), in order. */
export function headersOf(raw: string): RawHeader[] {
  const end = raw.indexOf('\r\n\r\n');
  const block = raw.slice(0, end === -1 ? raw.length : end);
  const out: RawHeader[] = [];
  for (const line of block.split('\r\n')) {
    const last = out.at(-1);
    if (/^[ \t]/.test(line) && last) last.value = `${last.value} ${line.trim()}`.trim();
    else {
      const colon = line.indexOf(':');
      out.push({ name: line.slice(0, colon), value: line.slice(colon + 1).trim() });
    }
  }
  return out;
}

export const header = (raw: string, name: string): string | undefined =>
  headersOf(raw).find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;

export const headerAll = (raw: string, name: string): string[] =>
  headersOf(raw)
    .filter((h) => h.name.toLowerCase() === name.toLowerCase())
    .map((h) => h.value);

export function threadByKey(user: SeedUser, key: string): SeedThread {
  const t = user.threads.find((th) => th.key === key);
  if (!t) throw new Error(`no thread ${key}`);
  return t;
}

export const has = (m: SeedMessage, label: string): boolean => m.labelIds.includes(label);
export const anyHas = (t: SeedThread, label: string): boolean => t.messages.some((m) => has(m, label));

export function lastOf(t: SeedThread): SeedMessage {
  const m = t.messages.at(-1);
  if (!m) throw new Error(`empty thread ${t.key}`);
  return m;
}

export function firstOf(t: SeedThread): SeedMessage {
  const m = t.messages[0];
  if (!m) throw new Error(`empty thread ${t.key}`);
  return m;
}

/** A minimal zip reader: end record → central directory → local headers → inflate. */
export interface ZipEntryRead {
  name: string;
  method: number;
  crc: number;
  localCrc: number;
  compressed: Buffer;
  size: number;
}

export function readZip(buf: Buffer): ZipEntryRead[] {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  const dirSize = buf.readUInt32LE(eocd + 12);
  const dirOffset = buf.readUInt32LE(eocd + 16);
  if (dirOffset + dirSize !== eocd) throw new Error('central directory does not end at the end record');
  const entries: ZipEntryRead[] = [];
  let p = dirOffset;
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central header');
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    const csize = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nlen = buf.readUInt16LE(p + 28);
    const elen = buf.readUInt16LE(p + 30);
    const clen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nlen).toString('utf8');
    if (buf.readUInt32LE(local) !== 0x04034b50) throw new Error('bad local header');
    const localCrc = buf.readUInt32LE(local + 14);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    entries.push({ name, method, crc, localCrc, compressed: buf.subarray(start, start + csize), size });
    p += 46 + nlen + elen + clen;
  }
  return entries;
}
