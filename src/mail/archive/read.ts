/**
 * read_attachment's reading, decided here and done by injected decompressors: which format the
 * bytes are, which entries are read, which are skipped and why, and which page of text goes back.
 */
import { MailError } from '../errors.js';
import type { ArchiveLimits, Decompressors, RawEntry, SkipReason } from './limits.js';
import { entryMatcher, pageTexts } from './select.js';
import { gzipDeclaredSize, gzipMemberName, sniff } from './sniff.js';
import { decodeTextBytes } from './text.js';
import type { DecodedText, TextCharset } from './text.js';

export interface ReadOptions {
  /** The attachment's filename: the entry name of a plain file, or of a gzip without FNAME. */
  name: string;
  list: boolean;
  /** An entry name or glob; undefined selects every entry. */
  entry?: string;
  offset: number;
  maxChars: number;
  limits: ArchiveLimits;
  /** The charset a plain-text attachment's Content-Type declares; tried first (text.ts). */
  charset?: string;
}

export interface TextEntry {
  name: string;
  size: number;
  charset: TextCharset;
  guessedCharset: boolean;
  /** Characters of text in the whole entry. */
  chars: number;
  /** Present when this page holds part of the entry: where in the entry it starts. */
  from?: number;
  text?: string;
}

export interface SkippedEntry {
  name: string;
  size: number;
  reason: SkipReason;
  detail?: string;
}

export interface ListedEntry {
  name: string;
  size: number;
  compressedSize?: number;
  encrypted?: boolean;
}

export interface ReadResult {
  format: 'text' | 'gzip' | 'zip';
  /** What the bytes are, by signature. */
  detected: string;
  entries: TextEntry[];
  skipped: SkippedEntry[];
  /** With `list`: every entry (directories left out), nothing inflated. */
  listing?: ListedEntry[];
  notSelectedNames?: string[];
  omittedEntries?: number;
  totalChars: number;
  offset: number;
  nextOffset?: number;
}

const DOWNLOAD_HINT = 'download_attachment saves it to MAILWARDEN_DOWNLOAD_DIR for a person to open.';

function refuse(what: string): MailError {
  return new MailError(
    'unsupported',
    `the attachment is ${what} by its bytes; read_attachment reads only text, gzip and zip. ${DOWNLOAD_HINT}`,
  );
}

function tooBig(bytes: number, limit: number, what: string): MailError {
  const mib = (n: number): string => (n / 1024 / 1024).toFixed(1);
  return new MailError(
    'unsupported',
    `the attachment is ${mib(bytes)} MiB; read_attachment reads ${what} up to ${mib(limit)} MiB. ${DOWNLOAD_HINT}`,
  );
}

/** Archive member names can be 64 KiB long; a reader needs the start and the end. */
function displayName(name: string): string {
  return name.length <= 300 ? name : `${name.slice(0, 200)}…${name.slice(-99)}`;
}

function stripGzSuffix(name: string): string {
  return name.replace(/\.(?:gz|gzip)$/i, '') || name;
}

/** The attachment as entries: several for a zip, one for gzip and plain text. */
async function entriesOf(
  bytes: Uint8Array,
  kind: 'zip' | 'gzip' | 'unknown',
  opts: ReadOptions,
  dz: Decompressors,
  select: (name: string) => boolean,
): Promise<{ raw: RawEntry[]; omittedEntries: number }> {
  const { limits } = opts;
  if (kind === 'zip') {
    const zip = await dz.unzip(bytes, { limits, list: opts.list, select });
    return { raw: zip.entries, omittedEntries: zip.omittedEntries };
  }
  if (kind === 'gzip') {
    const name = gzipMemberName(bytes) || stripGzSuffix(opts.name);
    const size = gzipDeclaredSize(bytes);
    const base: RawEntry = { name, size, compressedSize: bytes.length };
    if (opts.list) return { raw: [base], omittedEntries: 0 };
    if (!select(name)) return { raw: [{ ...base, notSelected: true }], omittedEntries: 0 };
    if (size > limits.entryBytes) {
      const detail = `declares ${size} bytes; the limit is ${limits.entryBytes}`;
      return { raw: [{ ...base, skipped: 'oversize', detail }], omittedEntries: 0 };
    }
    const out = await dz.gunzip(bytes, limits.entryBytes);
    const entry: RawEntry = out.ok
      ? { ...base, size: out.bytes.length, bytes: out.bytes }
      : { ...base, skipped: out.reason, detail: out.detail };
    return { raw: [entry], omittedEntries: 0 };
  }
  const entry: RawEntry = { name: opts.name, size: bytes.length };
  if (opts.list) return { raw: [entry], omittedEntries: 0 };
  return {
    raw: [select(opts.name) ? { ...entry, bytes } : { ...entry, notSelected: true }],
    omittedEntries: 0,
  };
}

