import { snippetOf } from '../mail/body.js';
import { headerValue } from '../mail/headers.js';
import { parseRawMessage } from '../mail/mime.js';
import { staticFactsOf } from '../mail/message-facts.js';
import type { StaticFacts } from '../mail/message-facts.js';
import type { Header, MimeNode } from '../mail/types.js';

export type { StaticFacts } from '../mail/message-facts.js';

/** Everything derived from a message's RFC 822 bytes, parsed once at seed/deliver time. */
export interface ParsedMessage {
  raw: Uint8Array;
  headers: Header[];
  root: MimeNode;
  snippet: string;
  sizeEstimate: number;
  facts: StaticFacts;
  /** Leaf parts served through attachments.get, by partId. */
  attachmentParts: ReadonlyMap<string, MimeNode>;
}

/**
 * Seeds give sources as strings. Non-UTF-8 sources arrive as latin1 strings of bytes (one char
 * per byte); a string holding any char above U+00FF cannot be that, so it is text and is
 * encoded as UTF-8 — which lets fixtures write UTF-8 mail naturally.
 */
export function rawBytes(raw: string | Uint8Array): Uint8Array {
  if (typeof raw !== 'string') return raw;
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u00ff]/.test(raw) ? Buffer.from(raw, 'utf8') : Buffer.from(raw, 'latin1');
}

/**
 * Gmail serves parts that have a filename through attachments.get (attachmentId, no inline
 * data), whatever their disposition; inline images with a name included.
 */
export function isAttachmentPart(node: MimeNode): boolean {
  return node.children.length === 0 && node.filename !== '';
}

function collectAttachmentParts(node: MimeNode, into: Map<string, MimeNode>): void {
  if (isAttachmentPart(node)) into.set(node.partId, node);
  for (const child of node.children) collectAttachmentParts(child, into);
}

/**
 * Gmail's snippet is HTML-escaped (`&#39;` for an apostrophe, `&amp;`…); clients that show it
 * must unescape, so the sandbox does the same to keep them honest.
 */
export function escapeSnippet(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function parseMessage(source: string | Uint8Array, internalDate: number): ParsedMessage {
  const raw = rawBytes(source);
  const { headers, root } = parseRawMessage(raw);
  const attachmentParts = new Map<string, MimeNode>();
  collectAttachmentParts(root, attachmentParts);
  const facts = staticFactsOf(headers, root, internalDate, raw.byteLength);

  return {
    raw,
    headers,
    root,
    snippet: escapeSnippet(snippetOf(root)),
    sizeEstimate: raw.byteLength,
    facts,
    attachmentParts,
  };
}

/** Message-IDs this message replies to, nearest first (In-Reply-To, then References newest first). */
export function parentMessageIds(headers: readonly Header[]): string[] {
  const ids = (value: string | undefined): string[] => value?.match(/<[^<>\s]+>/g) ?? [];
  const refs = ids(headerValue(headers, 'References')).reverse();
  return [...ids(headerValue(headers, 'In-Reply-To')), ...refs];
}

/** Compared without angle brackets: some mailers drop them in References. */
export function normalizeMessageId(id: string): string {
  return id.trim().replace(/^<|>$/g, '');
}
