import { describe, expect, it } from 'vitest';
import { isSnoozeFolder, placeOf, threadPlace } from '../../src/mail/place.js';

describe('where a message is', () => {
  it('Trash and Spam win over every other label, INBOX included', () => {
    expect(placeOf({ labelIds: ['INBOX', 'TRASH', 'UNREAD'] })).toBe('trash');
    expect(placeOf({ labelIds: ['INBOX', 'SPAM'] })).toBe('spam');
    expect(placeOf({ labelIds: ['SPAM', 'TRASH'] })).toBe('trash');
  });
  it('Sent-only and Drafts-only mail is neither inbox nor archive; a reply filed in INBOX is inbox', () => {
    expect(placeOf({ labelIds: ['SENT'] })).toBe('sent');
    expect(placeOf({ labelIds: ['DRAFT'] })).toBe('drafts');
    expect(placeOf({ labelIds: ['SENT', 'INBOX'] })).toBe('inbox');
    expect(placeOf({ labelIds: ['Label_1', 'UNREAD'] })).toBe('archive');
  });
  it('an IMAP user folder is a place of its own; a snooze folder is Archive', () => {
    expect(placeOf({ labelIds: ['Folders/Work'], folders: ['Folders/Work'] })).toBe('folder');
    expect(placeOf({ labelIds: ['Labels/Receipts'] })).toBe('archive');
    const snoozed = 'Folders/MCP/Snoozed/2026-12-24';
    expect(isSnoozeFolder(snoozed)).toBe(true);
    expect(isSnoozeFolder('Folders/MCP/Snoozed')).toBe(false);
    expect(placeOf({ labelIds: [snoozed], folders: [snoozed] })).toBe('archive');
  });
  it('a thread is in the inbox when any message is, else where the other side is, else mixed', () => {
    expect(threadPlace([{ labelIds: ['SENT'] }, { labelIds: ['INBOX'] }])).toBe('inbox');
    expect(threadPlace([{ labelIds: ['SENT'] }, { labelIds: [] }])).toBe('archive');
    expect(threadPlace([{ labelIds: ['SENT'] }])).toBe('sent');
    expect(threadPlace([{ labelIds: ['INBOX', 'TRASH'] }, { labelIds: ['TRASH'] }])).toBe('trash');
    expect(threadPlace([{ labelIds: ['SPAM'] }, { labelIds: [] }])).toBe('mixed');
  });
});
