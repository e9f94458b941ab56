/**
 * Decompression for read_attachment, in memory only: yauzl over a Buffer (nothing touches the
 * disk) and node:zlib's streaming gunzip. Both count the bytes they inflate and stop at the
 * limit, so a bomb costs at most one limit of memory. yauzl's validateEntrySizes additionally
 * fails an entry the moment it inflates past its declared size (docs/facts.md: fflate would truncate
 * silently instead). Kept out of src/mail so the pure layer never loads zlib or yauzl.
 */
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { MailError } from '../mail/errors.js';
import type {
  ArchiveLimits,
  Decompressors,
  GunzipOutcome,
  RawEntry,
  ZipContents,
} from '../mail/archive/limits.js';

export interface UnzipOptions {
  limits: ArchiveLimits;
  list: boolean;
  select: (name: string) => boolean;
  /** Tests turn yauzl's own size check off to prove the byte counter alone stops a bomb. */
  validateEntrySizes?: boolean;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function openZip(bytes: Uint8Array, validateEntrySizes: boolean): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    // decodeStrings off: yauzl would abort the whole archive on a name like "../x" or "/etc/x".
    // Nothing is extracted here, so such a name is only a name; it is decoded below instead.
    yauzl.fromBuffer(
      asBuffer(bytes),
      { lazyEntries: true, decodeStrings: false, validateEntrySizes, autoClose: false },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

/** The next central-directory entry, or undefined at the end. */
function nextEntry(zip: ZipFile): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: Entry): void => (cleanup(), resolve(e));
    const onEnd = (): void => (cleanup(), resolve(undefined));
    const onError = (err: Error): void => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

function openStream(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))),
  );
}

type Drained = { ok: true; bytes: Buffer } | { ok: false; overLimit: boolean; error?: unknown };

/** Reads a stream to its end, or destroys it as soon as more than `max` bytes came out. */
async function drain(stream: Readable, max: number): Promise<Drained> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > max) {
        stream.destroy();
        return { ok: false, overLimit: true };
      }
      chunks.push(chunk);
    }
  } catch (error) {
    stream.destroy();
    return { ok: false, overLimit: false, error };
  }
  return { ok: true, bytes: Buffer.concat(chunks, total) };
}

function entryName(e: Entry): string {
  // Bit 11 (UTF-8), the Info-ZIP Unicode Path field, else CP437 (APPNOTE 4.4.4, appendix D).
  const raw = e.fileNameRaw;
  return yauzl.getFileNameLowLevel(e.generalPurposeBitFlag, raw, e.extraFields, false);
}

async function readEntry(
  zip: ZipFile,
  e: Entry,
  base: RawEntry,
  o: UnzipOptions,
  budget: number,
): Promise<RawEntry> {
  const { limits } = o;
  if (e.isEncrypted()) return { ...base, skipped: 'encrypted', detail: 'password-protected entry' };
  if (!e.canDecodeFileData())
    return { ...base, skipped: 'unsupported-compression', detail: `zip method ${e.compressionMethod}` };
  if (e.uncompressedSize > limits.entryBytes)
    return {
      ...base,
      skipped: 'oversize',
      detail: `declares ${e.uncompressedSize} bytes; the limit is ${limits.entryBytes}`,
    };
  if (e.uncompressedSize > budget)
    return {
      ...base,
      skipped: 'archive-limit',
      detail: `the archive's ${limits.archiveBytes}-byte total is spent`,
    };
  let stream: Readable;
  try {
    stream = await openStream(zip, e);
  } catch {
    return { ...base, skipped: 'corrupt', detail: 'the entry data could not be located' };
  }
  const out = await drain(stream, Math.min(limits.entryBytes, budget));
  if (out.ok) return { ...base, size: out.bytes.length, bytes: out.bytes };
  if (out.overLimit)
    return {
      ...base,
      skipped: 'size-mismatch',
      detail: `inflates past the limit although it declares ${e.uncompressedSize} bytes`,
    };
  const message = out.error instanceof Error ? out.error.message : '';
  // yauzl's AssertByteCountStream: "too many bytes in the stream" / "not enough bytes in the stream".
  return /bytes in the stream/.test(message)
    ? {
        ...base,
        skipped: 'size-mismatch',
        detail: `inflates to a different size than the ${e.uncompressedSize} bytes it declares`,
      }
    : { ...base, skipped: 'corrupt', detail: 'the compressed data is damaged' };
}

export async function unzip(bytes: Uint8Array, o: UnzipOptions): Promise<ZipContents> {
  let zip: ZipFile;
  try {
    zip = await openZip(bytes, o.validateEntrySizes ?? true);
  } catch {
    // yauzl's message is not repeated: it can quote bytes of the archive.
    throw new MailError('unsupported', 'the zip archive is damaged: its central directory could not be read');
  }
  const entries: RawEntry[] = [];
  let inflated = 0;
  let seen = 0;
  try {
    for (;;) {
      if (seen >= o.limits.entries) break;
      let e: Entry | undefined;
      try {
        e = await nextEntry(zip);
      } catch {
        entries.push({
          name: `(entry ${seen + 1})`,
          size: 0,
          skipped: 'corrupt',
          detail: 'unreadable directory record',
        });
        break;
      }
      if (e === undefined) break;
      seen++;
      const name = entryName(e);
      const base: RawEntry = { name, size: e.uncompressedSize, compressedSize: e.compressedSize };
      if (e.isEncrypted()) base.encrypted = true;
      if (name.endsWith('/')) base.directory = true;
      if (o.list || base.directory === true) entries.push(base);
      else if (!o.select(name)) entries.push({ ...base, notSelected: true });
      else {
        const entry = await readEntry(zip, e, base, o, o.limits.archiveBytes - inflated);
        inflated += entry.bytes?.length ?? 0;
        entries.push(entry);
      }
    }
  } finally {
    zip.close();
  }
  return { entries, omittedEntries: Math.max(0, zip.entryCount - seen) };
}

/**
 * RFC 1952 gzip, every member, inflated as a stream and stopped past `maxBytes`. ISIZE is
 * never trusted for this: it is the size modulo 2^32 and written by the sender.
 */
export async function gunzip(bytes: Uint8Array, maxBytes: number): Promise<GunzipOutcome> {
  const gz = createGunzip();
  gz.end(asBuffer(bytes));
  const out = await drain(gz, maxBytes);
  if (out.ok) return { ok: true, bytes: out.bytes };
  if (out.overLimit)
    return { ok: false, reason: 'oversize', detail: `inflates past the ${maxBytes}-byte limit` };
  return { ok: false, reason: 'corrupt', detail: 'the gzip data is damaged' };
}

/** The decompressors read_attachment is given (src/mail/archive/read.ts). */
export const storeDecompressors: Decompressors = {
  unzip: (bytes, options) => unzip(bytes, options),
  gunzip,
};
