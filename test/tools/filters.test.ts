import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import {
  criteriaOverlap,
  criteriaToQuery,
  discardsFutureMatches,
  hasPositiveCriterion,
  resolveFilterLabels,
  sameCriteria,
  validateCriteria,
} from '../../src/mail/filter-criteria.js';
import type { LabelRef } from '../../src/mail/filter-criteria.js';
import { parseQuery } from '../../src/mail/query/index.js';
import { Fence } from '../../src/mcp/untrusted.js';
import { createFilter, deleteFilter } from '../../src/tools/filters-write.js';
import { listFilters, previewFilter, view } from '../../src/tools/filters.js';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof MailError && e.code === 'invalid_input') return e.field;
    throw e;
  }
  throw new Error('expected invalid_input');
}

describe('criteria → query', () => {
  it('groups each criterion so multi-word and OR values keep Gmail meaning', () => {
    const q = criteriaToQuery({
      from: 'a@x.example OR b@y.example',
      to: 'me@example.com',
      subject: 'weekly report',
      query: 'has:attachment OR larger:1M',
      negatedQuery: 'label:done',
      hasAttachment: true,
      size: 2048,
      sizeComparison: 'smaller',
      excludeChats: true,
    });
    expect(q).toBe(
      'from:(a@x.example OR b@y.example) to:(me@example.com) subject:(weekly report) (has:attachment OR larger:1M) -(label:done) has:attachment smaller:2048',
    );
    expect(() => parseQuery(q)).not.toThrow();
  });

  it('validates each criterion as search syntax and names the field', () => {
    expect(fieldOf(() => validateCriteria({ subject: 'unclosed "quote' }))).toBe('criteria.subject');
    expect(fieldOf(() => validateCriteria({ from: 'x from:y' }))).toBe('criteria.from');
    expect(fieldOf(() => validateCriteria({ excludeChats: true }))).toBe('criteria');
    expect(fieldOf(() => validateCriteria({ size: 10 }))).toBe('criteria.sizeComparison');
    expect(fieldOf(() => validateCriteria({ from: 'a', sizeComparison: 'larger' }))).toBe('criteria.size');
    expect(() => validateCriteria({ negatedQuery: 'is:starred' })).not.toThrow();
  });

  it('a positive criterion is something the mail has; negatedQuery alone is not', () => {
    expect(hasPositiveCriterion({ negatedQuery: 'x' })).toBe(false);
    expect(hasPositiveCriterion({ excludeChats: true, negatedQuery: 'x' })).toBe(false);
    expect(hasPositiveCriterion({ from: '  ' })).toBe(false);
    expect(hasPositiveCriterion({ hasAttachment: true })).toBe(true);
    expect(hasPositiveCriterion({ size: 1, sizeComparison: 'larger' })).toBe(true);
  });
});

describe('comparing filters', () => {
  it('identical criteria ignore case, blanks and spacing', () => {
    expect(sameCriteria({ from: 'News@X.example ', subject: '' }, { from: 'news@x.example' })).toBe(true);
    expect(sameCriteria({ from: 'a@x' }, { from: 'a@x', hasAttachment: true })).toBe(false);
  });

  it('overlap names the field and the shared values', () => {
    expect(
      criteriaOverlap({ from: 'a@x.example OR b@y.example' }, { from: '{b@y.example c@z.example}' }),
    ).toEqual([{ field: 'from', shared: ['b@y.example'] }]);
    expect(criteriaOverlap({ subject: 'Invoice due' }, { subject: 'invoice', from: 'a' })).toEqual([
      { field: 'subject', shared: ['invoice'] },
    ]);
    expect(criteriaOverlap({ from: 'a@x' }, { to: 'a@x' })).toEqual([]);
  });

  it('discarding: trash, or out of the inbox with nothing that keeps it visible', () => {
    expect(discardsFutureMatches({ addLabelIds: ['TRASH'], removeLabelIds: [] })).toBe('trash');
    expect(discardsFutureMatches({ addLabelIds: [], removeLabelIds: ['INBOX'] })).toBe(
      'skips_inbox_without_label',
    );
    expect(
      discardsFutureMatches({ addLabelIds: ['CATEGORY_SOCIAL'], removeLabelIds: ['INBOX', 'UNREAD'] }),
    ).toBe('skips_inbox_without_label');
    expect(discardsFutureMatches({ addLabelIds: ['Label_3'], removeLabelIds: ['INBOX'] })).toBeUndefined();
    expect(discardsFutureMatches({ addLabelIds: ['STARRED'], removeLabelIds: ['INBOX'] })).toBeUndefined();
    expect(discardsFutureMatches({ addLabelIds: [], removeLabelIds: ['UNREAD'] })).toBeUndefined();
  });
});

