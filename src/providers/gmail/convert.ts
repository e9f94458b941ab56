import type { gmail_v1 } from '@googleapis/gmail';
import type {
  Header,
  HistoryPage,
  Label,
  MailMessage,
  MailThread,
  MimeNode,
  Profile,
} from '../../mail/types.js';

/**
 * Gmail JSON → the provider-neutral model. Pure functions; Gmail's generated types mark nearly
 * every field optional and nullable, so absent values get the model's documented defaults.
 */

type Nullable<T> = T | null | undefined;

/**
 * Gmail sends part bodies and attachments base64url-encoded (RFC 4648 §5), usually without
 * padding. Node's base64 decoder accepts both alphabets and missing padding; the result is
 * copied into a plain Uint8Array so callers never hold a Buffer view.
 */
export function decodeBase64Url(data: string): Uint8Array {
  return new Uint8Array(Buffer.from(data, 'base64'));
}

function headersOf(list: Nullable<gmail_v1.Schema$MessagePartHeader[]>): Header[] {
  return (list ?? []).map((h) => ({ name: h.name ?? '', value: h.value ?? '' }));
}

/** One MIME node; `fallbackId` fills in a part id Gmail left out, in Gmail's own numbering. */
export function toMimeNode(part: Nullable<gmail_v1.Schema$MessagePart>, fallbackId = ''): MimeNode {
  const p = part ?? {};
  const partId = p.partId ?? fallbackId;
  const node: MimeNode = {
    partId,
    mimeType: (p.mimeType ?? 'application/octet-stream').toLowerCase(),
    headers: headersOf(p.headers),
    filename: p.filename ?? '',
    size: p.body?.size ?? 0,
    children: (p.parts ?? []).map((child, i) =>
      toMimeNode(child, partId === '' ? String(i) : `${partId}.${i}`),
    ),
  };
  const data = p.body?.data;
  if (typeof data === 'string') {
    node.body = decodeBase64Url(data);
    if (p.body?.size === undefined || p.body.size === null) node.size = node.body.length;
  }
  const attachmentId = p.body?.attachmentId;
  if (typeof attachmentId === 'string' && attachmentId !== '') node.attachmentId = attachmentId;
  return node;
}

export function toMailMessage(m: gmail_v1.Schema$Message): MailMessage {
  const root = toMimeNode(m.payload);
  const internalDate = Number(m.internalDate ?? 0);
  return {
    id: m.id ?? '',
    threadId: m.threadId ?? '',
    labelIds: [...(m.labelIds ?? [])],
    internalDate: Number.isFinite(internalDate) ? internalDate : 0,
    snippet: m.snippet ?? '',
    sizeEstimate: m.sizeEstimate ?? 0,
    headers: root.headers,
    root,
  };
}

export function toMailThread(t: gmail_v1.Schema$Thread): MailThread {
  // Gmail lists a thread's messages oldest first; sort anyway so the model's promise holds even
  // for a simulator or a future API that does not.
  const messages = (t.messages ?? []).map(toMailMessage).sort((a, b) => a.internalDate - b.internalDate);
  const thread: MailThread = { id: t.id ?? '', messages };
  if (typeof t.historyId === 'string') thread.historyId = t.historyId;
  return thread;
}

export function toLabel(l: gmail_v1.Schema$Label): Label {
  const label: Label = {
    id: l.id ?? '',
    name: l.name ?? l.id ?? '',
    type: l.type === 'system' ? 'system' : 'user',
  };
  // labels.list leaves counts out (only labels.get carries them), so absent means "not known",
  // never zero.
  if (typeof l.messagesTotal === 'number') label.messagesTotal = l.messagesTotal;
  if (typeof l.messagesUnread === 'number') label.messagesUnread = l.messagesUnread;
  if (typeof l.threadsTotal === 'number') label.threadsTotal = l.threadsTotal;
  if (typeof l.threadsUnread === 'number') label.threadsUnread = l.threadsUnread;
  const bg = l.color?.backgroundColor;
  const fg = l.color?.textColor;
  if (typeof bg === 'string' && typeof fg === 'string') label.color = { backgroundColor: bg, textColor: fg };
  return label;
}

/** A message's id and live labels, as threads.modify and messages.get format=minimal answer them. */
export function toMessageLabels(
  m: gmail_v1.Schema$Message,
  fallbackThreadId: string,
): { id: string; threadId: string; labelIds: string[] } {
  return { id: m.id ?? '', threadId: m.threadId ?? fallbackThreadId, labelIds: [...(m.labelIds ?? [])] };
}

export function toProfile(p: gmail_v1.Schema$Profile): Profile {
  return {
    emailAddress: p.emailAddress ?? '',
    messagesTotal: p.messagesTotal ?? 0,
    threadsTotal: p.threadsTotal ?? 0,
    historyId: p.historyId ?? '',
  };
}

function ref(m: Nullable<gmail_v1.Schema$Message>): { messageId: string; threadId: string } {
  return { messageId: m?.id ?? '', threadId: m?.threadId ?? '' };
}

/** One page of history.list. `fallbackHistoryId` stands in if Gmail omits the current id. */
export function toHistoryPage(
  r: gmail_v1.Schema$ListHistoryResponse,
  fallbackHistoryId: string,
): HistoryPage {
  const page: HistoryPage = {
    added: [],
    deleted: [],
    labelsAdded: [],
    labelsRemoved: [],
    historyId: r.historyId ?? fallbackHistoryId,
  };
  for (const h of r.history ?? []) {
    for (const a of h.messagesAdded ?? [])
      page.added.push({ ...ref(a.message), labelIds: [...(a.message?.labelIds ?? [])] });
    for (const d of h.messagesDeleted ?? []) page.deleted.push(ref(d.message));
    // labelIds on the record are the labels that changed; message.labelIds would be the state
    // after the change, which is not what this entry reports.
    for (const a of h.labelsAdded ?? [])
      page.labelsAdded.push({ ...ref(a.message), labelIds: [...(a.labelIds ?? [])] });
    for (const r2 of h.labelsRemoved ?? []) {
      page.labelsRemoved.push({ ...ref(r2.message), labelIds: [...(r2.labelIds ?? [])] });
    }
  }
  if (typeof r.nextPageToken === 'string' && r.nextPageToken !== '') page.nextPageToken = r.nextPageToken;
  return page;
}
