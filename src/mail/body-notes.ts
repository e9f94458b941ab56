/**
 * The vocabularies a body view reports in, kept apart from the MIME/HTML/CSS stack so tool
 * schemas can name them without loading it (tools load that stack on first call: lazy.ts).
 */

/** Why a text node is hidden from a person (css-hidden.ts has the rule). */
export const HIDDEN_REASONS = [
  'display-none',
  'hidden-attribute',
  'visibility-hidden',
  'opacity',
  'transparent-colour',
  'tiny-font',
  'scaled-to-zero',
  'clipped',
  'off-screen',
  'zero-size-box',
  'same-colour-as-background',
  'mso-hide',
  // Elements a mail reader does not show whatever their style: <noscript> (webmail strips it or
  // shows the scripted branch), a zero-size <svg>, and the content of a closed <details> beside
  // its <summary>.
  'noscript',
  'zero-size-svg',
  'closed-details',
] as const;
export type HiddenReason = (typeof HIDDEN_REASONS)[number];

/**
 * Why a body is empty, so an empty body is never silent: the message has no text part at all
 * (see its attachments), its text parts hold only whitespace, every word of it was hidden from
 * a reader (hiddenText), it is encrypted (RFC 1847 multipart/encrypted, S/MIME), or the provider
 * did not deliver the part's bytes.
 */
export const EMPTY_BODY_REASONS = [
  'no-text-part',
  'blank',
  'all-hidden',
  'encrypted',
  'not-fetched',
] as const;
export type EmptyBodyReason = (typeof EMPTY_BODY_REASONS)[number];
