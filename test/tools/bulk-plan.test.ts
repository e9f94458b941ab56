import { describe, expect, it } from 'vitest';
import {
  buildUndoPlan,
  changeKey,
  checkUndoPlan,
  chunk,
  classifyApplied,
  contradicted,
  queryLabelIds,
  restrictPlan,
} from '../../src/mail/bulk-plan.js';
import type { UndoPlan } from '../../src/mail/bulk-plan.js';
import { MailError } from '../../src/mail/errors.js';
import { parseQuery } from '../../src/mail/query/index.js';

const members = (m: Record<string, string[]>) => new Map(Object.entries(m).map(([k, v]) => [k, new Set(v)]));

function fieldOf(fn: () => void): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof MailError && e.code === 'invalid_input') return e.field;
    throw e;
  }
  throw new Error('expected invalid_input');
}

describe('chunk', () => {
  it('splits 2,500 ids into 1,000 + 1,000 + 500', () => {
    const ids = Array.from({ length: 2500 }, (_, i) => String(i));
    expect(chunk(ids, 1000).map((c) => c.length)).toEqual([1000, 1000, 500]);
    expect(chunk([], 1000)).toEqual([]);
  });
});

describe('queryLabelIds and contradicted', () => {
  it('maps read-state, location and category predicates to label ids, negated or not', () => {
    expect(queryLabelIds(parseQuery('category:updates is:unread -in:inbox from:x'))).toEqual([
      'CATEGORY_UPDATES',
      'UNREAD',
      'INBOX',
    ]);
  });

  it('sets aside a message only when its live labels decide the query against it', () => {
    const node = parseQuery('is:unread');
    expect(contradicted(['a', 'b'], node, members({ UNREAD: ['a'] }))).toEqual(['b']);
  });

  it('a negated predicate is contradicted by the messages that DO carry the label', () => {
    const node = parseQuery('-in:inbox from:news');
    expect(contradicted(['a', 'b', 'c'], node, members({ INBOX: ['b'] }))).toEqual(['b']);
  });

  it('an OR with a predicate the labels cannot decide never sets a message aside', () => {
    const node = parseQuery('is:unread OR from:boss');
    expect(contradicted(['a', 'b'], node, members({ UNREAD: ['a'] }))).toEqual([]);
    const both = parseQuery('is:unread OR is:starred');
    expect(contradicted(['a', 'b', 'c'], both, members({ UNREAD: ['a'], STARRED: ['c'] }))).toEqual(['b']);
  });
});

describe('undo plans', () => {
  const change = { add: ['Label_2'], remove: ['INBOX'] };
  const plan = buildUndoPlan({
    account: 'default',
    createdAt: '2026-11-30T00:00:00.000Z',
    query: 'from:news',
    change,
    messageIds: ['m1', 'm2', 'm3', 'm4'],
    // m1: INBOX, no Label_2 (ordinary); m2: already has both; m3: already archived + labelled
    // (target state); m4: archived, no label.
    before: members({ INBOX: ['m1', 'm2'], Label_2: ['m2', 'm3'] }),
    labelNames: new Map([
      ['Label_2', 'Digests'],
      ['INBOX', 'INBOX'],
    ]),
  });

  it('gives each message exactly its inverse, groups equal inverses, leaves target-state messages out', () => {
    expect(plan.groups).toEqual([
      { add: ['INBOX'], remove: ['Label_2'], messageIds: ['m1'] },
      { add: ['INBOX'], remove: [], messageIds: ['m2'] },
      { add: [], remove: ['Label_2'], messageIds: ['m4'] },
    ]);
    expect(plan.labels).toEqual({ Label_2: 'Digests', INBOX: 'INBOX' });
  });

  it('keeps only messages that were sent', () => {
    expect(restrictPlan(plan, new Set(['m1', 'm4'])).groups.map((g) => g.messageIds)).toEqual([
      ['m1'],
      ['m4'],
    ]);
  });

  it('checks account, label ids, overlaps and duplicates', () => {
    const labels = new Set(['INBOX', 'Label_2']);
    expect(() => checkUndoPlan(plan, 'default', labels)).not.toThrow();
    expect(fieldOf(() => checkUndoPlan(plan, 'work', labels))).toBe('plan.account');
    expect(fieldOf(() => checkUndoPlan(plan, 'default', new Set(['INBOX'])))).toBe('plan.groups');
    const dup: UndoPlan = {
      ...plan,
      groups: [...plan.groups, { add: ['STARRED'], remove: [], messageIds: ['m1'] }],
    };
    expect(fieldOf(() => checkUndoPlan(dup, 'default', new Set([...labels, 'STARRED'])))).toBe(
      'plan.groups.3.messageIds',
    );
    const both: UndoPlan = { ...plan, groups: [{ add: ['INBOX'], remove: ['INBOX'], messageIds: ['m9'] }] };
    expect(fieldOf(() => checkUndoPlan(both, 'default', labels))).toBe('plan.groups.0');
  });
});

describe('classifyApplied and changeKey', () => {
  it('applied means every added label present and every removed label absent', () => {
    const after = members({ Label_2: ['a', 'b'], INBOX: ['b'] });
    expect(classifyApplied(['a', 'b', 'c'], { add: ['Label_2'], remove: ['INBOX'] }, after)).toEqual({
      applied: ['a'],
      notApplied: ['b', 'c'],
    });
  });

  it('ignores order, duplicates and surrounding spaces, not case', () => {
    expect(changeKey([' b', 'a', 'a'], [])).toBe(changeKey(['a', 'b'], []));
    expect(changeKey(['A'], [])).not.toBe(changeKey(['a'], []));
    expect(changeKey(['a'], [])).not.toBe(changeKey([], ['a']));
  });
});
