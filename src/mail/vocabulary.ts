/**
 * The fixed words results are made of: RFC 8601 / RFC 7489 authentication verdicts and the
 * signal names. No imports, so the tool definitions (loaded at start-up for tools/list) can
 * build their schemas from the same lists the judging code uses, without loading the charset
 * and HTML stack those modules pull in.
 */

/** RFC 8601 §2.7.1 (DKIM), §2.7.2 (SPF) and RFC 7489 §11.2 (DMARC) result names. */
export const DKIM_RESULTS = ['pass', 'fail', 'neutral', 'none', 'policy', 'temperror', 'permerror'] as const;
export const SPF_RESULTS = [
  'pass',
  'fail',
  'softfail',
  'neutral',
  'none',
  'policy',
  'temperror',
  'permerror',
] as const;
export const DMARC_RESULTS = ['pass', 'fail', 'none', 'temperror', 'permerror'] as const;

export type DkimResult = (typeof DKIM_RESULTS)[number] | 'unknown';
export type SpfResult = (typeof SPF_RESULTS)[number] | 'unknown';
export type DmarcResult = (typeof DMARC_RESULTS)[number] | 'unknown';

export const SIGNAL_NAMES = [
  'newsletter',
  'automated',
  'calendar',
  'replyToMismatch',
  'displayNameSpoof',
  'lookalikeDomain',
  'multipleFrom',
] as const;
export type SignalName = (typeof SIGNAL_NAMES)[number];

/** What the signals read from a message's top-level headers (enough for format=metadata). */
export const SIGNAL_HEADERS = [
  'From',
  'Reply-To',
  'List-Id',
  'List-Unsubscribe',
  'Precedence',
  'Auto-Submitted',
  'X-Autoreply',
  'X-Autorespond',
  'X-Auto-Response-Suppress',
  'Content-Type',
  'Content-Class',
] as const;

/** The authserv-id Gmail's MX writes; an IMAP account names its own receiving server's. */
export const GMAIL_AUTHSERV_ID = 'mx.google.com';
