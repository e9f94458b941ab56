import { describe, expect, it } from 'vitest';
import { isMailError } from '../../src/mail/errors.js';
import type { MailError } from '../../src/mail/errors.js';
import {
  evaluate,
  evaluateLabelState,
  formatQuery,
  labelStatePredicates,
  laMidnight,
  mentionsSpamOrTrash,
  parseQuery,
  substituteMe,
} from '../../src/mail/query/index.js';
import type { MessageFacts, QueryNode, Tri } from '../../src/mail/query/index.js';

const t = (value: string, field: string | null = null, quoted = false): QueryNode => ({
  type: 'term',
  field,
  value,
  quoted,
});
const and = (...children: QueryNode[]): QueryNode => ({ type: 'and', children });
const or = (...children: QueryNode[]): QueryNode => ({ type: 'or', children });
const not = (child: QueryNode): QueryNode => ({ type: 'not', child });

function parseError(q: string): MailError {
  try {
    parseQuery(q);
  } catch (e) {
    if (isMailError(e)) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(q)} to be rejected`);
}

describe('parseQuery', () => {
  it('reads an empty or blank query as an empty AND', () => {
    expect(parseQuery('')).toEqual(and());
    expect(parseQuery('  \t\n ')).toEqual(and());
  });

  it('reads free text, phrases and operators', () => {
    expect(parseQuery('dinner')).toEqual(t('dinner'));
    expect(parseQuery('"dinner and movie"')).toEqual(t('dinner and movie', null, true));
    expect(parseQuery('FROM:Ann@Example.com')).toEqual(t('Ann@Example.com', 'from'));
    expect(parseQuery('subject:"Quarterly Report"')).toEqual(t('Quarterly Report', 'subject', true));
    expect(parseQuery('newer_than:2d older_than:1y')).toEqual(
      and(t('2d', 'newer_than'), t('1y', 'older_than')),
    );
  });

  it('treats an unknown word: prefix and lower-case or/and as plain text', () => {
    expect(parseQuery('priority:high')).toEqual(t('priority:high'));
    expect(parseQuery('https://example.com/x')).toEqual(t('https://example.com/x'));
    expect(parseQuery('cats or dogs and')).toEqual(and(t('cats'), t('or'), t('dogs'), t('and')));
    expect(parseQuery('from:a:b')).toEqual(t('a:b', 'from'));
  });

  it('joins terms with implicit and explicit AND alike', () => {
    expect(parseQuery('a b c')).toEqual(and(t('a'), t('b'), t('c')));
    expect(parseQuery('a AND b c')).toEqual(and(t('a'), t('b'), t('c')));
  });

  it('binds OR tighter than AND', () => {
    expect(parseQuery('a b OR c d')).toEqual(and(t('a'), or(t('b'), t('c')), t('d')));
    expect(parseQuery('a OR b OR c')).toEqual(or(t('a'), t('b'), t('c')));
    expect(parseQuery('from:amy OR from:david')).toEqual(or(t('amy', 'from'), t('david', 'from')));
  });

  it('reads {…} as OR and (…) as AND, keeping nesting', () => {
    expect(parseQuery('{a b c}')).toEqual(or(t('a'), t('b'), t('c')));
    expect(parseQuery('{a OR b c}')).toEqual(or(t('a'), t('b'), t('c')));
    expect(parseQuery('a (b c)')).toEqual(and(t('a'), and(t('b'), t('c'))));
    expect(parseQuery('(a OR b) c')).toEqual(and(or(t('a'), t('b')), t('c')));
    expect(parseQuery('{(a b) {c d}} e')).toEqual(and(or(and(t('a'), t('b')), or(t('c'), t('d'))), t('e')));
    expect(parseQuery('{a b} OR c')).toEqual(or(or(t('a'), t('b')), t('c')));
  });

  it('drops brackets around a single term', () => {
    expect(parseQuery('(a)')).toEqual(t('a'));
    expect(parseQuery('{a}')).toEqual(t('a'));
    expect(parseQuery('-((a))')).toEqual(not(t('a')));
  });

  it('reads negation of terms, phrases and groups', () => {
    expect(parseQuery('dinner -movie')).toEqual(and(t('dinner'), not(t('movie'))));
    expect(parseQuery('-from:x')).toEqual(not(t('x', 'from')));
    expect(parseQuery('-"a b"')).toEqual(not(t('a b', null, true)));
    expect(parseQuery('-(a b)')).toEqual(not(and(t('a'), t('b'))));
    expect(parseQuery('-{a b}')).toEqual(not(or(t('a'), t('b'))));
    expect(parseQuery('--a')).toEqual(not(not(t('a'))));
    expect(parseQuery('-a OR b')).toEqual(or(not(t('a')), t('b')));
    expect(parseQuery('well-known')).toEqual(t('well-known'));
  });

  it('applies an operator to each term of field:(…) and field:{…}', () => {
    expect(parseQuery('subject:(dinner movie)')).toEqual(and(t('dinner', 'subject'), t('movie', 'subject')));
    expect(parseQuery('from:{amy david}')).toEqual(or(t('amy', 'from'), t('david', 'from')));
    expect(parseQuery('subject:("quarterly report" -draft {q3 q4})')).toEqual(
      and(
        t('quarterly report', 'subject', true),
        not(t('draft', 'subject')),
        or(t('q3', 'subject'), t('q4', 'subject')),
      ),
    );
    expect(parseQuery('is:(unread starred)')).toEqual(and(t('unread', 'is'), t('starred', 'is')));
    expect(parseQuery('-label:{a b}')).toEqual(not(or(t('a', 'label'), t('b', 'label'))));
  });

  it('rejects unbalanced brackets and quotes with their position', () => {
    expect(parseError('(a b').message).toBe(`query: unclosed '(' at position 1`);
    expect(parseError('x (a (b c)').message).toBe(`query: unclosed '(' at position 3`);
    expect(parseError('a b)').message).toBe(`query: unmatched ')' at position 4`);
    expect(parseError('{a b').message).toBe(`query: unclosed '{' at position 1`);
    expect(parseError('a }').message).toBe(`query: unmatched '}' at position 3`);
    expect(parseError('(a}').message).toBe(`query: unmatched '}' at position 3`);
    expect(parseError('{a)').message).toBe(`query: unmatched ')' at position 3`);
    expect(parseError('subject:"abc').message).toBe(
      `query: unclosed quote: the '"' at position 9 has no closing '"'`,
    );
  });

  it('rejects misplaced OR, AND and "-" with their position', () => {
    expect(parseError('a OR').message).toBe('query: OR at position 3 needs a term after it');
    expect(parseError('OR a').message).toBe('query: OR at position 1 needs a term before it');
    expect(parseError('a OR OR b').message).toBe('query: OR at position 3 needs a term after it');
    expect(parseError('a AND').message).toBe('query: AND at position 3 needs a term after it');
    expect(parseError('AND a').message).toBe('query: AND at position 1 needs a term before it');
    expect(parseError('a - b').message).toBe(
      `query: '-' at position 3 must be followed directly by the term it excludes`,
    );
    expect(parseError('{a AND b}').message).toMatch(/AND at position 4 cannot join terms inside/);
  });

  it('rejects empty groups, empty quotes, detached values and nested operators', () => {
    expect(parseError('a ()').message).toBe(`query: empty '( )' at position 3`);
    expect(parseError('{}').message).toBe(`query: empty '{ }' at position 1`);
    expect(parseError('a ""').message).toBe('query: empty quotes at position 3');
    expect(parseError('from: ann').message).toMatch(
      /"from:" at position 1 needs a value right after the colon/,
    );
    expect(parseError('x subject:').message).toMatch(/"subject:" at position 3 needs a value/);
    expect(parseError('from:(a to:b)').message).toBe(
      `query: "to:" at position 9 cannot be used inside "from:( )"`,
    );
  });

  it('rejects bad operator values at parse time, naming the operator and what it takes', () => {
    const cases: Array<[string, RegExp]> = [
      [
        'a newer_than:xyz',
        /newer_than:xyz at position 3 is not valid: newer_than: takes a whole number then d/,
      ],
      ['older_than:3w', /older_than: takes a whole number then d \(days\), m \(months\) or y \(years\)/],
      [
        'after:2024/13/45',
        /after:2024\/13\/45 at position 1 is not valid: after: takes a real date as YYYY\/MM\/DD/,
      ],
      ['before:2023/02/29', /before: takes a real date/],
      ['after:2024/01/01/02', /after: takes a real date/],
      ['larger:abc', /larger: takes a whole number of bytes, optionally followed by K/],
      ['smaller:1.5M', /smaller: takes a whole number of bytes/],
      ['category:nonsense', /category: takes one of: primary, personal, social, promotions, updates, forums/],
      ['is:whatever', /is: takes one of: unread, read, starred, important, muted, snoozed/],
      ['in:whatever', /in: takes one of: anywhere, snoozed, inbox, spam, trash/],
      ['has:nothing', /has: takes one of: attachment, userlabels, nouserlabels/],
      ['from:(a is:nope)', /"is:" at position 9 cannot be used/],
      ['is:(unread nope)', /is:nope at position 12 is not valid/],
    ];
    for (const [q, message] of cases) {
      const e = parseError(q);
      expect(e.code, q).toBe('invalid_input');
      expect(e.field, q).toBe('query');
      expect(e.message, q).toMatch(message);
    }
  });

  it('accepts the valid forms of the same operators', () => {
    for (const q of [
      'after:2024/2/29',
      'before:2024-02-29',
      'after:1700000000',
      'newer_than:7D',
      'older_than:12m',
      'larger:10M smaller:5k size:100',
      'category:Primary category:purchases',
      'in:anywhere in:drafts in:chats',
      'is:read is:muted is:snoozed',
      'has:userlabels has:nouserlabels has:drive',
      'older:2024/01/01 newer:2023-01-01',
    ]) {
      expect(() => parseQuery(q), q).not.toThrow();
    }
  });
});

describe('formatQuery', () => {
  const queries = [
    '',
    'dinner',
    '"dinner and movie"',
    'from:amy OR from:david subject:dinner',
    'a b OR c d',
    '{a b} OR c',
    '{(a b) {c d}} e',
    '-{a b} -(c d) --e',
    'subject:("quarterly report" -draft {q3 q4})',
    'label:Work/Projects is:unread -in:inbox category:updates',
    'priority:high from:OR to:-x',
    'a AND (b OR -"c d")',
    'after:2024/01/01 before:2024-02-01 larger:5M rfc822msgid:<abc@x>',
  ];

  it('round-trips every parsed query', () => {
    for (const q of queries) {
      const n = parseQuery(q);
      expect(parseQuery(formatQuery(n)), q).toEqual(n);
    }
  });

  it('writes a canonical text', () => {
    expect(formatQuery(parseQuery('{a b} c'))).toBe('a OR b c');
    expect(formatQuery(parseQuery('(a OR b) AND c'))).toBe('a OR b c');
    expect(formatQuery(parseQuery('{a b} OR c'))).toBe('{a b} OR c');
    expect(formatQuery(parseQuery('-{a b}'))).toBe('-{a b}');
    expect(formatQuery(parseQuery('{(a b) c}'))).toBe('(a b) OR c');
    expect(formatQuery(parseQuery('SUBJECT:(x "y z")'))).toBe('subject:x subject:"y z"');
  });

  it('round-trips hand-built trees', () => {
    const trees: QueryNode[] = [
      and(t('a'), or(t('b', 'from'), and(t('c'), t('d', 'subject', true))), not(or(t('e'), t('f')))),
      or(not(and(t('a'), t('b'))), or(t('c'), not(t('d'))), t('unread', 'is')),
      not(not(not(t('x y', null, true)))),
    ];
    for (const n of trees) expect(parseQuery(formatQuery(n))).toEqual(n);
  });

  it('refuses trees no text can express', () => {
    for (const n of [
      t('a b'),
      t('say "hi"', null, true),
      t('-x'),
      t('OR'),
      t('from:x'),
      t('x', 'nosuchop'),
      and(t('a'), and()),
      or(),
    ]) {
      expect(() => formatQuery(n), JSON.stringify(n)).toThrow(/cannot write this query/);
    }
  });
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const base: MessageFacts = {
  labelIds: new Set(['INBOX', 'UNREAD', 'CATEGORY_UPDATES', 'Label_7']),
  labelNames: new Map([
    ['Label_7', 'Work/Projects'],
    ['Label_8', 'Work'],
  ]),
  from: 'Ann Lee <ann@example.com>',
  to: 'Bob Stone <bob@corp.example>, carol@y.org',
  cc: 'dave@z.net',
  bcc: '',
  deliveredTo: 'bob@corp.example',
  subject: 'Quarterly report: Q3 numbers',
  bodyText:
    "Hi Bob,\nThe quarterly figures are attached. Let's review on Friday.\n" +
    'https://docs.google.com/spreadsheets/d/abc123/edit',
  attachmentNames: ['Q3-Report.PDF', 'notes.txt'],
  internalDate: Date.UTC(2024, 5, 15, 12),
  sizeEstimate: 2 * 1024 * 1024 + 1,
  rfc822MessageId: '<CAF123.xyz@mail.example.com>',
  listId: 'Finance team <finance.corp.example>',
};

function matches(q: string, overrides: Partial<MessageFacts> = {}, now = base.internalDate + HOUR): boolean {
  return evaluate(parseQuery(q), { ...base, ...overrides }, now);
}

function expectMatches(
  yes: string[],
  no: string[],
  overrides: Partial<MessageFacts> = {},
  now?: number,
): void {
  for (const q of yes) expect(matches(q, overrides, now), `${q} should match`).toBe(true);
  for (const q of no) expect(matches(q, overrides, now), `${q} should not match`).toBe(false);
}

describe('evaluate', () => {
  it('matches everything with an empty query', () => {
    expect(matches('')).toBe(true);
  });

  it('matches address operators as case-insensitive substrings of their own header', () => {
    expectMatches(
      [
        'from:ann',
        'from:"Ann Lee"',
        'from:ANN@EXAMPLE.COM',
        'to:carol',
        'to:stone',
        'cc:dave',
        'deliveredto:bob@corp',
      ],
      ['from:bob', 'to:dave', 'cc:carol', 'bcc:bob', 'deliveredto:carol'],
    );
    expectMatches(['bcc:secret@x.org'], [], { bcc: 'secret@x.org' });
  });

  it('matches subject words on word boundaries, phrases in order', () => {
    expectMatches(
      [
        'subject:quarterly',
        'subject:QUARTERLY',
        'subject:"report Q3"',
        'subject:(numbers quarterly)',
        'subject:{zzz q3}',
      ],
      ['subject:quarter', 'subject:"q3 report"', 'subject:figures', 'subject:(quarterly zzz)'],
    );
  });

  it('matches free text as whole words in subject, body, from, to, cc or attachment names', () => {
    expectMatches(
      [
        'figures',
        'FRIDAY',
        'ann',
        'carol',
        'dave',
        'notes',
        '"quarterly figures"',
        `"let's review"`,
        'quarterly -zebra',
      ],
      ['quart', 'zebra', '"figures quarterly"', '"numbers hi"', 'secret', 'ann zebra'],
    );
    expectMatches([], ['secret'], { bcc: 'secret@x.org' });
  });

  it('matches label: by exact normalised name, not parent or child labels', () => {
    expectMatches(
      ['label:work-projects', 'label:"work projects"', 'label:WORK/PROJECTS', 'label:work_projects'],
      ['label:work', 'label:projects', 'label:work-projects-x'],
    );
    expectMatches(['label:work'], ['label:work-projects'], { labelIds: new Set(['Label_8']) });
  });

  it('matches system names in label:, in: and is: against label ids', () => {
    expectMatches(
      [
        'label:inbox',
        'label:UNREAD',
        'in:inbox',
        'in:anywhere',
        'is:unread',
        '-is:read',
        '-is:muted',
        '-is:snoozed',
      ],
      [
        'label:starred',
        'label:spam',
        'in:spam',
        'in:trash',
        'in:sent',
        'is:read',
        'is:starred',
        'is:important',
      ],
    );
    expectMatches(
      [
        'in:sent',
        'in:drafts',
        'label:draft',
        'in:chats',
        'in:starred',
        'in:important',
        'is:read',
        'is:starred',
      ],
      ['in:inbox', 'is:unread', 'in:snoozed'],
      { labelIds: new Set(['SENT', 'DRAFT', 'CHAT', 'STARRED', 'IMPORTANT']) },
    );
  });

  it('matches category: against CATEGORY_* ids; label-less categories never match', () => {
    expectMatches(['category:updates', '-category:primary'], ['category:primary', 'category:purchases']);
    expectMatches(['category:primary', 'category:PERSONAL'], ['category:reservations', 'category:social'], {
      labelIds: new Set(['CATEGORY_PERSONAL']),
    });
  });

  it('matches has: operators', () => {
    expectMatches(
      ['has:attachment', 'has:userlabels', 'has:spreadsheet', 'has:drive'],
      ['has:nouserlabels', 'has:youtube', 'has:document', 'has:yellow-star'],
    );
    expectMatches(['has:nouserlabels'], ['has:attachment', 'has:userlabels', 'has:spreadsheet'], {
      labelIds: new Set(['INBOX', 'CATEGORY_UPDATES', 'UNREAD']),
      attachmentNames: [],
      bodyText: 'plain',
    });
  });

  it('matches filename: by extension, name or part of a name', () => {
    expectMatches(
      ['filename:pdf', 'filename:q3-report.pdf', 'filename:REPORT', 'filename:txt'],
      ['filename:doc', 'filename:xlsx'],
    );
  });

  it('matches newer_than:/older_than: relative to now, m = 30 d and y = 365 d', () => {
    const at = base.internalDate;
    expectMatches(['newer_than:2d'], ['older_than:2d'], {}, at + 2 * DAY);
    expectMatches(['older_than:2d'], ['newer_than:2d'], {}, at + 2 * DAY + 1);
    expectMatches(['newer_than:1m'], ['older_than:1m'], {}, at + 29 * DAY);
    expectMatches(['older_than:1m'], ['newer_than:1m'], {}, at + 31 * DAY);
    expectMatches(['newer_than:1y'], [], {}, at + 364 * DAY);
    expectMatches(['older_than:1y'], [], {}, at + 366 * DAY);
  });

  it('reads after:/before: dates as midnight in Los Angeles, after inclusive and before exclusive', () => {
    const laMidnightJune15 = Date.UTC(2024, 5, 15, 7); // PDT is UTC-7
    expect(laMidnight(2024, 6, 15)).toBe(laMidnightJune15);
    expectMatches(['before:2024/06/15', 'after:2024/06/14'], ['after:2024/06/15', 'after:2024-06-15'], {
      internalDate: laMidnightJune15 - 1,
    });
    expectMatches(['after:2024/06/15', 'after:2024-6-15', 'before:2024/06/16'], ['before:2024/06/15'], {
      internalDate: laMidnightJune15,
    });
    // 23:30 UTC on the 14th is still the 14th in LA, though already the 15th in UTC-later zones.
    expectMatches(['before:2024/06/15'], ['after:2024/06/15'], {
      internalDate: Date.UTC(2024, 5, 15, 6, 30),
    });
  });

  it('follows the Pacific DST switch rather than a fixed offset', () => {
    expect(laMidnight(2024, 1, 10)).toBe(Date.UTC(2024, 0, 10, 8));
    expect(laMidnight(2024, 3, 10)).toBe(Date.UTC(2024, 2, 10, 8)); // spring forward happens at 2 a.m.
    expect(laMidnight(2024, 3, 11)).toBe(Date.UTC(2024, 2, 11, 7));
    expect(laMidnight(2024, 11, 3)).toBe(Date.UTC(2024, 10, 3, 7)); // fall back happens at 2 a.m.
    expect(laMidnight(2024, 11, 4)).toBe(Date.UTC(2024, 10, 4, 8));
    expect(laMidnight(2024, 3, 11) - laMidnight(2024, 3, 10)).toBe(23 * HOUR);
    expectMatches(['after:2024/03/10 before:2024/03/11'], ['after:2024/03/11'], {
      internalDate: Date.UTC(2024, 2, 11, 7) - 1,
    });
  });

  it('reads an integer after:/before: as epoch seconds', () => {
    const s = base.internalDate / 1000;
    expectMatches([`after:${s}`, `before:${s + 1}`], [`after:${s + 1}`, `before:${s}`]);
  });

  it('treats older:/newer: as Gmail aliases of before:/after:', () => {
    expectMatches(['newer:2024/06/15', 'older:2024/06/16'], ['older:2024/06/15', 'newer:2024/06/16']);
  });

  it('compares sizes in bytes with K = 1024: larger >, smaller <, size >=', () => {
    const size = base.sizeEstimate;
    expectMatches(
      ['larger:2M', 'larger:2048k', 'smaller:3M', `size:${size}`, `smaller:${size + 1}`],
      ['larger:3M', `larger:${size}`, `smaller:${size}`, `size:${size + 1}`, 'smaller:2048K'],
    );
  });

  it('matches rfc822msgid: exactly, ignoring angle brackets', () => {
    expectMatches(
      ['rfc822msgid:CAF123.xyz@mail.example.com', 'rfc822msgid:<CAF123.xyz@mail.example.com>'],
      ['rfc822msgid:CAF123', 'rfc822msgid:CAF123.xyz@mail.example.co'],
    );
    expectMatches(['rfc822msgid:<a@b>'], [], { rfc822MessageId: 'a@b' });
  });

  it('matches list: as a substring of List-Id', () => {
    expectMatches(['list:finance.corp.example', 'list:FINANCE'], ['list:info@corp.example']);
    expectMatches([], ['list:finance'], { listId: '' });
  });

  it('combines operators with AND, OR and NOT', () => {
    expectMatches(
      [
        'from:ann -is:starred {label:nope subject:quarterly}',
        'is:starred OR has:attachment',
        '-(from:bob to:bob)',
      ],
      [
        'from:ann -{label:nope subject:quarterly}',
        'from:ann (is:starred OR larger:10M)',
        '-(from:ann to:bob)',
      ],
    );
  });

  it('rejects a hand-built term with a bad value', () => {
    expect(() => evaluate(t('yesterday', 'after'), base, 0)).toThrow(/after: takes a real date/);
  });
});

describe('substituteMe', () => {
  it('replaces an unquoted me in address operators only', () => {
    const q = parseQuery('from:me TO:Me cc:"me" subject:me me');
    const out = substituteMe(q, 'ann@example.com');
    expect(out).toEqual(
      and(
        t('ann@example.com', 'from'),
        t('ann@example.com', 'to'),
        t('me', 'cc', true),
        t('me', 'subject'),
        t('me'),
      ),
    );
    expect(q).toEqual(parseQuery('from:me TO:Me cc:"me" subject:me me'));
  });

  it('lets the sandbox resolve from:me before evaluating', () => {
    const q = parseQuery('from:me');
    expect(evaluate(q, base, 0)).toBe(false);
    expect(evaluate(substituteMe(q, 'ann@example.com'), base, 0)).toBe(true);
  });
});

describe('evaluateLabelState', () => {
  const state = (q: string, ...ids: string[]): Tri => evaluateLabelState(parseQuery(q), new Set(ids));

  it('decides label-state predicates and leaves the rest unknown', () => {
    expect(state('is:unread from:x')).toBe(false);
    expect(state('is:unread from:x', 'UNREAD')).toBeUndefined();
    expect(state('is:unread OR from:x')).toBeUndefined();
    expect(state('is:unread OR from:x', 'UNREAD')).toBe(true);
    expect(state('-in:inbox', 'INBOX')).toBe(false);
    expect(state('-in:inbox')).toBe(true);
    expect(state('category:updates is:unread', 'CATEGORY_UPDATES')).toBe(false);
    expect(state('category:updates is:unread', 'CATEGORY_UPDATES', 'UNREAD')).toBe(true);
    expect(state('-(is:unread from:x)')).toBe(true);
    expect(state('-(is:unread from:x)', 'UNREAD')).toBeUndefined();
    expect(state('is:read', 'UNREAD')).toBe(false);
    expect(state('label:INBOX in:spam', 'INBOX')).toBe(false);
    expect(state('is:starred is:important', 'STARRED', 'IMPORTANT')).toBe(true);
    expect(state('in:anywhere')).toBe(true);
    expect(state('')).toBe(true);
  });

  it('treats non-label terms and state the API has no label for as unknown', () => {
    for (const q of [
      'from:x',
      'label:work',
      'has:userlabels',
      'is:muted',
      'in:snoozed',
      'category:purchases',
      'newer_than:1d',
    ]) {
      expect(state(q, 'INBOX', 'UNREAD', 'Label_1'), q).toBeUndefined();
    }
  });

  it('follows the Kleene tables', () => {
    const T = t('inbox', 'in');
    const F = t('spam', 'in');
    const U = t('x', 'from');
    const value = { T, F, U };
    const truth: Record<string, Tri> = { T: true, F: false, U: undefined };
    const andTable: Record<string, Tri> = {
      TT: true,
      TF: false,
      TU: undefined,
      FT: false,
      FF: false,
      FU: false,
      UT: undefined,
      UF: false,
      UU: undefined,
    };
    const orTable: Record<string, Tri> = {
      TT: true,
      TF: true,
      TU: true,
      FT: true,
      FF: false,
      FU: undefined,
      UT: true,
      UF: undefined,
      UU: undefined,
    };
    const labels = new Set(['INBOX']);
    for (const [key, expected] of Object.entries(andTable)) {
      const [a, b] = [value[key[0] as 'T'], value[key[1] as 'T']];
      expect(evaluateLabelState(and(a, b), labels), `and ${key}`).toBe(expected);
      expect(evaluateLabelState(or(a, b), labels), `or ${key}`).toBe(orTable[key]);
    }
    for (const [key, node] of Object.entries(value)) {
      const expected = truth[key];
      expect(evaluateLabelState(not(node), labels), `not ${key}`).toBe(
        expected === undefined ? undefined : !expected,
      );
    }
  });
});

describe('labelStatePredicates', () => {
  const preds = (q: string): string[] => labelStatePredicates(parseQuery(q));

  it('lists label-state predicates as written, negated ones with "-"', () => {
    expect(preds('is:unread -in:inbox category:updates from:x')).toEqual([
      'is:unread',
      '-in:inbox',
      'category:updates',
    ]);
    expect(preds('IS:Unread label:INBOX')).toEqual(['is:unread', 'label:inbox']);
    expect(preds('is:read -is:starred')).toEqual(['is:read', '-is:starred']);
  });

  it('deduplicates in order of first appearance and follows nested negation', () => {
    expect(preds('is:unread in:inbox is:unread -is:unread')).toEqual(['is:unread', 'in:inbox', '-is:unread']);
    expect(preds('-(is:starred -label:inbox)')).toEqual(['-is:starred', 'label:inbox']);
    expect(preds('is:(unread starred) OR -category:{social forums}')).toEqual([
      'is:unread',
      'is:starred',
      '-category:social',
      '-category:forums',
    ]);
  });

  it('leaves out terms the labels cannot decide', () => {
    expect(preds('label:work is:muted in:anywhere category:purchases has:userlabels from:x')).toEqual([]);
    expect(preds('')).toEqual([]);
  });
});

describe('mentionsSpamOrTrash', () => {
  it('is true when the query asks for spam or trash', () => {
    for (const q of [
      'in:spam',
      'in:trash',
      'IN:Anywhere',
      'label:spam',
      'label:TRASH',
      'from:x OR in:trash',
      '-(-in:spam)',
      'is:unread (in:spam)',
    ]) {
      expect(mentionsSpamOrTrash(parseQuery(q)), q).toBe(true);
    }
  });

  it('is false otherwise, including for negated mentions and the word "spam"', () => {
    for (const q of [
      '',
      'is:unread',
      '-in:trash',
      '-in:spam from:x',
      'label:work',
      'spam',
      'subject:trash',
      'in:inbox',
    ]) {
      expect(mentionsSpamOrTrash(parseQuery(q)), q).toBe(false);
    }
  });
});
