import { readAuthentication } from './auth-results.js';
import type { Authentication } from './auth-results.js';
import { extractBody, listAttachments } from './body.js';
import type { AttachmentMeta, EmptyBodyReason } from './body.js';
import type { HiddenReason } from './body-notes.js';
import { formatAddress, headerValue, parseAddressList } from './headers.js';
import {
  LIST_CAPS,
  MAX_HEADER_VALUE,
  RESULT_BUDGET,
  capList,
  omittedField,
  prefixBytes,
  utf8Length,
} from './bounds.js';
import type { Omitted } from './bounds.js';
import { stripQuotedHistory } from './quotes.js';
import { messageSignals } from './signals.js';
import type { SignalDetails, SignalName } from './signals.js';
import { shownLabel } from './label-names.js';
import type { Header, Label, MailMessage, MailThread } from './types.js';

export { senderDomains } from './signals.js';

/** Label ids a reader does not need spelled out: they are reported as flags instead. */
const FLAG_LABELS = new Set(['UNREAD']);

export function labelNames(
  ids: readonly string[],
  labels: ReadonlyMap<string, Label>,
  wrap: (name: string) => string,
): string[] {
  return ids.filter((id) => !FLAG_LABELS.has(id)).map((id) => shownLabel(labels.get(id), id, wrap));
}

export function isUnread(m: MailMessage): boolean {
  return m.labelIds.includes('UNREAD');
}

