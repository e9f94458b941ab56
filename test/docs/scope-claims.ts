/**
 * Finds sentences that claim an OAuth scope cannot send mail. Only a token limited to
 * gmail.readonly is a no-send that Google enforces; gmail.modify and gmail.compose tokens can
 * send from anywhere they are copied to, whatever mailwarden does with them. So a sentence that
 * names a scope and says "cannot send" (or "never sends", "no-send"…) passes only when every
 * scope it names is on the allowlist.
 *
 * The unit is the sentence: a paragraph, list item or table row, split after . ! ? followed by a
 * space. A true sentence such as "gmail.modify can send; mailwarden never asks it to" is flagged
 * too: write it as two sentences, one about the scope and one about mailwarden.
 */

export const NO_SEND_SCOPES: ReadonlySet<string> = new Set(['gmail.readonly']);

/**
 * Gmail's scope names (bare, or inside the full https://www.googleapis.com/auth/… URL) and the
 * full-access scope https://mail.google.com/. Host names such as gmail.googleapis.com are not scopes.
 */
const SCOPE =
  /(?:https:\/\/www\.googleapis\.com\/auth\/)?\bgmail\.(?:readonly|modify|compose|send|insert|labels|metadata|settings\.basic|settings\.sharing)\b|https:\/\/mail\.google\.com\/?/g;
const URL_PREFIX = /^https:\/\/www\.googleapis\.com\/auth\//;

const NEGATION =
  /\b(?:cannot|can ?not|can't|can’t|could not|couldn't|unable to|never|not|no|without|won't|will not|doesn't|does not|isn't|is not)\b/i;
const SEND = /\bsend(?:s|ing)?\b|\bsent\b/i;
const NO_SEND = /\bno[- ]send\b|\bsend-free\b|\bsend-proof\b/i;

export interface ScopeClaim {
  sentence: string;
  scopes: string[];
  /** Scopes named in the sentence that may not carry a no-send claim. */
  disallowed: string[];
}

/** Sentences of a markdown text: paragraphs, list items and table rows, split at sentence ends. */
export function sentences(markdown: string): string[] {
  const out: string[] = [];
  const units: string[] = [];
  let buf: string[] = [];
  const flush = (): void => {
    if (buf.length > 0) units.push(buf.join(' '));
    buf = [];
  };
  for (const line of markdown.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('```')) {
      flush();
      continue;
    }
    if (/^(?:[-*]|\d+\.)\s/.test(t) || t.startsWith('|') || t.startsWith('#')) flush();
    buf.push(t);
    if (t.startsWith('|') || t.startsWith('#')) flush();
  }
  flush();
  for (const u of units) {
    const plain = u.replace(/`/g, '').replace(/\*\*|__/g, '');
    for (const s of plain.split(/(?<=[.!?])\s+/)) if (s.trim() !== '') out.push(s.trim());
  }
  return out;
}

/** Is this one sentence a claim that some scope cannot send? */
export function scopeClaim(sentence: string): ScopeClaim | undefined {
  const scopes = [...new Set([...sentence.matchAll(SCOPE)].map((m) => m[0].replace(URL_PREFIX, '')))];
  if (scopes.length === 0) return undefined;
  // The scope names themselves ("gmail.readonly", the URL) are not words of the claim.
  const words = sentence.replace(SCOPE, ' ');
  const claims = NO_SEND.test(words) || (NEGATION.test(words) && SEND.test(words));
  if (!claims) return undefined;
  return { sentence, scopes, disallowed: scopes.filter((s) => !NO_SEND_SCOPES.has(s)) };
}

/** Every sentence claiming a no-send for a scope not on the allowlist. */
export function dishonestScopeClaims(markdown: string): ScopeClaim[] {
  return sentences(markdown)
    .map(scopeClaim)
    .filter((c): c is ScopeClaim => c !== undefined && c.disallowed.length > 0);
}
