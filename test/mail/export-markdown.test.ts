import { describe, expect, it } from 'vitest';
import { codeFence, codeSpan, forPeople, renderThreadMarkdown } from '../../src/mail/export-markdown.js';
import type { ExportMessage, ThreadExport } from '../../src/mail/export-markdown.js';

/**
 * CommonMark 0.31 §6.1: a code span opened by a run of N backticks ends at the next run of
 * exactly N. Returns the span's content as a renderer would show it, or undefined if unclosed.
 */
function parseCodeSpan(md: string): { content: string; rest: string } | undefined {
  const open = /^`+/.exec(md)?.[0].length ?? 0;
  const re = /`+/g;
  re.lastIndex = open;
  for (let m = re.exec(md); m; m = re.exec(md)) {
    if (m[0].length !== open) continue;
    let content = md.slice(open, m.index);
    if (content.startsWith(' ') && content.endsWith(' ') && content.trim() !== '')
      content = content.slice(1, -1);
    return { content, rest: md.slice(m.index + open) };
  }
  return undefined;
}

/** §4.5: the first later line of ≥ N backticks only (≤ 3 spaces indent) closes a fence of N. */
function fenceBody(md: string): { body: string; closedAt: number } {
  const lines = md.split('\n');
  const n = /^`+/.exec(lines[0] ?? '')?.[0].length ?? 0;
  const close = new RegExp(`^ {0,3}\`{${n},}[ \\t]*$`);
  const at = lines.findIndex((l, i) => i > 0 && close.test(l));
  return { body: lines.slice(1, at).join('\n'), closedAt: at };
}

describe('codeSpan', () => {
  it.each([
    'plain',
    'a `b` c',
    'double `` inside',
    '`starts with a backtick',
    'ends with a backtick`',
    ' spaced both sides ',
    '```',
    '[click](https://evil.example) <img src=x onerror=alert(1)>',
  ])('holds %j verbatim', (text) => {
    const span = codeSpan(text);
    expect(parseCodeSpan(span)).toEqual({ content: text, rest: '' });
  });

  it('folds line breaks, which a span cannot hold', () => {
    expect(parseCodeSpan(codeSpan('two\nlines'))?.content).toBe('two lines');
  });
});

describe('codeFence', () => {
  it('cannot be closed by the body, however many backticks it uses', () => {
    const body = 'before\n```\n# not a heading\n````\n  ```` \nafter';
    const md = codeFence(body);
    const parsed = fenceBody(md);
    expect(parsed.body).toBe(body);
    expect(parsed.closedAt).toBe(md.split('\n').length - 1);
    expect(md.startsWith('`````text\n')).toBe(true);
  });
});

describe('forPeople', () => {
  it('removes bidi overrides, zero-width and tag characters, keeps tabs and newlines', () => {
    expect(forPeople('pay\u202Eusd\u202C\u200B now\u{E0041}\r\n\tok')).toBe('payusd now\n\tok');
  });
});

const message = (over: Partial<ExportMessage> = {}): ExportMessage =>
  ({
    id: 'm1',
    from: 'Mallory <m@evil.example>',
    to: 'you@example.com',
    cc: '',
    date: '2026-11-30T09:00:00.000Z',
    subject: 'Invoice `urgent`',
    unread: false,
    labels: ['INBOX'],
    body: 'Hello\n```\n[Click me](https://evil.example)\n```\nBye',
    bodySource: 'text',
    attachments: [{ filename: 'in`voice.pdf', mimeType: 'application/pdf', size: 2048, partId: '1' }],
    ...over,
  }) as ExportMessage;

const thread = (messages: ExportMessage[]): ThreadExport => ({
  threadId: 't1',
  subject: '# Subject](x) `with` ticks',
  messageCount: messages.length,
  omittedMessages: 0,
  messages,
});

describe('renderThreadMarkdown', () => {
  it('keeps every mail-written string inside a span or a fence', () => {
    const md = renderThreadMarkdown(thread([message()]), '2026-11-30T10:00:00.000Z');
    const lines = md.split('\n');
    expect(parseCodeSpan(lines[0]?.slice(2) ?? '')).toEqual({
      content: '# Subject](x) `with` ticks',
      rest: '',
    });
    const from = lines.find((l) => l.startsWith('- **From:** '));
    expect(parseCodeSpan(from?.slice('- **From:** '.length) ?? '')?.content).toBe('Mallory <m@evil.example>');
    const att = lines.find((l) => l.includes('voice.pdf')) ?? '';
    expect(parseCodeSpan(att.replace(/^ {2}- /, ''))?.content).toBe('in`voice.pdf');
    const start = lines.findIndex((l) => /^`{3,}text$/.test(l));
    expect(fenceBody(lines.slice(start).join('\n')).body).toBe(message().body);
  });

  it('renders sender authentication when the view carries it', () => {
    const auth = {
      spf: 'pass',
      dkim: 'fail',
      dmarc: 'fail',
      headerFrom: 'evil`.example',
      otherReports: 1,
    } as const;
    const md = renderThreadMarkdown(thread([message({ authentication: auth })]), 'now');
    expect(md).toContain('- **Sender authentication:**');
    expect(md).toContain('  - `spf`: `pass`');
    expect(md).toContain('  - `headerFrom`: ``evil`.example``');
    expect(md).toContain('  - `otherReports`: `1`');
    const without = { ...message() } as Partial<ExportMessage>;
    delete without.authentication;
    expect(renderThreadMarkdown(thread([without as ExportMessage]), 'now')).not.toContain(
      'Sender authentication',
    );
  });

  it('says when a body was converted or cut, and when there is none', () => {
    const md = renderThreadMarkdown(
      thread([message({ bodySource: 'html', bodyTruncated: true }), message({ body: '' })]),
      'now',
    );
    expect(md).toContain('_Body (converted from HTML, truncated):_');
    expect(md).toContain('_No body text._');
    expect(md).toContain('## Message 2 of 2');
  });
});