type Judged = { skip: SkippedEntry } | { text: DecodedText };

function judge(e: RawEntry & { bytes: Uint8Array }, charset?: string): Judged {
  const s = sniff(e.bytes);
  const skip = (reason: SkipReason, detail: string): Judged => ({
    skip: { name: displayName(e.name), size: e.bytes.length, reason, detail },
  });
  if (s.kind === 'zip' || s.kind === 'gzip' || s.kind === 'archive')
    return skip('nested-archive', `${s.what}; archives inside archives are not opened`);
  if (s.kind === 'binary') return skip('binary', s.what);
  const text = decodeTextBytes(e.bytes, charset);
  return text ? { text } : skip('binary', 'not text (control bytes)');
}

export async function readAttachmentText(
  bytes: Uint8Array,
  opts: ReadOptions,
  dz: Decompressors,
): Promise<ReadResult> {
  const { limits } = opts;
  const s = sniff(bytes);
  if (s.kind === 'binary' || s.kind === 'archive') throw refuse(`a ${s.what}`);
  if (bytes.length > limits.archiveBytes) throw tooBig(bytes.length, limits.archiveBytes, 'attachments');
  if (s.kind === 'unknown') {
    if (bytes.length > limits.entryBytes) throw tooBig(bytes.length, limits.entryBytes, 'plain text');
    // Refused outright rather than listed as a skipped entry: there is nothing else inside.
    if (!opts.list && decodeTextBytes(bytes, opts.charset) === undefined)
      throw refuse('binary data (no known signature, and too many control bytes for text)');
  }
  const select = entryMatcher(opts.entry);
  const { raw, omittedEntries } = await entriesOf(bytes, s.kind, opts, dz, select);
  const result: ReadResult = {
    format: s.kind === 'unknown' ? 'text' : s.kind,
    detected: s.kind === 'unknown' ? 'text' : s.what,
    entries: [],
    skipped: [],
    totalChars: 0,
    offset: opts.offset,
  };
  if (omittedEntries > 0) result.omittedEntries = omittedEntries;
  if (opts.list) {
    result.listing = raw
      .filter((e) => e.directory !== true)
      .map((e) => {
        const l: ListedEntry = { name: displayName(e.name), size: e.size };
        if (e.compressedSize !== undefined) l.compressedSize = e.compressedSize;
        if (e.encrypted === true) l.encrypted = true;
        return l;
      });
    return result;
  }
  const notSelected: string[] = [];
  const texts: Array<{ e: RawEntry; d: DecodedText }> = [];
  for (const e of raw) {
    if (e.directory === true) continue;
    if (e.notSelected === true) notSelected.push(displayName(e.name));
    else if (e.skipped !== undefined) {
      const skip: SkippedEntry = { name: displayName(e.name), size: e.size, reason: e.skipped };
      if (e.detail !== undefined) skip.detail = e.detail;
      result.skipped.push(skip);
    } else if (e.bytes !== undefined) {
      // The declared charset is the attachment's own: it says nothing about entries of an archive.
      const j = judge({ ...e, bytes: e.bytes }, s.kind === 'unknown' ? opts.charset : undefined);
      if ('skip' in j) result.skipped.push(j.skip);
      else texts.push({ e, d: j.text });
    }
  }
  if (opts.entry !== undefined) result.notSelectedNames = notSelected;
  const page = pageTexts(
    texts.map((t) => t.d.text),
    opts.offset,
    opts.maxChars,
  );
  result.totalChars = page.totalChars;
  if (page.nextOffset !== undefined) result.nextOffset = page.nextOffset;
  result.entries = texts.map(({ e, d }) => ({
    name: displayName(e.name),
    size: e.bytes?.length ?? e.size,
    charset: d.charset,
    guessedCharset: d.guessedCharset,
    chars: d.text.length,
  }));
  for (const slice of page.slices) {
    const entry = result.entries[slice.index];
    const source = texts[slice.index];
    if (entry === undefined || source === undefined) continue;
    entry.from = slice.from;
    entry.text = source.d.text.slice(slice.from, slice.to);
  }
  return result;
}
