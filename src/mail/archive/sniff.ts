/**
 * What an attachment is, judged by its bytes. The filename and the declared Content-Type are
 * chosen by the sender and prove nothing: a ".txt" can be a PNG, a ".bin" can be CSV. Magic
 * numbers come from each format's specification (PKWARE APPNOTE 4.3.7, RFC 1952 §2.3.1, PNG
 * §5.2, ISO 32000 §7.5.2, …).
 */

export type Sniffed =
  | { kind: 'zip'; what: string }
  | { kind: 'gzip'; what: string }
  /** An archive or compressor mailwarden does not open (7z, rar, tar, bzip2, xz, zstd…). */
  | { kind: 'archive'; what: string }
  /** A known binary format by its magic number. */
  | { kind: 'binary'; what: string }
  /** No magic number: text or unknown binary, which the text decoder decides. */
  | { kind: 'unknown'; what: string };

interface Magic {
  at: number;
  bytes: readonly number[];
  kind: 'zip' | 'gzip' | 'archive' | 'binary';
  what: string;
  /** A second signature that must also be there (RIFF containers name their format at 8). */
  also?: { at: number; bytes: readonly number[] };
}

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

const MAGICS: readonly Magic[] = [
  { at: 0, bytes: [0x50, 0x4b, 0x03, 0x04], kind: 'zip', what: 'zip archive' },
  { at: 0, bytes: [0x50, 0x4b, 0x05, 0x06], kind: 'zip', what: 'zip archive (empty)' },
  { at: 0, bytes: [0x50, 0x4b, 0x07, 0x08], kind: 'zip', what: 'zip archive (spanned)' },
  { at: 0, bytes: [0x1f, 0x8b, 0x08], kind: 'gzip', what: 'gzip file' },
  { at: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], kind: 'archive', what: '7-Zip archive' },
  { at: 0, bytes: ascii('Rar!\x1a\x07'), kind: 'archive', what: 'RAR archive' },
  { at: 0, bytes: ascii('BZh'), kind: 'archive', what: 'bzip2 file' },
  { at: 0, bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], kind: 'archive', what: 'xz file' },
  { at: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd], kind: 'archive', what: 'zstd file' },
  { at: 0, bytes: [0x1f, 0x9d], kind: 'archive', what: 'compress (.Z) file' },
  { at: 0, bytes: ascii('LZIP'), kind: 'archive', what: 'lzip file' },
  { at: 0, bytes: ascii('MSCF'), kind: 'archive', what: 'cabinet archive' },
  { at: 257, bytes: ascii('ustar'), kind: 'archive', what: 'tar archive' },
  { at: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], kind: 'binary', what: 'PNG image' },
  { at: 0, bytes: [0xff, 0xd8, 0xff], kind: 'binary', what: 'JPEG image' },
  { at: 0, bytes: ascii('GIF87a'), kind: 'binary', what: 'GIF image' },
  { at: 0, bytes: ascii('GIF89a'), kind: 'binary', what: 'GIF image' },
  { at: 0, bytes: ascii('RIFF'), also: { at: 8, bytes: ascii('WEBP') }, kind: 'binary', what: 'WebP image' },
  { at: 0, bytes: ascii('RIFF'), also: { at: 8, bytes: ascii('WAVE') }, kind: 'binary', what: 'WAV audio' },
  { at: 0, bytes: ascii('RIFF'), also: { at: 8, bytes: ascii('AVI ') }, kind: 'binary', what: 'AVI video' },
  { at: 0, bytes: [0x49, 0x49, 0x2a, 0x00], kind: 'binary', what: 'TIFF image' },
  { at: 0, bytes: [0x4d, 0x4d, 0x00, 0x2a], kind: 'binary', what: 'TIFF image' },
  { at: 0, bytes: [0x00, 0x00, 0x01, 0x00], kind: 'binary', what: 'icon' },
  { at: 0, bytes: ascii('%PDF-'), kind: 'binary', what: 'PDF document' },
  {
    at: 0,
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    kind: 'binary',
    what: 'OLE compound document (legacy Office file or Outlook .msg)',
  },
  { at: 0, bytes: [0x7f, 0x45, 0x4c, 0x46], kind: 'binary', what: 'ELF executable' },
  { at: 0, bytes: [0xcf, 0xfa, 0xed, 0xfe], kind: 'binary', what: 'Mach-O executable' },
  { at: 0, bytes: [0xfe, 0xed, 0xfa, 0xcf], kind: 'binary', what: 'Mach-O executable' },
  { at: 0, bytes: [0xca, 0xfe, 0xba, 0xbe], kind: 'binary', what: 'Mach-O universal binary or Java class' },
  { at: 0, bytes: [0x00, 0x61, 0x73, 0x6d], kind: 'binary', what: 'WebAssembly module' },
  { at: 0, bytes: ascii('SQLite format 3\0'), kind: 'binary', what: 'SQLite database' },
  { at: 0, bytes: ascii('ID3'), kind: 'binary', what: 'MP3 audio' },
  { at: 0, bytes: ascii('OggS'), kind: 'binary', what: 'Ogg media' },
  { at: 0, bytes: ascii('fLaC'), kind: 'binary', what: 'FLAC audio' },
  { at: 4, bytes: ascii('ftyp'), kind: 'binary', what: 'MP4/QuickTime media' },
  { at: 0, bytes: ascii('wOFF'), kind: 'binary', what: 'WOFF font' },
  { at: 0, bytes: ascii('wOF2'), kind: 'binary', what: 'WOFF2 font' },
];

function matchesAt(bytes: Uint8Array, at: number, sig: readonly number[]): boolean {
  if (bytes.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (bytes[at + i] !== sig[i]) return false;
  return true;
}

export function sniff(bytes: Uint8Array): Sniffed {
  for (const m of MAGICS) {
    if (!matchesAt(bytes, m.at, m.bytes)) continue;
    if (m.also && !matchesAt(bytes, m.also.at, m.also.bytes)) continue;
    return { kind: m.kind, what: m.what };
  }
  return { kind: 'unknown', what: 'no known signature' };
}

/** RFC 1952 §2.3: FNAME, the original file name (ISO 8859-1, zero-terminated), when present. */
export function gzipMemberName(bytes: Uint8Array): string | undefined {
  if (bytes.length < 10 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return undefined;
  const flags = bytes[3] ?? 0;
  let at = 10;
  if (flags & 0x04) at += 2 + ((bytes[10] ?? 0) | ((bytes[11] ?? 0) << 8)); // FEXTRA
  if (!(flags & 0x08)) return undefined;
  let name = '';
  // Capped: a header is not a place for a megabyte of name.
  for (; at < bytes.length && bytes[at] !== 0 && name.length < 1024; at++) {
    name += String.fromCharCode(bytes[at] as number);
  }
  return name;
}

/** RFC 1952 §2.3.1 ISIZE: the last member's size modulo 2^32 — a hint, never a guarantee. */
export function gzipDeclaredSize(bytes: Uint8Array): number {
  if (bytes.length < 18) return 0;
  const n = bytes.length;
  return (
    ((bytes[n - 4] ?? 0) |
      ((bytes[n - 3] ?? 0) << 8) |
      ((bytes[n - 2] ?? 0) << 16) |
      ((bytes[n - 1] ?? 0) << 24)) >>>
    0
  );
}
