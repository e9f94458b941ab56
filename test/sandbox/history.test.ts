import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, DAY, startHarness, textMail } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

const tid = (key: string): string => h.sandbox.threadIdForKey(ALICE, key);
const currentHistoryId = async (): Promise<string> => (await h.gmail('profile')).json.historyId;

describe('history.list', () => {
  it('records label changes and deliveries after the start id, and always carries historyId', async () => {
    const start = await currentHistoryId();
    const empty = await h.gmail(`history?startHistoryId=${start}`);
    expect(empty.json).toEqual({ historyId: start });

    const welcome = tid('welcome');
    await h.gmail(`messages/${welcome}/modify`, {
      body: { addLabelIds: ['STARRED'], removeLabelIds: ['UNREAD'] },
    });
    const delivered = h.sandbox.deliver(
      ALICE,
      textMail({ subject: 'Fresh news', messageId: 'fresh@example.com', body: 'Hot off the press' }),
      ['INBOX', 'UNREAD'],
    );

    const { json } = await h.gmail(`history?startHistoryId=${start}`);
    expect(BigInt(json.historyId)).toBeGreaterThan(BigInt(start));
    expect(json.historyId).toBe(h.sandbox.mailbox(ALICE).historyId);
    expect(json.history).toHaveLength(2);
    const [change, added] = json.history;
    expect(change).toEqual({
      id: expect.stringMatching(/^\d+$/),
      messages: [{ id: welcome, threadId: welcome }],
      labelsAdded: [
        {
          message: { id: welcome, threadId: welcome, labelIds: ['INBOX', 'CATEGORY_PERSONAL', 'STARRED'] },
          labelIds: ['STARRED'],
        },
      ],
      labelsRemoved: [
        {
          message: { id: welcome, threadId: welcome, labelIds: ['INBOX', 'CATEGORY_PERSONAL', 'STARRED'] },
          labelIds: ['UNREAD'],
        },
      ],
    });
    expect(added.messagesAdded).toEqual([
      { message: { id: delivered.id, threadId: delivered.threadId, labelIds: ['INBOX', 'UNREAD'] } },
    ]);
    expect(BigInt(added.id)).toBeGreaterThan(BigInt(change.id));

    // The message's own historyId moved with it.
    const msg = await h.gmail(`messages/${welcome}?format=minimal`);
    expect(msg.json.historyId).toBe(change.id);
  });

  it('filters by historyTypes and labelId and pages with pageToken', async () => {
    const start = await currentHistoryId();
    const ids = h.sandbox
      .mailbox(ALICE)
      .messages.filter((m) => m.labelIds.includes('Label_3'))
      .map((m) => m.id);
    await h.gmail('messages/batchModify', { body: { ids, addLabelIds: ['STARRED'] } });
    await h.gmail(`messages/${tid('welcome')}/modify`, { body: { removeLabelIds: ['UNREAD'] } });

    const added = await h.gmail(`history?startHistoryId=${start}&historyTypes=labelAdded`);
    expect(added.json.history).toHaveLength(ids.length);
    for (const rec of added.json.history) {
      expect(rec.labelsAdded).toHaveLength(1);
      expect(rec.labelsRemoved).toBeUndefined();
    }
    const removed = await h.gmail(`history?startHistoryId=${start}&historyTypes=labelRemoved&labelId=UNREAD`);
    expect(removed.json.history).toHaveLength(1);

    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await h.gmail(
        `history?startHistoryId=${start}&maxResults=3${token ? `&pageToken=${token}` : ''}`,
      );
      seen.push(...page.json.history.map((r: { id: string }) => r.id));
      token = page.json.nextPageToken;
    } while (token);
    expect(seen).toHaveLength(ids.length + 1);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers 404 once the start id is older than the retained window', async () => {
    const start = await currentHistoryId();
    await h.gmail(`messages/${tid('welcome')}/modify`, { body: { addLabelIds: ['STARRED'] } });
    h.clock.advance(6 * DAY);
    expect((await h.gmail(`history?startHistoryId=${start}`)).status).toBe(200);
    const afterFirst = await currentHistoryId();
    await h.gmail(`messages/${tid('welcome')}/modify`, { body: { addLabelIds: ['IMPORTANT'] } });
    h.clock.advance(2 * DAY);
    const gone = await h.gmail(`history?startHistoryId=${start}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error.errors[0].reason).toBe('notFound');
    // The later change is still inside the window.
    const recent = await h.gmail(`history?startHistoryId=${afterFirst}`);
    expect(recent.status).toBe(200);
    expect(recent.json.history).toHaveLength(1);
  });

  it('answers 404 for a start id from before the seeded mailbox and 400 for a missing or bad one', async () => {
    expect((await h.gmail('history?startHistoryId=1')).status).toBe(404);
    const missing = await h.gmail('history');
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toContain('startHistoryId');
    expect((await h.gmail('history?startHistoryId=abc')).status).toBe(400);
    expect(
      (await h.gmail(`history?startHistoryId=${await currentHistoryId()}&historyTypes=everything`)).status,
    ).toBe(400);
  });
});

describe('deliver', () => {
  it('threads a reply by In-Reply-To and starts a new thread otherwise', async () => {
    const reply = h.sandbox.deliver(
      ALICE,
      textMail({
        subject: 'Re: Project plan',
        messageId: 'plan-4@example.com',
        inReplyTo: 'plan-3@example.com',
      }),
      ['INBOX', 'UNREAD'],
    );
    expect(reply.threadId).toBe(tid('project'));
    const fresh = h.sandbox.deliver(ALICE, textMail({ subject: 'New', messageId: 'new@example.com' }), [
      'INBOX',
    ]);
    expect(fresh.threadId).toBe(fresh.id);
    const thread = await h.gmail(`threads/${tid('project')}?format=minimal`);
    expect(thread.json.messages.map((m: { id: string }) => m.id).at(-1)).toBe(reply.id);
    const message = await h.gmail(`messages/${fresh.id}?format=minimal`);
    expect(Number(message.json.internalDate)).toBe(h.clock.now());
  });
});

describe('settings.filters', () => {
  it('creates, lists, gets and deletes filters in Gmail shape', async () => {
    expect((await h.gmail('settings/filters')).json).toEqual({});
    const created = await h.gmail('settings/filters', {
      body: {
        criteria: { from: 'list@bulk.example' },
        action: { addLabelIds: ['Label_3'], removeLabelIds: ['INBOX'] },
      },
    });
    expect(created.status).toBe(200);
    const filter = created.json;
    expect(filter).toEqual({
      id: expect.any(String),
      criteria: { from: 'list@bulk.example' },
      action: { addLabelIds: ['Label_3'], removeLabelIds: ['INBOX'] },
    });
    expect((await h.gmail('settings/filters')).json).toEqual({ filter: [filter] });
    expect((await h.gmail(`settings/filters/${filter.id}`)).json).toEqual(filter);

    const dup = await h.gmail('settings/filters', {
      body: { criteria: filter.criteria, action: filter.action },
    });
    expect(dup.status).toBe(400);

    // Filters act on mail that arrives after them.
    const arrived = h.sandbox.deliver(
      ALICE,
      textMail({ from: 'list@bulk.example', subject: 'Bulk 8', messageId: 'bulk-8@example.com' }),
      ['INBOX', 'UNREAD'],
    );
    const labels = h.sandbox.mailbox(ALICE).messages.find((m) => m.id === arrived.id)?.labelIds;
    expect(labels).toEqual(['UNREAD', 'Label_3']);

    expect((await h.gmail(`settings/filters/${filter.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await h.gmail(`settings/filters/${filter.id}`)).status).toBe(404);
  });

  it('refuses filters without criteria, without actions, with forwarding or unknown labels', async () => {
    const bodies = [
      { criteria: {}, action: { addLabelIds: ['STARRED'] } },
      { criteria: { from: 'a@b.example' }, action: {} },
      { criteria: { from: 'a@b.example' }, action: { forward: 'elsewhere@evil.example' } },
      { criteria: { from: 'a@b.example' }, action: { addLabelIds: ['Label_404'] } },
    ];
    for (const body of bodies) expect((await h.gmail('settings/filters', { body })).status).toBe(400);
  });
});
