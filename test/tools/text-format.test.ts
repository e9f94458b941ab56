import { describe, expect, it } from 'vitest';
import { TEXT_RENDERERS } from '../../src/tools/common/text-format.js';

/* The text renderers on their own: what a person reads first is there, zero counts are not. */

const render = (tool: string, out: Record<string, unknown>): string => {
  const r = TEXT_RENDERERS.get(tool);
  if (r === undefined) throw new Error(`no renderer for ${tool}`);
  return r(out);
};

describe('text renderers', () => {
  it('count_moves shows the counts that are not zero and leaves the zeros out', () => {
    const zero = { messages: 0, threads: 0 };
    const text = render('count_moves', {
      from: '2026-11-24',
      to: '2026-11-30',
      timeZone: 'UTC',
      complete: true,
      agent: {
        moved: { archive: { messages: 3, threads: 2 }, spam: zero },
        refused: { items: 1, byRule: { 'protected-correspondent': 1 } },
        failed: 0,
      },
      rule: { moved: { archive: zero }, failed: 0 },
      bySender: [],
    });
    expect(text.split('\n')[0]).toBe('moves 2026-11-24..2026-11-30 (UTC); zero counts left out');
    expect(text).toMatch(/archive: messages=3 threads=2/);
    expect(text).toMatch(/protected-correspondent=1/);
    expect(text).not.toMatch(/spam/);
    expect(text).not.toMatch(/^rule/m);
  });

  it('a message block: Cc only when there is one, the body last, an html source said', () => {
    const message = {
      id: 'm1',
      from: 'F',
      to: 'T',
      cc: '',
      date: '2026-11-30T05:53:00.000Z',
      subject: 'S',
      unread: true,
      labels: ['INBOX'],
      attachments: [{ filename: 'a.txt', mimeType: 'text/plain', size: 12, partId: '2' }],
      authentication: { unchecked: true, otherReports: 0 },
      bodySource: 'html',
      body: 'hello\nthere',
    };
    const lines = render('get_message', { threadId: 't1', message }).split('\n');
    expect(lines).toEqual([
      'Message in thread t1: S',
      '--- m1 2026-11-30 05:53 unread [INBOX]',
      'From: F',
      'To: T',
      'Auth: unchecked',
      'Attachment: a.txt text/plain 12 B part 2',
      'bodySource: html',
      'hello',
      'there',
    ]);
  });

  it('triage_digest: buckets as counts, with their example ids for the follow-up call', () => {
    const b = (threads: number, unread: number) => ({ threads, unread, examples: ['x1', 'x2'] });
    const text = render('triage_digest', {
      query: 'in:inbox',
      moreThreadsMatched: false,
      asOf: '2026-11-30T09:00:00.000Z',
      threads: 5,
      unread: { threads: 2, examples: ['x1'] },
      attachments: { threads: 0, examples: [] },
      signals: { newsletter: b(3, 1), calendar: b(0, 0) },
      ages: { today: b(1, 0) },
      labels: [{ label: 'INBOX', ...b(5, 2) }],
      labelsFound: 1,
      senders: [],
      sendersFound: 0,
    });
    expect(text).toContain('signals: newsletter 3 (1 unread) e.g. x1 x2');
    expect(text).toContain('ages: today 1 e.g. x1 x2');
    expect(text).toContain('labels (1): INBOX 5 (2 unread) e.g. x1 x2');
    expect(text).toContain('unread 2 e.g. x1, with attachments 0');
    expect(text).not.toContain('calendar');
  });
});