/** Single-line header text: folded, decoded, capped so one header cannot flood the context. */
export function oneLine(value: string | undefined, max = 300): string {
  const s = (value ?? '').replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function header(headers: Header[], name: string): string {
  return oneLine(headerValue(headers, name));
}

export function dateOf(m: MailMessage): string {
  return new Date(m.internalDate).toISOString();
}

export interface AttachmentSummary {
  filename: string;
  mimeType: string;
  size: number;
}

function attachmentSummaries(list: AttachmentMeta[]): AttachmentSummary[] {
  return list.map((a) => ({ filename: oneLine(a.filename, 200), mimeType: a.mimeType, size: a.size }));
}

export interface ThreadSummaryData {
  threadId: string;
  subject: string;
  from: string;
  date: string;
  messageCount: number;
  unread: boolean;
  last: { messageId: string; date: string; from: string };
  attachments: AttachmentSummary[];
  labels: string[];
  snippet: string;
  /** From the first message's headers and MIME tree (no extra reads); [] when none. */
  signals: SignalName[];
  /** Only when a present signal has a domain to name. */
  signalDetails?: SignalDetails;
  /** Attachments and labels past their caps (bounds.ts), counted. */
  omitted?: Omitted;
}

/**
 * `references` are the sender domains of the whole result (senderDomains), which the lookalike
 * check compares an all-ASCII From domain with.
 */
export function summarizeThread(
  thread: MailThread,
  labels: ReadonlyMap<string, Label>,
  /** The result's fence for mail-made label names (shownLabel). */
  wrapLabel: (name: string) => string,
  references: readonly string[] = [],
): ThreadSummaryData {
  const first = thread.messages[0];
  const last = thread.messages[thread.messages.length - 1];
  if (!first || !last) {
    return {
      threadId: thread.id,
      subject: '',
      from: '',
      date: '',
      messageCount: 0,
      unread: false,
      last: { messageId: '', date: '', from: '' },
      attachments: [],
      labels: [],
      snippet: '',
      signals: [],
    };
  }
  const labelIds = new Set<string>();
  for (const m of thread.messages) for (const id of m.labelIds) labelIds.add(id);
  const signals = messageSignals(first, references);
  const omitted: Omitted = {};
  const summary: ThreadSummaryData = {
    threadId: thread.id,
    subject: header(first.headers, 'Subject'),
    from: header(first.headers, 'From'),
    date: dateOf(first),
    messageCount: thread.messages.length,
    unread: thread.messages.some(isUnread),
    last: { messageId: last.id, date: dateOf(last), from: header(last.headers, 'From') },
    attachments: capList(
      thread.messages.flatMap((m) => attachmentSummaries(listAttachments(m.root))),
      LIST_CAPS.attachments,
      'attachments',
      omitted,
    ),
    labels: capList(labelNames([...labelIds], labels, wrapLabel), LIST_CAPS.labels, 'labels', omitted),
    snippet: oneLine(last.snippet, 200),
    signals: signals.present,
    ...omittedField(omitted),
  };
  if (Object.keys(signals.details).length > 0) summary.signalDetails = signals.details;
  return summary;
}

export type BodyMode = 'full' | 'text' | 'new' | 'none';

export interface MessageView {
  id: string;
  from: string;
  to: string;
  cc: string;
  date: string;
  subject: string;
  unread: boolean;
  labels: string[];
  body?: string;
  bodySource?: 'text' | 'html' | 'none';
  quotedHistoryRemoved?: boolean;
  bodyTruncated?: boolean;
  /** Why `body` is empty; only when it is. */
  emptyBodyReason?: EmptyBodyReason | 'only-quoted-history';
  /** Text of the body a person would not see, left out of `body`; pieces only on request. */
  hiddenText?: HiddenTextView;
  headers?: Array<{ name: string; value: string }>;
  attachments: Array<AttachmentSummary & { attachmentId?: string; partId: string }>;
  authentication: Authentication;
  /** What the caps of bounds.ts left out of this message's lists and texts, counted. */
  omitted?: Omitted;
}

/**
 * A To or Cc header as one line. Up to the usual 300 characters it is the header as written;
 * a longer one shows whole addresses while they fit, and the others are counted under `key`
 * (a To with 5,000 recipients is not cut in the middle of one, nor silently).
 */
function recipients(headers: Header[], name: 'To' | 'Cc', key: 'to' | 'cc', omitted: Omitted): string {
  const value = headerValue(headers, name) ?? '';
  const whole = oneLine(value, Infinity);
  if (whole.length <= 300) return whole;
  const list = parseAddressList(value);
  let shown = '';
  let n = 0;
  for (const a of list) {
    const next = shown === '' ? formatAddress(a) : `${shown}, ${formatAddress(a)}`;
    if (oneLine(next, Infinity).length > 300) break;
    shown = next;
    n++;
  }
  // A header that does not parse as addresses is still bounded, by characters.
  if (n === 0 && list.length === 0) {
    omitted.headerChars = (omitted.headerChars ?? 0) + whole.length - 300;
    return whole.slice(0, 300);
  }
  if (list.length > n) omitted[key] = list.length - n;
  return oneLine(shown, Infinity);
}

export interface HiddenTextView {
  chars: number;
  reasons: HiddenReason[];
  pieces?: Array<{ reason: HiddenReason; text: string }>;
}

export function viewMessage(
  m: MailMessage,
  labels: ReadonlyMap<string, Label>,
  /** The result's fence for mail-made label names (shownLabel). */
  wrapLabel: (name: string) => string,
  mode: BodyMode,
  maxBodyChars: number,
  /** The receiving server's authserv-id (GMAIL_AUTHSERV_ID); undefined reads as unchecked. */
  trustedAuthservId?: string,
  /** With mode "full": also return the hidden text itself, piece by piece. */
  includeHidden = false,
): MessageView {
  const omitted: Omitted = {};
  const view: MessageView = {
    id: m.id,
    from: header(m.headers, 'From'),
    to: recipients(m.headers, 'To', 'to', omitted),
    cc: recipients(m.headers, 'Cc', 'cc', omitted),
    date: dateOf(m),
    subject: header(m.headers, 'Subject'),
    unread: isUnread(m),
    labels: capList(labelNames(m.labelIds, labels, wrapLabel), LIST_CAPS.labels, 'labels', omitted),
    attachments: capList(listAttachments(m.root), LIST_CAPS.attachments, 'attachments', omitted).map((a) => {
      const out: AttachmentSummary & { attachmentId?: string; partId: string } = {
        filename: oneLine(a.filename, 200),
        mimeType: a.mimeType,
        size: a.size,
        partId: a.partId,
      };
      if (a.attachmentId !== undefined) out.attachmentId = a.attachmentId;
      return out;
    }),
    authentication: readAuthentication(m.headers, trustedAuthservId),
  };
  const domains = view.authentication.fromDomains;
  if (domains !== undefined)
    view.authentication.fromDomains = capList(domains, LIST_CAPS.fromDomains, 'fromDomains', omitted);
  const done = (): MessageView => Object.assign(view, omittedField(omitted));
  if (mode === 'none') return done();
  const body = extractBody(m.root);
  let text = body.text;
  if (mode === 'new') {
    const stripped = stripQuotedHistory(text);
    text = stripped.text;
    view.quotedHistoryRemoved = stripped.removed;
  }
  if (body.emptyReason !== undefined) view.emptyBodyReason = body.emptyReason;
  else if (text.trim() === '') view.emptyBodyReason = 'only-quoted-history';
  if (body.hidden.length > 0) {
    const hidden: HiddenTextView = {
      chars: body.hidden.reduce((n, p) => n + p.text.length, 0),
      reasons: [...new Set(body.hidden.map((p) => p.reason))],
    };
    if (includeHidden && mode === 'full')
      hidden.pieces = capList(body.hidden, LIST_CAPS.hiddenPieces, 'hiddenPieces', omitted).map((p) => ({
        ...p,
      }));
    view.hiddenText = hidden;
  }
  if (text.length > maxBodyChars) {
    omitted.bodyChars = text.length - maxBodyChars;
    text = text.slice(0, maxBodyChars);
    view.bodyTruncated = true;
  }
  view.body = text;
  view.bodySource = body.source;
  if (mode === 'full') {
    view.headers = capList(m.headers, LIST_CAPS.headers, 'headers', omitted).map((h) => {
      const value = oneLine(headerValue([h], h.name), Infinity);
      if (value.length <= MAX_HEADER_VALUE) return { name: oneLine(h.name, 200), value };
      omitted.headerChars = (omitted.headerChars ?? 0) + value.length - MAX_HEADER_VALUE;
      return { name: oneLine(h.name, 200), value: value.slice(0, MAX_HEADER_VALUE) };
    });
  }
  return done();
}

/**
 * Keeps the message views of one result inside RESULT_BUDGET: bodies and header lists are
 * given room newest message first (the newest is what a reader came for); a body past the room
 * left is cut (bodyTruncated, omitted.bodyChars) and header fields past it are counted
 * (omitted.headers). Changes the views in place.
 */
export function fitViews(views: MessageView[]): void {
  let bodyRoom: number = RESULT_BUDGET.bodyBytes;
  let headerRoom: number = RESULT_BUDGET.headerBytes;
  for (let i = views.length - 1; i >= 0; i--) {
    const v = views[i] as MessageView;
    const omitted: Omitted = { ...v.omitted };
    if (v.body !== undefined) {
      const kept = prefixBytes(v.body, bodyRoom);
      if (kept.length < v.body.length) {
        omitted.bodyChars = (omitted.bodyChars ?? 0) + v.body.length - kept.length;
        v.body = kept;
        v.bodyTruncated = true;
      }
      bodyRoom -= utf8Length(kept);
    }
    if (v.headers !== undefined) {
      let n = 0;
      for (const h of v.headers) {
        const size = utf8Length(h.name) + utf8Length(h.value);
        if (size > headerRoom) break;
        headerRoom -= size;
        n++;
      }
      if (n < v.headers.length) {
        omitted.headers = (omitted.headers ?? 0) + v.headers.length - n;
        v.headers = v.headers.slice(0, n);
      }
    }
    if (Object.keys(omitted).length > 0) v.omitted = omitted;
  }
}
