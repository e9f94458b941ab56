/**
 * A thread as Markdown for a person to keep. Everything the mail wrote is literal text in the
 * rendered file: headers and attachment names sit in code spans, each body in a fenced block,
 * both delimited by more backticks than the text contains (CommonMark 0.31 §6.1 and §4.5), so
 * no mail can close its span or fence and inject links, images or HTML into the document.
 */
import { cleanText } from './invisible.js';
import type { MessageView } from './summary.js';

/** A message as get_thread views it, with sender authentication when that view carries it. */
export type ExportMessage = MessageView & { authentication?: unknown };

export interface ThreadExport {
  threadId: string;
  subject: string;
  messageCount: number;
  omittedMessages: number;
  messages: ExportMessage[];
}

/**
 * Characters a person cannot see but a renderer obeys: the cleaning every result gets
 * (invisible.ts: controls but TAB and LF, Cf and default-ignorables such as bidi overrides,
 * zero-width and tag characters, lone surrogates), plus unassigned and private-use code points.
 */
export function forPeople(s: string): string {
  return cleanText(s).replace(/[\p{Co}\p{Cn}]/gu, '');
}

/** forPeople applied to every string of a JSON-like value. */
export function forPeopleDeep<T>(value: T): T {
  if (typeof value === 'string') return forPeople(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => forPeopleDeep(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = forPeopleDeep(v);
    return out as T;
  }
  return value;
}

function longestBacktickRun(s: string): number {
  let longest = 0;
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/**
 * Inline code holding `text` verbatim. The delimiter is one backtick longer than any run inside
 * (a run of equal length would close it); one space of padding is added when the text starts or
 * ends with a backtick, or starts and ends with a space, because CommonMark strips one such pair.
 */
export function codeSpan(text: string): string {
  const s = forPeople(text).replace(/\s*\n\s*/g, ' ');
  if (s === '') return '(none)';
  const tick = '`'.repeat(longestBacktickRun(s) + 1);
  const pad = s.startsWith('`') || s.endsWith('`') || (s.startsWith(' ') && s.endsWith(' ')) ? ' ' : '';
  return `${tick}${pad}${s}${pad}${tick}`;
}

/**
 * A fenced block holding `body` verbatim: a closing fence needs at least as many backticks as
 * the opening one and nothing else on its line, so a fence longer than every run in the body
 * cannot be closed from inside it.
 */
export function codeFence(body: string, info = 'text'): string {
  const text = forPeople(body).replace(/\n+$/, '');
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Nested key/value lines for a structure whose shape this module does not own. */
function renderStructure(
  value: unknown,
  indent: string,
  depth: number,
  out: string[],
  budget: { lines: number },
): void {
  if (budget.lines <= 0) return;
  if (value === null || typeof value !== 'object') {
    out.push(`${indent}- ${codeSpan(String(value))}`);
    budget.lines--;
    return;
  }
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [String(i + 1), v])
    : Object.entries(value as Record<string, unknown>);
  for (const [key, v] of entries) {
    if (budget.lines <= 0) {
      out.push(`${indent}- …`);
      return;
    }
    budget.lines--;
    if (v !== null && typeof v === 'object' && depth < 4) {
      out.push(`${indent}- ${codeSpan(key)}:`);
      renderStructure(v, `${indent}  `, depth + 1, out, budget);
    } else {
      const shown = v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v);
      out.push(`${indent}- ${codeSpan(key)}: ${codeSpan(shown)}`);
    }
  }
}

function renderMessage(m: ExportMessage, n: number, total: number): string[] {
  const lines = [`## Message ${n} of ${total}`, ''];
  const field = (name: string, value: string): void => {
    if (value !== '') lines.push(`- **${name}:** ${codeSpan(value)}`);
  };
  field('From', m.from);
  field('To', m.to);
  field('Cc', m.cc);
  field('Date', m.date);
  field('Subject', m.subject);
  if (m.labels.length > 0) lines.push(`- **Labels:** ${m.labels.map(codeSpan).join(', ')}`);
  if (m.authentication !== undefined) {
    lines.push('- **Sender authentication:**');
    renderStructure(m.authentication, '  ', 1, lines, { lines: 60 });
  }
  if (m.attachments.length > 0) {
    lines.push('- **Attachments:**');
    for (const a of m.attachments)
      lines.push(
        `  - ${codeSpan(a.filename || '(no name)')} (${codeSpan(a.mimeType)}, ${humanSize(a.size)})`,
      );
  }
  if (m.headers && m.headers.length > 0) {
    lines.push('- **Headers:**');
    for (const h of m.headers) lines.push(`  - ${codeSpan(h.name)}: ${codeSpan(h.value)}`);
  }
  lines.push('');
  if (m.body !== undefined && m.body.trim() !== '') {
    const notes = [
      m.bodySource === 'html' ? 'converted from HTML' : '',
      m.quotedHistoryRemoved === true ? 'quoted history removed' : '',
      m.bodyTruncated === true ? 'truncated' : '',
      m.hiddenText ? `${m.hiddenText.chars} characters of hidden text left out` : '',
    ].filter((s) => s !== '');
    if (notes.length > 0) lines.push(`_Body (${notes.join(', ')}):_`, '');
    lines.push(codeFence(m.body), '');
  } else if (m.body !== undefined) {
    lines.push(`_No body text${m.emptyBodyReason ? ` (${m.emptyBodyReason})` : ''}._`, '');
  }
  return lines;
}

export function renderThreadMarkdown(t: ThreadExport, exportedAt: string): string {
  const lines = [
    `# ${codeSpan(t.subject || '(no subject)')}`,
    '',
    `- **Thread:** ${codeSpan(t.threadId)}`,
    `- **Messages:** ${t.messageCount}${t.omittedMessages > 0 ? ` (${t.omittedMessages} not exported)` : ''}`,
    `- **Exported:** ${exportedAt} by mailwarden`,
    '',
    '> Everything quoted below comes from email and may have been written to mislead. Links and',
    '> addresses are shown as text; check them before you act on them.',
    '',
  ];
  t.messages.forEach((m, i) => lines.push('---', '', ...renderMessage(m, i + 1, t.messages.length)));
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}
