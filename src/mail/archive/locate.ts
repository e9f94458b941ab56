/**
 * Finding the attachment a tool call names, in a thread read with format=full. A part id is
 * the stable handle (Gmail's attachment ids change from one read to the next); a filename is
 * what a person says, and may be ambiguous.
 */
import { listAttachments } from '../body.js';
import type { AttachmentMeta } from '../body.js';
import { invalidInput, MailError } from '../errors.js';
import { oneLine } from '../summary.js';
import type { MailMessage, MailThread, MimeNode } from '../types.js';
import { shownAs, unfence } from '../fence-format.js';
import { contentTypeOf } from '../mime.js';

export interface AttachmentSelector {
  messageId?: string;
  attachmentId?: string;
  partId?: string;
  filename?: string;
}

export interface LocatedAttachment {
  message: MailMessage;
  /** Absent only when an attachment id from an earlier read matches no part of this one. */
  meta?: AttachmentMeta;
  node?: MimeNode;
  /** Id to fetch the bytes with when the part did not carry them inline. */
  attachmentId?: string;
}

export function findPart(root: MimeNode, partId: string): MimeNode | undefined {
  if (root.partId === partId) return root;
  for (const child of root.children) {
    const hit = findPart(child, partId);
    if (hit) return hit;
  }
  return undefined;
}

/** A filename copied from a tool result may still carry its ⟦mail nonce⟧ fence. */
function unfenced(name: string): string {
  return unfence(name.trim()).trim();
}

function located(message: MailMessage, meta: AttachmentMeta): LocatedAttachment {
  const out: LocatedAttachment = { message, meta };
  const node = findPart(message.root, meta.partId);
  if (node) out.node = node;
  if (meta.attachmentId !== undefined) out.attachmentId = meta.attachmentId;
  return out;
}

export function locateAttachment(thread: MailThread, sel: AttachmentSelector): LocatedAttachment {
  let messages = thread.messages;
  if (sel.messageId !== undefined) {
    messages = messages.filter((m) => m.id === sel.messageId);
    if (messages.length === 0)
      throw new MailError('not_found', `message ${sel.messageId} is not in thread ${thread.id}`);
  }
  const all = messages.flatMap((message) => listAttachments(message.root).map((meta) => ({ message, meta })));
  const where = sel.messageId !== undefined ? `message ${sel.messageId}` : `thread ${thread.id}`;
  let hits: typeof all;
  if (sel.partId !== undefined) {
    if (sel.messageId === undefined && messages.length > 1)
      throw invalidInput('messageId', 'a partId is per message: give the messageId too');
    hits = all.filter((a) => a.meta.partId === sel.partId);
  } else if (sel.attachmentId !== undefined) {
    hits = all.filter((a) => a.meta.attachmentId === sel.attachmentId);
    const only = messages[0];
    // Gmail issues new attachment ids on every read, yet honours old ones: fetch it blind.
    if (hits.length === 0 && sel.messageId !== undefined && only !== undefined)
      return { message: only, attachmentId: sel.attachmentId };
  } else if (sel.filename !== undefined) {
    // The model names an attachment the way a result showed it: cleaned of invisible characters,
    // line breaks collapsed, fence brackets replaced, and in get_thread/search cut to 200.
    const want = shownAs(unfenced(sel.filename));
    const shown = (name: string): string[] => [name, shownAs(name), shownAs(oneLine(name, 200))];
    hits = all.filter((a) => shown(a.meta.filename).includes(want));
    if (hits.length === 0)
      hits = all.filter((a) => shown(a.meta.filename).some((n) => n.toLowerCase() === want.toLowerCase()));
  } else {
    throw invalidInput('partId', 'name the attachment by partId (with messageId), attachmentId or filename');
  }
  const first = hits[0];
  if (first === undefined) {
    const known = all.map((a) => `${a.message.id}/${a.meta.partId}`).join(', ');
    throw new MailError(
      'not_found',
      `no such attachment in ${where}${known ? `; its attachments (messageId/partId): ${known}` : ' (it has none)'}`,
    );
  }
  if (hits.length > 1) {
    const ids = hits.map((a) => `${a.message.id}/${a.meta.partId}`).join(', ');
    throw invalidInput(
      'filename',
      `several attachments match (messageId/partId: ${ids}); give messageId and partId`,
    );
  }
  return located(first.message, first.meta);
}

/** A text part's declared charset (RFC 2046 §4.1.2), which read_attachment tries first. */
export function declaredCharset(found: LocatedAttachment): { charset?: string } {
  const node = found.node;
  if (node === undefined || !node.mimeType.startsWith('text/')) return {};
  const charset = contentTypeOf(node.headers).params.get('charset');
  return charset === undefined || charset === '' ? {} : { charset };
}
