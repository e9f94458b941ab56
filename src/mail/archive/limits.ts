/**
 * What read_attachment will do to an attachment, fixed before any byte is inflated. An archive
 * is attacker-chosen input whose headers may lie (a 40 KiB zip can hold 1 GiB of zeros), so every
 * limit below is enforced twice: against the declared sizes before work starts, and against
 * bytes actually counted while inflating.
 */
export const MiB = 1024 * 1024;

export interface ArchiveLimits {
  /** Decompressed bytes of one entry (a plain text attachment is one entry). */
  entryBytes: number;
  /** Compressed size of the attachment, and decompressed bytes of all entries together. */
  archiveBytes: number;
  /** Entries looked at in one zip (directories included); the rest are counted, not read. */
  entries: number;
}

export const DEFAULT_LIMITS: ArchiveLimits = { entryBytes: 5 * MiB, archiveBytes: 20 * MiB, entries: 50 };

/** Why an entry's text is not returned. */
export const SKIP_REASONS = [
  'binary',
  'encrypted',
  'oversize',
  'size-mismatch',
  'nested-archive',
  'unsupported-compression',
  'archive-limit',
  'corrupt',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** A zip or gzip entry as the decompressor (src/store/zip.ts) hands it back. */
export interface RawEntry {
  name: string;
  /** Declared decompressed size (zip central directory; gzip ISIZE, which is modulo 2^32). */
  size: number;
  compressedSize?: number;
  encrypted?: boolean;
  directory?: boolean;
  /** Inflated bytes; absent when listing, when not selected, or when skipped. */
  bytes?: Uint8Array;
  /** Not read because the `entry` pattern did not select it. */
  notSelected?: boolean;
  skipped?: SkipReason;
  /** Our own words for the skip (never text taken from the archive). */
  detail?: string;
}

export interface ZipContents {
  entries: RawEntry[];
  /** Entries past the `entries` limit: counted from the end record, never read. */
  omittedEntries: number;
}

export type GunzipOutcome =
  { ok: true; bytes: Uint8Array } | { ok: false; reason: 'oversize' | 'corrupt'; detail: string };

/**
 * Decompression, injected so that src/mail stays free of node:zlib and yauzl; src/store/zip.ts
 * is the implementation the tools pass in.
 */
export interface Decompressors {
  unzip(
    bytes: Uint8Array,
    options: { limits: ArchiveLimits; list: boolean; select: (name: string) => boolean },
  ): Promise<ZipContents>;
  gunzip(bytes: Uint8Array, maxBytes: number): Promise<GunzipOutcome>;
}
