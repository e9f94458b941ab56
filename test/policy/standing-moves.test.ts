import { describe, expect, it } from 'vitest';
import { filterSenders, keepsOutOfInbox } from '../../src/policy/standing-moves.js';

describe('filters as standing moves', () => {
  it('keeps mail out of the inbox: removes INBOX, or adds SPAM or TRASH', () => {
    expect(keepsOutOfInbox([], ['INBOX'])).toBe(true);
    expect(keepsOutOfInbox(['TRASH'], [])).toBe(true);
    expect(keepsOutOfInbox(['SPAM'], [])).toBe(true);
    expect(keepsOutOfInbox(['Label_1', 'STARRED'], ['UNREAD'])).toBe(false);
  });
  it('reads criteria.from as addresses and domains, or not at all', () => {
    expect(filterSenders('A@Example.org OR news.example')).toEqual(['a@example.org', 'news.example']);
    expect(filterSenders('{a@x.example b@y.example}')).toEqual(['a@x.example', 'b@y.example']);
    expect(filterSenders('a@x.example, b@y.example')).toEqual(['a@x.example', 'b@y.example']);
    expect(filterSenders(undefined)).toBeUndefined();
    expect(filterSenders('priya')).toBeUndefined();
    expect(filterSenders('-a@x.example')).toBeUndefined();
    expect(filterSenders('*@x.example')).toBeUndefined();
    expect(filterSenders('co.uk')).toBeUndefined();
  });
});
