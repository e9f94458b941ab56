import type { gmail_v1 } from '@googleapis/gmail';

export interface LabelRecord {
  id: string;
  name: string;
  type: 'system' | 'user';
  messageListVisibility?: string;
  labelListVisibility?: string;
  color?: { backgroundColor: string; textColor: string };
}

/**
 * Gmail's system labels as labels.list returns them: the name equals the id, and the ones Gmail
 * hides from the label list carry the hide visibilities. Order follows what Gmail answers.
 */
const HIDDEN = { messageListVisibility: 'hide', labelListVisibility: 'labelHide' } as const;
export const SYSTEM_LABELS: readonly LabelRecord[] = [
  { id: 'CHAT', name: 'CHAT', type: 'system', ...HIDDEN },
  { id: 'SENT', name: 'SENT', type: 'system' },
  { id: 'INBOX', name: 'INBOX', type: 'system' },
  { id: 'IMPORTANT', name: 'IMPORTANT', type: 'system', ...HIDDEN },
  { id: 'TRASH', name: 'TRASH', type: 'system', ...HIDDEN },
  { id: 'DRAFT', name: 'DRAFT', type: 'system' },
  { id: 'SPAM', name: 'SPAM', type: 'system', ...HIDDEN },
  { id: 'CATEGORY_FORUMS', name: 'CATEGORY_FORUMS', type: 'system', ...HIDDEN },
  { id: 'CATEGORY_UPDATES', name: 'CATEGORY_UPDATES', type: 'system', ...HIDDEN },
  { id: 'CATEGORY_PERSONAL', name: 'CATEGORY_PERSONAL', type: 'system', ...HIDDEN },
  { id: 'CATEGORY_PROMOTIONS', name: 'CATEGORY_PROMOTIONS', type: 'system', ...HIDDEN },
  { id: 'CATEGORY_SOCIAL', name: 'CATEGORY_SOCIAL', type: 'system', ...HIDDEN },
  { id: 'STARRED', name: 'STARRED', type: 'system', ...HIDDEN },
  { id: 'UNREAD', name: 'UNREAD', type: 'system' },
];

/** Labels a client may not put on a message through modify (Gmail owns them). */
export const NOT_ADDABLE: ReadonlySet<string> = new Set(['DRAFT', 'SENT', 'CHAT']);

export interface LabelCounts {
  messagesTotal: number;
  messagesUnread: number;
  threadsTotal: number;
  threadsUnread: number;
}

export function labelResource(label: LabelRecord, counts?: LabelCounts): gmail_v1.Schema$Label {
  const out: gmail_v1.Schema$Label = { id: label.id, name: label.name };
  if (label.messageListVisibility !== undefined) out.messageListVisibility = label.messageListVisibility;
  if (label.labelListVisibility !== undefined) out.labelListVisibility = label.labelListVisibility;
  out.type = label.type;
  if (counts) Object.assign(out, counts);
  if (label.color) out.color = { ...label.color };
  return out;
}

const VISIBILITY = {
  messageListVisibility: ['show', 'hide'],
  labelListVisibility: ['labelShow', 'labelShowIfUnread', 'labelHide'],
} as const;

const HEX_COLOR = /^#[0-9a-f]{6}$/i;

/** Validated fields of a labels.create / patch / update body. */
export interface LabelInput {
  name?: string;
  messageListVisibility?: string;
  labelListVisibility?: string;
  color?: { backgroundColor: string; textColor: string };
}

export function readLabelInput(body: unknown): LabelInput | string {
  if (typeof body !== 'object' || body === null) return 'Invalid label body';
  const b = body as Record<string, unknown>;
  const out: LabelInput = {};
  if (b['name'] !== undefined) {
    if (typeof b['name'] !== 'string' || b['name'].trim() === '') return 'Invalid label name';
    out.name = b['name'];
  }
  for (const key of ['messageListVisibility', 'labelListVisibility'] as const) {
    const v = b[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !(VISIBILITY[key] as readonly string[]).includes(v)) {
      return `Invalid value for ${key}: ${String(v)}`;
    }
    out[key] = v;
  }
  const color = b['color'];
  if (color !== undefined) {
    const c = color as Record<string, unknown> | null;
    const bg = c?.['backgroundColor'];
    const fg = c?.['textColor'];
    if (typeof bg !== 'string' || typeof fg !== 'string' || !HEX_COLOR.test(bg) || !HEX_COLOR.test(fg)) {
      return 'Invalid label color';
    }
    out.color = { backgroundColor: bg, textColor: fg };
  }
  return out;
}
