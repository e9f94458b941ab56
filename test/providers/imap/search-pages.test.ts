import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../../src/mail/query/index.js';
import { flagsOnly, listsInboxOnly } from '../../../src/providers/imap/search-pages.js';

/*
 * The two decisions behind a cheap first inbox listing (src/providers/imap/search-pages.ts):
 * which queries may leave folders other than INBOX unchecked, and which criteria the flags a
 * whole-folder FETCH just read can answer without a SEARCH.
 */

describe('listsInboxOnly', () => {
  it('is true only when in:inbox is required and no other place is named', () => {
    for (const q of [
      'in:inbox',
      'in:inbox is:unread',
      'is:starred in:inbox from:a@example.org',
      'in:INBOX newer_than:2d',
    ])
      expect(listsInboxOnly(parseQuery(q)), q).toBe(true);
    for (const q of [
      '',
      'is:unread',
      '-in:inbox',
      'in:inbox OR in:sent',
      'in:inbox label:Receipts',
      'in:inbox -label:Receipts',
      'in:inbox category:updates',
      'in:inbox in:sent',
      'in:sent',
    ])
      expect(listsInboxOnly(parseQuery(q)), q).toBe(false);
  });
});

describe('flagsOnly', () => {
  const flags = new Map<number, ReadonlySet<string>>([
    [1, new Set(['\\Seen'])],
    [2, new Set()],
    [3, new Set(['\\Seen', '\\Flagged'])],
    [4, new Set(['\\Flagged'])],
  ]);
  it('answers system-flag tests from the flags read', () => {
    expect(flagsOnly({ seen: false }, flags)?.([1, 2, 3, 4])).toEqual([2, 4]);
    expect(flagsOnly({ seen: true, flagged: true }, flags)?.([1, 2, 3, 4])).toEqual([3]);
    expect(flagsOnly({ flagged: false }, flags)?.([1, 2, 3, 4])).toEqual([1, 2]);
  });
  it('leaves a UID whose flags were not read out, and declines what flags cannot decide', () => {
    expect(flagsOnly({ seen: false }, flags)?.([2, 9])).toEqual([2]);
    expect(flagsOnly({ seen: false }, undefined)).toBeUndefined();
    expect(flagsOnly({}, flags)).toBeUndefined();
    expect(flagsOnly({ seen: false, from: 'a@example.org' }, flags)).toBeUndefined();
    expect(flagsOnly({ keyword: '$Label1' } as never, flags)).toBeUndefined();
  });
});
