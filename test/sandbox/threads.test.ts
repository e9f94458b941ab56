import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, startHarness } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h.sandbox.close();
});

const tid = (key: string): string => h.sandbox.threadIdForKey(ALICE, key);

async function threadIds(query: string): Promise<string[]> {
  const res = await h.gmail(`threads?${query}`);
  expect(res.status).toBe(200);
  return (res.json.threads ?? []).map((t: { id: string }) => t.id);
}

describe('threads', () => {
  beforeEach(async () => {
    h = await startHarness();
  });

  it('lists threads newest first by their latest match, with snippet and historyId', async () => {
    const { json } = await h.gmail('threads?maxResults=3');
    expect(json.threads.map((t: { id: string }) => t.id)).toEqual([
      tid('invoice'),
      tid('project'),
      tid('stale'),
    ]);
    expect(Object.keys(json.threads[0]).sort()).toEqual(['historyId', 'id', 'snippet']);
    expect(json.threads[1].snippet).toBe('Then we start Monday.');
    expect(json.nextPageToken).toEqual(expect.any(String));
    const next = await h.gmail(`threads?maxResults=3&pageToken=${json.nextPageToken}`);
    expect(next.json.threads[0].id).toBe(tid('welcome'));
  });

  it('takes the snippet from the newest matching message, not the newest message', async () => {
    const { json } = await h.gmail(`threads?q=${encodeURIComponent('subject:plan -"start Monday"')}`);
    expect(json.threads).toHaveLength(1);
    expect(json.threads[0]).toMatchObject({ id: tid('project'), snippet: 'Looks good.' });
  });

  it('returns an empty list without a threads key', async () => {
    const { json } = await h.gmail(`threads?q=${encodeURIComponent('subject:nothing-like-this')}`);
    expect(json).toEqual({ resultSizeEstimate: 0 });
  });

  it('gets a thread in full, metadata and minimal formats, oldest message first', async () => {
    const id = tid('project');
    const full = await h.gmail(`threads/${id}`);
    expect(full.json.id).toBe(id);
    expect(full.json.historyId).toMatch(/^\d+$/);
    expect(full.json.messages).toHaveLength(3);
    expect(full.json.messages.map((m: { threadId: string }) => m.threadId)).toEqual([id, id, id]);
    expect(full.json.messages[1].labelIds).toEqual(['SENT', 'Label_1']);
    expect(full.json.messages[0].payload.body.data).toEqual(expect.any(String));
    const meta = await h.gmail(`threads/${id}?format=metadata&metadataHeaders=Subject`);
    expect(meta.json.messages[2].payload.headers).toEqual([{ name: 'Subject', value: 'Re: Project plan' }]);
    const minimal = await h.gmail(`threads/${id}?format=minimal`);
    expect(minimal.json.messages[0].payload).toBeUndefined();
    expect((await h.gmail(`threads/${id}?format=raw`)).status).toBe(400);
    expect((await h.gmail('threads/0000000000000000')).status).toBe(404);
  });

  it('modifies, trashes and untrashes every message of a thread', async () => {
    const id = tid('project');
    const modified = await h.gmail(`threads/${id}/modify`, { body: { removeLabelIds: ['UNREAD', 'INBOX'] } });
    expect(modified.status).toBe(200);
    expect(modified.json.id).toBe(id);
    for (const m of modified.json.messages) expect(m.labelIds).not.toContain('UNREAD');
    expect(await threadIds(`q=${encodeURIComponent('in:inbox label:work')}`)).toEqual([]);

    const trashed = await h.gmail(`threads/${id}/trash`, { method: 'POST' });
    for (const m of trashed.json.messages) expect(m.labelIds).toContain('TRASH');
    expect(await threadIds('q=plan')).toEqual([]);
    expect(await threadIds(`q=${encodeURIComponent('in:trash plan')}`)).toEqual([id]);
    const back = await h.gmail(`threads/${id}/untrash`, { method: 'POST' });
    for (const m of back.json.messages) expect(m.labelIds).not.toContain('TRASH');
    // Nothing was removed besides what was asked: Label_1 is still on all three.
    for (const m of back.json.messages) expect(m.labelIds).toContain('Label_1');
  });
});

describe('stale thread index', () => {
  it('is off by default: is:unread threads are exactly the threads with an unread message', async () => {
    h = await startHarness();
    expect((await threadIds('q=is:unread')).sort()).toEqual([tid('project'), tid('welcome')].sort());
  });

  it('when on, threads.list answers read-state from stale thread state while messages.list stays exact', async () => {
    h = await startHarness({ staleThreadIndex: true });
    // Seeded stale: the weekly update has no unread message, yet threads.list says unread.
    expect(await threadIds('q=is:unread')).toContain(tid('stale'));
    expect(await threadIds('q=is:read')).not.toContain(tid('stale'));
    const messages = await h.gmail('messages?q=is:unread');
    expect(messages.json.messages.map((m: { threadId: string }) => m.threadId)).not.toContain(tid('stale'));

    // Marking a thread read through the API leaves the index believing it unread.
    await h.gmail(`threads/${tid('welcome')}/modify`, { body: { removeLabelIds: ['UNREAD'] } });
    expect(await threadIds('q=is:unread')).toContain(tid('welcome'));
    const exact = await h.gmail('messages?q=is:unread');
    expect(exact.json.messages.map((m: { threadId: string }) => m.threadId)).not.toContain(tid('welcome'));

    // The live thread says read, as every read other than threads.list does.
    const thread = await h.gmail(`threads/${tid('welcome')}?format=minimal`);
    expect(thread.json.messages[0].labelIds).not.toContain('UNREAD');

    h.sandbox.setStaleThreadIndex(false);
    expect(await threadIds('q=is:unread')).toEqual([tid('project')]);
  });
});
