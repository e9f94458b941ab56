import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, startHarness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

describe('users.getProfile', () => {
  it('reports the address, totals and the current historyId as a string', async () => {
    const { status, json } = await h.gmail('profile');
    expect(status).toBe(200);
    const view = h.sandbox.mailbox(ALICE);
    expect(json).toEqual({
      emailAddress: ALICE,
      messagesTotal: view.messages.length,
      threadsTotal: view.threads.length,
      historyId: view.historyId,
    });
    expect(json.historyId).toMatch(/^\d+$/);
  });
});

describe('labels', () => {
  it('lists system labels (CATEGORY_* included) and user labels in Gmail shape', async () => {
    const { json } = await h.gmail('labels');
    const byId = new Map<string, Record<string, unknown>>(json.labels.map((l: { id: string }) => [l.id, l]));
    for (const id of [
      'INBOX',
      'UNREAD',
      'SPAM',
      'TRASH',
      'STARRED',
      'IMPORTANT',
      'SENT',
      'DRAFT',
      'CATEGORY_UPDATES',
    ]) {
      expect(byId.get(id)).toMatchObject({ id, name: id, type: 'system' });
    }
    expect(byId.get('Label_1')).toEqual({
      id: 'Label_1',
      name: 'Work',
      type: 'user',
      messageListVisibility: 'show',
      labelListVisibility: 'labelShow',
    });
    // Counts are a labels.get detail, not part of the list.
    expect(byId.get('INBOX')).not.toHaveProperty('messagesTotal');
  });

  it('counts messages and threads on labels.get', async () => {
    const work = await h.gmail('labels/Label_1');
    expect(work.json).toMatchObject({
      messagesTotal: 3,
      messagesUnread: 1,
      threadsTotal: 1,
      threadsUnread: 1,
    });
    const spam = await h.gmail('labels/SPAM');
    expect(spam.json).toMatchObject({ id: 'SPAM', messagesTotal: 1, threadsTotal: 1 });
  });

  it('creates, patches, updates and deletes a user label', async () => {
    const created = await h.gmail('labels', {
      body: { name: 'Travel', labelListVisibility: 'labelShowIfUnread' },
    });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      name: 'Travel',
      type: 'user',
      labelListVisibility: 'labelShowIfUnread',
    });
    expect(created.json.id).toBe('Label_4');
    const id: string = created.json.id;

    const patched = await h.gmail(`labels/${id}`, {
      method: 'PATCH',
      body: { color: { backgroundColor: '#16a766', textColor: '#ffffff' } },
    });
    expect(patched.json).toMatchObject({
      name: 'Travel',
      color: { backgroundColor: '#16a766', textColor: '#ffffff' },
    });

    const updated = await h.gmail(`labels/${id}`, { method: 'PUT', body: { name: 'Trips' } });
    expect(updated.json).toMatchObject({ id, name: 'Trips' });

    const del = await h.gmail(`labels/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(del.json).toBeUndefined();
    expect((await h.gmail(`labels/${id}`)).status).toBe(404);
  });

  it('answers 409 for a name that exists (case-insensitively, system names included)', async () => {
    for (const name of ['Work', 'work', 'INBOX']) {
      const res = await h.gmail('labels', { body: { name } });
      expect(res.status).toBe(409);
      expect(res.json.error.message).toBe('Label name exists or conflicts');
    }
  });

  it('refuses to delete or rename a system label and 404s an unknown id', async () => {
    expect((await h.gmail('labels/INBOX', { method: 'DELETE' })).status).toBe(400);
    expect((await h.gmail('labels/INBOX', { method: 'PATCH', body: { name: 'Box' } })).status).toBe(400);
    const missing = await h.gmail('labels/Label_99');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      error: {
        code: 404,
        message: 'Requested entity was not found.',
        errors: [{ message: 'Requested entity was not found.', domain: 'global', reason: 'notFound' }],
        status: 'NOT_FOUND',
      },
    });
  });

  it('takes a deleted label off its messages and records that in history', async () => {
    const before = (await h.gmail('profile')).json.historyId as string;
    expect((await h.gmail('labels/Label_2', { method: 'DELETE' })).status).toBe(204);
    const stillLabelled = h.sandbox.mailbox(ALICE).messages.filter((m) => m.labelIds.includes('Label_2'));
    expect(stillLabelled).toEqual([]);
    const history = await h.gmail(`history?startHistoryId=${before}&historyTypes=labelRemoved`);
    expect(history.json.history).toHaveLength(1);
    expect(history.json.history[0].labelsRemoved[0].labelIds).toEqual(['Label_2']);
  });

  it('rejects a malformed body and unknown query parameters naming them', async () => {
    expect((await h.gmail('labels', { body: { name: '' } })).status).toBe(400);
    const vis = await h.gmail('labels', { body: { name: 'X', messageListVisibility: 'sometimes' } });
    expect(vis.status).toBe(400);
    expect(vis.json.error.message).toContain('messageListVisibility');
    const param = await h.gmail('labels?colour=red');
    expect(param.status).toBe(400);
    expect(param.json.error.message).toContain('colour');
  });
});
