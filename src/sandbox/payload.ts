import type { gmail_v1 } from '@googleapis/gmail';
import { repair8bit } from '../mail/headers.js';
import type { Header, MimeNode } from '../mail/types.js';
import { invalidArgument, notFound } from './errors.js';
import { isAttachmentPart } from './message.js';
import type { StoredMessage, StoredThread, UserMailbox } from './model.js';

export type MessageFormat = 'full' | 'metadata' | 'minimal' | 'raw';

/**
 * Gmail's body `data` and `raw` are URL-safe base64 with `=` padding kept; strict decoders
 * (Python's urlsafe_b64decode) need the padding.
 */
export function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

/**
 * Attachment ids are opaque to clients (Gmail's change between fetches). These encode the part
 * so the sandbox can find it again without a table; the prefix resembles Gmail's.
 */
export function attachmentIdFor(messageId: string, partId: string): string {
  return `ANGjdJ${Buffer.from(`${messageId}/${partId}`, 'utf8').toString('base64url')}`;
}

export function attachmentResource(
  msg: StoredMessage,
  attachmentId: string,
): gmail_v1.Schema$MessagePartBody {
  const decoded = attachmentId.startsWith('ANGjdJ')
    ? Buffer.from(attachmentId.slice(6), 'base64url').toString('utf8')
    : '';
  const slash = decoded.indexOf('/');
  if (slash < 0 || decoded.slice(0, slash) !== msg.id) throw invalidArgument('Invalid attachment token');
  const node = msg.parsed.attachmentParts.get(decoded.slice(slash + 1));
  if (!node) throw notFound();
  const body = node.body ?? new Uint8Array();
  return { size: body.byteLength, data: base64url(body) };
}

/** Values as they stand in the source (RFC 2047 words kept); raw 8-bit bytes read as UTF-8 when valid. */
function headersOut(
  headers: readonly Header[],
  only?: ReadonlySet<string>,
): gmail_v1.Schema$MessagePartHeader[] {
  return headers
    .filter((h) => only === undefined || only.has(h.name.toLowerCase()))
    .map((h) => ({ name: h.name, value: repair8bit(h.value) }));
}

function partResource(msg: StoredMessage, node: MimeNode): gmail_v1.Schema$MessagePart {
  const part: gmail_v1.Schema$MessagePart = {
    partId: node.partId,
    mimeType: node.mimeType,
    filename: node.filename,
    headers: headersOut(node.headers),
  };
  if (node.children.length > 0) {
    part.body = { size: 0 };
    part.parts = node.children.map((child) => partResource(msg, child));
  } else if (isAttachmentPart(node)) {
    part.body = { attachmentId: attachmentIdFor(msg.id, node.partId), size: node.size };
  } else {
    const bytes = node.body ?? new Uint8Array();
    part.body = bytes.byteLength > 0 ? { size: bytes.byteLength, data: base64url(bytes) } : { size: 0 };
  }
  return part;
}

/** Gmail omits empty repeated fields: an unlabelled message has no labelIds key at all. */
function labelIdsOf(msg: StoredMessage): { labelIds?: string[] } {
  return msg.labelIds.size > 0 ? { labelIds: [...msg.labelIds] } : {};
}

export function messageResource(
  msg: StoredMessage,
  format: MessageFormat,
  metadataHeaders: readonly string[] = [],
): gmail_v1.Schema$Message {
  const out: gmail_v1.Schema$Message = {
    id: msg.id,
    threadId: msg.threadId,
    ...labelIdsOf(msg),
    snippet: msg.parsed.snippet,
  };
  if (format === 'full') out.payload = partResource(msg, msg.parsed.root);
  if (format === 'metadata') {
    const only =
      metadataHeaders.length > 0 ? new Set(metadataHeaders.map((h) => h.toLowerCase())) : undefined;
    out.payload = { mimeType: msg.parsed.root.mimeType, headers: headersOut(msg.parsed.headers, only) };
  }
  out.sizeEstimate = msg.parsed.sizeEstimate;
  if (format === 'raw') out.raw = base64url(msg.parsed.raw);
  out.historyId = String(msg.historyId);
  out.internalDate = String(msg.internalDate);
  return out;
}

/** What modify/trash/untrash answer for a message: just its id, thread and labels. */
export function messageRef(msg: StoredMessage): gmail_v1.Schema$Message {
  return { id: msg.id, threadId: msg.threadId, ...labelIdsOf(msg) };
}

export function threadResource(
  mailbox: UserMailbox,
  thread: StoredThread,
  format: Exclude<MessageFormat, 'raw'>,
  metadataHeaders: readonly string[] = [],
): gmail_v1.Schema$Thread {
  return {
    id: thread.id,
    historyId: String(mailbox.threadHistoryId(thread)),
    messages: thread.messages.map((m) => messageResource(m, format, metadataHeaders)),
  };
}
