import { describe, expect, it } from 'vitest';
import type { LogView } from '../../src/review/log-view.js';
import { formatLog } from '../../src/review/terminal.js';

/*
 * `mailwarden log` prints strings from mail to a terminal: a subject or sender carrying escape
 * sequences (retitle the window, clear the screen, a hyperlink, a bidi override) must reach it
 * as plain visible text, one line each.
 */

const ESC = '\u001b';
const hostile = [
  `${ESC}]0;owned${ESC}\\ title`,
  `${ESC}[2J${ESC}[H cleared`,
  `${ESC}]8;;http://attacker.example${ESC}\\link${ESC}]8;;${ESC}\\`,
  '\u009b31m C1 CSI',
  'two\r\nlines\rcarriage',
  '\u202Efdp.exe',
  'bell\u0007 and backspace\u0008',
];

function view(): LogView {
  const at = Date.parse('2026-06-18T08:00:00Z');
  return {
    range: { from: '2026-06-18', to: '2026-06-18', timeZone: 'UTC' },
    calls: [
      {
        call: 'c0ffee00-0000-4000-8000-000000000000',
        account: 'default',
        tool: `archive${ESC}[31m`,
        actor: 'agent',
        at,
        items: hostile.map((h, i) => ({
          account: 'default',
          ids: [`t${i}`],
          unit: 'thread' as const,
          action: 'archive' as const,
          actor: 'agent' as const,
          outcome: i % 2 === 0 ? ('moved' as const) : ('refused' as const),
          tool: 'archive',
          at,
          call: 'c0ffee00-0000-4000-8000-000000000000',
          count: 1,
          sender: `${h}@x.example`,
          subject: h,
          refusedBy: h,
          reason: h,
        })),
      },
    ],
    damaged: [],
    damagedCount: 0,
    lines: hostile.length,
    found: true,
  };
}

describe('formatLog', () => {
  it('lets no control character from mail reach the terminal', () => {
    const out = formatLog(view(), [{ account: 'default', day: '2026-06-18', used: 4, cap: 50 }]);
    // Only LF separates lines; nothing else below U+0020, no DEL or C1, no bidi controls.
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(out).toContain(']0;owned\\ title');
    expect(out).toContain('fdp.exe');
    expect(out).toContain('two lines carriage');
    expect(out).toContain('moved to Archive');
    expect(out).toContain('call c0ffee00');
    expect(out).toContain('today (2026-06-18), default: 4 of 50 agent moves out of the inbox used, 46 left');
  });
});
