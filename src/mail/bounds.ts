/**
 * How much of a message a result may carry (issue 23: one message with 50,000 header lines made
 * an 11 MB result, which the MCP TypeScript client refuses, closing the session). Every list
 * that comes from mail is cut to a fixed length here and the cut is counted in an `omitted`
 * object, never made silently; src/mcp then refuses any result larger than MAX_RESULT_BYTES.
 */

/**
 * The largest tool result, in bytes of UTF-8 JSON, the structured copy and the text copy
 * together: 512 KiB, so either copy is about 256 KiB (some 64,000 tokens), a fraction of a
 * model's context and a twentieth of the 10 MiB an MCP client buffers per message.
 */
export const MAX_RESULT_BYTES = 512 * 1024;

/**
 * Longest mail-derived lists a result shows, per message or thread (List-Unsubscribe keeps its
 * own limit of 10 URIs, counted the same way: src/mail/unsubscribe.ts).
 */
export const LIST_CAPS = {
  /** Header fields of one message (bodies: "full"). */
  headers: 100,
  /** Attachments of one message, or of one thread in a search hit. */
  attachments: 50,
  /** Labels (or folders) of one message or thread. */
  labels: 30,
  /** Hidden-text pieces returned with includeHidden. */
  hiddenPieces: 50,
  /** Domains of a message with several From addresses. */
  fromDomains: 10,
} as const;

/** A header value is shown up to this many characters; the rest is counted, never cut silently. */
export const MAX_HEADER_VALUE = 1000;

/** get_thread / get_message: text of every body in one result together, and header values. */
export const RESULT_BUDGET = { bodyBytes: 128 * 1024, headerBytes: 32 * 1024 } as const;

export const OMITTED_KEYS = [
  'headers',
  'headerChars',
  'attachments',
  'labels',
  'to',
  'cc',
  'hiddenPieces',
  'bodyChars',
  'fromDomains',
  'https',
  'http',
  'mailto',
] as const;
export type OmittedKey = (typeof OMITTED_KEYS)[number];

/** get_thread without lastN: the newest this many messages (omittedMessages counts the rest). */
export const MAX_THREAD_MESSAGES = 100;

/** What a result left out, by list: `{headers: 49_900}`. Only keys with something left out. */
export type Omitted = Partial<Record<OmittedKey, number>>;

/** The first `max` items; the rest counted under `key` in `omitted`. */
export function capList<T>(items: readonly T[], max: number, key: OmittedKey, omitted: Omitted): T[] {
  if (items.length <= max) return [...items];
  omitted[key] = (omitted[key] ?? 0) + items.length - max;
  return items.slice(0, max);
}

/** `omitted` when it holds anything, for spreading into a result. */
export function omittedField(omitted: Omitted): { omitted?: Omitted } {
  return Object.keys(omitted).length > 0 ? { omitted } : {};
}

/** UTF-8 length of a string (what a result's bytes are counted in). */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** The longest prefix of `s` of at most `bytes` UTF-8 bytes, never splitting a surrogate pair. */
export function prefixBytes(s: string, bytes: number): string {
  if (utf8Length(s) <= bytes) return s;
  let lo = 0;
  let hi = Math.min(s.length, bytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (utf8Length(s.slice(0, mid)) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  const c = s.charCodeAt(lo - 1);
  return c >= 0xd800 && c <= 0xdbff ? s.slice(0, lo - 1) : s.slice(0, lo);
}
