import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { FOLDERS, appendMessage, withMailClient } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';

/*
 * Where a message is, decided once (src/mail/place.ts), asked by every route: each cell of the
 * docs/reference.md's place table (place → where the agent may take it under inboxOnlyMoves) on the Gmail
 * sandbox and both Dovecot profiles, through thread tools, message tools, modify_labels (with
 * the label spelled as an id, in lower case and as a folder name), bulk_modify, undo, snooze
 * and restore. A refused call is checked in the mailbox and by counting the provider's writes.
 */

const k = DEMO_FACTS.keys;
const POLICY = { default: { protectCorrespondents: false, dailyMoveCap: 0 } };

interface Msg {
  id: string;
  labels: string[];
}

describe.each(['gmail', 'full', 'bridge'] as BackendKind[])('where mail is, on %s', (kind) => {
  let b: Backend;
  let sentOnly: string;
  let sentOnlyMessage: string;
  let inFolder: string | undefined;
  const folderPath = kind === 'bridge' ? 'Folders/Clients' : 'Clients';
  const folderName = 'Clients';

  const raw = (id: string, from: string, to: string) =>
    [
      `From: ${from}`,
      `To: ${to}`,
      `Subject: place ${id}`,
      `Message-ID: <${id}@places.example>`,
      'Date: Mon, 30 Nov 2026 08:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Where am I?',
      '',
    ].join('\r\n');
  const imapTid = (id: string) => `t${Buffer.from(`${id}@places.example`).toString('base64url')}`;

  beforeAll(async () => {
    b = await startBackend(kind, { policy: POLICY, recordWrites: true });
    const sent = raw(`sent-only-${kind}`, `Jordan Hale <${DEMO_ADDRESS}>`, 'someone@elsewhere.example');
    if (b.gmail) {
      sentOnly = b.gmail.sandbox.deliver(DEMO_ADDRESS, sent, ['SENT']).threadId;
    } else {
      const server = (b.imap as NonNullable<Backend['imap']>).server;
      await appendMessage(server, FOLDERS[kind as 'full'].sent, sent, { flags: ['\\Seen'] });
      sentOnly = imapTid(`sent-only-${kind}`);
      await withMailClient(server, async (c) => {
        await c.mailboxCreate(folderPath);
      });
      await appendMessage(
        server,
        folderPath,
        raw(`folder-${kind}`, 'Kim <kim@stranger.example>', DEMO_ADDRESS),
      );
      inFolder = imapTid(`folder-${kind}`);
    }
    sentOnlyMessage = (await messages(sentOnly))[0]?.id as string;
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  const messages = async (threadId: string): Promise<Msg[]> => {
    const t = await b.call('get_thread', { threadId, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    return t.structured['messages'] as Msg[];
  };
  const labelsOf = async (threadId: string) => (await messages(threadId)).flatMap((m) => m.labels);
  /** Runs a call that must be refused and checks that the provider received no write. */
  const refusedWithoutWrites = async (name: string, args: Record<string, unknown>, code: string) => {
    const before = b.writes().length;
    const r = await b.call(name, args);
    expect(r.isError, r.text).toBe(true);
    expect(r.error?.code, r.text).toBe(code);
    expect(b.writes().slice(before)).toEqual([]);
    return r;
  };

  it('trash, then untrash and restore bring the thread back to the inbox (Trash wins over INBOX)', async () => {
    const id = b.tid(k.oneClickNewsletters[0] as string);
    for (const back of ['untrash', 'restore'] as const) {
      const before = b.writes().length;
      const t = await b.call('trash', { threadId: id });
      // The count of writes sees an allowed one, so a refused call's zero means something.
      expect(b.writes().length).toBeGreaterThan(before);
      expect(t.isError, t.text).toBe(false);
      expect(await labelsOf(id)).toContain('TRASH');
      const r = await b.call(back, { threadId: id });
      expect(r.isError, r.text).toBe(false);
      const labels = await labelsOf(id);
      expect(labels).toContain('INBOX');
      expect(labels).not.toContain('TRASH');
    }
  });

  it('Trash: back to the inbox only; no move to Spam, no archive', async () => {
    const id = b.tid(k.trashed[0] as string);
    await refusedWithoutWrites('move_to_spam', { threadId: id }, 'forbidden_operation');
    await refusedWithoutWrites('archive', { threadId: id }, 'forbidden_operation');
    await refusedWithoutWrites('snooze', { threadId: id, until: 'tomorrow' }, 'forbidden_operation');
    const r = await b.call('modify_labels', { threadId: id, add: ['inbox'], remove: ['Trash'] });
    expect(r.isError, r.text).toBe(false);
    expect(await labelsOf(id)).toContain('INBOX');
    expect(await labelsOf(id)).not.toContain('TRASH');
  });

  it('Spam: back to the inbox only (restore by messageIds); no trash', async () => {
    const id = b.tid(k.realSpam[0] as string);
    await refusedWithoutWrites('trash', { threadId: id }, 'forbidden_operation');
    const ids = (await messages(id)).map((m) => m.id);
    await refusedWithoutWrites('trash', { messageIds: ids }, 'forbidden_operation');
    const r = await b.call('restore', { messageIds: ids });
    expect(r.isError, r.text).toBe(false);
    const labels = await labelsOf(id);
    expect(labels).toContain('INBOX');
    expect(labels).not.toContain('SPAM');
  });

  it('taking mail out of Spam or Trash without saying where is refused as input, on every spelling', async () => {
    const spam = b.tid(k.spamNotSpam[0] as string);
    const trash = b.tid(k.trashed[1] as string);
    for (const remove of [['SPAM'], ['Spam'], ['spam']])
      await refusedWithoutWrites('modify_labels', { threadId: spam, remove }, 'invalid_input');
    await refusedWithoutWrites('modify_labels', { threadId: trash, remove: ['TRASH'] }, 'invalid_input');
    await refusedWithoutWrites('bulk_modify', { query: 'in:trash', remove: ['Trash'] }, 'invalid_input');
    expect(await labelsOf(spam)).toContain('SPAM');
    expect(await labelsOf(trash)).toContain('TRASH');
  });

  it('Archive: back to the inbox; not to Spam or Trash', async () => {
    const id = b.tid(k.oneClickNewsletters[1] as string);
    const a = await b.call('archive', { threadId: id });
    expect(a.isError, a.text).toBe(false);
    await refusedWithoutWrites('trash', { threadId: id }, 'forbidden_operation');
    await refusedWithoutWrites('move_to_spam', { threadId: id }, 'forbidden_operation');
    await refusedWithoutWrites('modify_labels', { threadId: id, add: ['SPAM'] }, 'forbidden_operation');
    const r = await b.call('modify_labels', { threadId: id, add: ['Inbox'] });
    expect(r.isError, r.text).toBe(false);
    expect(await labelsOf(id)).toContain('INBOX');
  });

  it('Sent only: neither inbox nor archive — every route refuses it and writes nothing', async () => {
    for (const add of [['INBOX'], ['inbox'], ['Inbox']])
      await refusedWithoutWrites('modify_labels', { threadId: sentOnly, add }, 'forbidden_operation');
    const r = await refusedWithoutWrites('restore', { threadId: sentOnly }, 'forbidden_operation');
    expect(r.text).toMatch(/Sent \(only\)/);
    await refusedWithoutWrites('restore', { messageIds: [sentOnlyMessage] }, 'forbidden_operation');
    await refusedWithoutWrites('unsnooze', { threadId: sentOnly }, 'forbidden_operation');
    await refusedWithoutWrites('archive', { threadId: sentOnly }, 'forbidden_operation');
    await refusedWithoutWrites('snooze', { threadId: sentOnly, until: 'tomorrow' }, 'forbidden_operation');
    await refusedWithoutWrites(
      'bulk_modify',
      { query: `in:sent subject:"place sent-only-${kind}"`, add: ['INBOX'] },
      'forbidden_operation',
    );
    // An undo plan is the model's input like any other.
    await refusedWithoutWrites(
      'undo_bulk_modify',
      {
        plan: {
          kind: 'mailwarden.undo',
          version: 1,
          account: 'default',
          createdAt: '2026-11-30T08:00:00.000Z',
          query: 'in:sent',
          groups: [{ add: ['INBOX'], remove: [], messageIds: [sentOnlyMessage] }],
          labels: { INBOX: 'INBOX' },
        },
      },
      'forbidden_operation',
    );
    expect(await labelsOf(sentOnly)).not.toContain('INBOX');
  });

  it('an IMAP user folder is a place of its own: no restore from it, no move into it by label', async () => {
    if (inFolder === undefined) {
      // Gmail has no folders: a user label sits beside the message's place, so adding it is a label.
      const id = b.tid(k.oneClickNewsletters[2] as string);
      const r = await b.call('modify_labels', { threadId: id, add: ['Receipts'] });
      expect(r.isError, r.text).toBe(false);
      expect(await labelsOf(id)).toContain('INBOX');
      return;
    }
    const r = await refusedWithoutWrites('restore', { threadId: inFolder }, 'forbidden_operation');
    expect(r.text).toMatch(/a folder of its own/);
    const ids = (await messages(inFolder)).map((m) => m.id);
    await refusedWithoutWrites('restore', { messageIds: ids }, 'forbidden_operation');
    await refusedWithoutWrites('archive', { threadId: inFolder }, 'forbidden_operation');
    const inbox = b.tid(k.oneClickNewsletters[2] as string);
    for (const add of [[folderName], [folderPath]])
      await refusedWithoutWrites('modify_labels', { threadId: inbox, add }, 'forbidden_operation');
    expect(await labelsOf(inFolder)).not.toContain('INBOX');
    expect(await labelsOf(inbox)).toContain('INBOX');
  });

  it('decide first: a refused snooze or label change creates no label, folder or keyword', async () => {
    const before = b.writes().length;
    await refusedWithoutWrites('snooze', { threadId: sentOnly, until: '2026-12-24' }, 'forbidden_operation');
    await refusedWithoutWrites(
      'modify_labels',
      { threadId: b.tid(k.trashed[2] as string), add: ['SPAM', 'Brand new label'] },
      'forbidden_operation',
    );
    expect(b.writes().slice(before)).toEqual([]);
    const labels = await b.call('list_labels', {});
    const names = (labels.structured['labels'] as Array<{ name: string }>).map((l) => l.name);
    expect(names.some((n) => /2026-12-24/.test(n))).toBe(false);
    expect(names).not.toContain('Brand new label');
  });
});