describe('label actions by name', () => {
  const labels: LabelRef[] = [
    { id: 'INBOX', name: 'INBOX', type: 'system' },
    { id: 'UNREAD', name: 'UNREAD', type: 'system' },
    { id: 'TRASH', name: 'TRASH', type: 'system' },
    { id: 'SENT', name: 'SENT', type: 'system' },
    { id: 'DRAFT', name: 'DRAFT', type: 'system' },
    { id: 'CATEGORY_PROMOTIONS', name: 'CATEGORY_PROMOTIONS', type: 'system' },
    { id: 'Label_7', name: 'Receipts', type: 'user' },
  ];

  it('resolves ids and case-insensitive names, and collects new names to create', () => {
    const r = resolveFilterLabels(
      labels,
      ['receipts', 'Shopping/2026', 'shopping/2026'],
      ['inbox', 'UNREAD'],
    );
    expect(r.add.map((l) => l.id)).toEqual(['Label_7']);
    expect(r.create).toEqual(['Shopping/2026']);
    expect(r.remove.map((l) => l.id)).toEqual(['INBOX', 'UNREAD']);
  });

  it('refuses labels a filter cannot set, unknown removals, and add+remove of one label', () => {
    expect(fieldOf(() => resolveFilterLabels(labels, ['SENT'], []))).toBe('addLabels.0');
    expect(fieldOf(() => resolveFilterLabels(labels, ['INBOX'], []))).toBe('addLabels.0');
    expect(fieldOf(() => resolveFilterLabels(labels, [], ['DRAFT']))).toBe('removeLabels.0');
    expect(fieldOf(() => resolveFilterLabels(labels, [], ['Nope']))).toBe('removeLabels.0');
    expect(fieldOf(() => resolveFilterLabels(labels, ['Receipts'], ['Label_7']))).toBe('removeLabels.0');
    expect(fieldOf(() => resolveFilterLabels(labels, [], []))).toBe('addLabels');
  });
});

describe('no forwarding in the tool schemas', () => {
  const base = { criteria: { from: 'news@x.example' }, addLabels: ['Receipts'] };

  it('create_filter refuses a forward field anywhere', () => {
    expect(createFilter.input.safeParse(base).success).toBe(true);
    expect(createFilter.input.safeParse({ ...base, forward: 'evil@z.example' }).success).toBe(false);
    expect(
      createFilter.input.safeParse({ ...base, criteria: { from: 'x', forward: 'evil@z.example' } }).success,
    ).toBe(false);
    expect(createFilter.input.safeParse({ ...base, action: { forward: 'evil@z.example' } }).success).toBe(
      false,
    );
    expect(previewFilter.input.safeParse({ ...base, forward: 'evil@z.example' }).success).toBe(false);
  });

  it('no advertised input schema of the filter tools mentions forwarding', () => {
    for (const tool of [listFilters, previewFilter, createFilter, deleteFilter]) {
      const schema = JSON.stringify(tool.input['~standard'].jsonSchema.input({ target: 'draft-2020-12' }));
      expect(schema, tool.name).not.toMatch(/forward/i);
    }
  });
});

describe('list_filters view', () => {
  it('shows an existing forwarding address, flagged, and label names (user names fenced)', () => {
    const labels = new Map([
      ['Label_2', { id: 'Label_2', name: 'Boss', type: 'user' as const }],
      ['INBOX', { id: 'INBOX', name: 'INBOX', type: 'system' as const }],
    ]);
    const v = view(
      {
        id: 'f1',
        criteria: { from: 'boss@x.example' },
        action: { addLabelIds: ['Label_2'], removeLabelIds: ['INBOX'], forward: 'me@elsewhere.example' },
      },
      labels,
      new Fence('abc123'),
    );
    expect(v).toEqual({
      id: 'f1',
      criteria: { from: 'boss@x.example' },
      query: 'from:(boss@x.example)',
      addLabels: [{ id: 'Label_2', name: '\u27E6mail abc123\u27E7Boss\u27E6/mail abc123\u27E7' }],
      removeLabels: [{ id: 'INBOX', name: 'INBOX' }],
      forward: 'me@elsewhere.example',
      flags: ['forwards_mail'],
    });
  });
});
