import { describe, expect, it } from 'vitest';
import type { Tier } from '../../../src/policy/tiers.js';
import { GmailMailbox } from '../../../src/providers/gmail/mailbox.js';
import {
  CREDENTIALS,
  TOKEN_URL,
  codeOf,
  fakeTime,
  googleError,
  json,
  recordingTransport,
} from './helpers.js';
import type { Handler, Sent } from './helpers.js';

const BASE = 'https://gmail.googleapis.com/gmail/v1/users/me';

function mailbox(handler: Handler, tiers: Tier[] = ['read', 'manage']) {
  const rec = recordingTransport((req, n) =>
    req.url === TOKEN_URL ? json(200, { access_token: 't' }) : handler(req, n),
  );
  const time = fakeTime();
  const box = new GmailMailbox({
    account: 'default',
    credentials: CREDENTIALS,
    tiers: new Set(tiers),
    transport: rec.transport,
    clock: time.clock,
    sleep: time.sleep,
    random: () => 0.5,
  });
  return { box, rec };
}

const body = (s: Sent): unknown => JSON.parse(s.body ?? 'null');

describe('GmailMailbox label writes', () => {
  it('createLabel posts the name, colour and visibilities and returns the label', async () => {
    const { box, rec } = mailbox(() =>
      json(200, {
        id: 'Label_7',
        name: 'Receipts',
        type: 'user',
        color: { backgroundColor: '#4a86e8', textColor: '#ffffff' },
      }),
    );
    const label = await box.createLabel({
      name: 'Receipts',
      color: { backgroundColor: '#4a86e8', textColor: '#ffffff' },
    });
    expect(label).toEqual({
      id: 'Label_7',
      name: 'Receipts',
      type: 'user',
      color: { backgroundColor: '#4a86e8', textColor: '#ffffff' },
    });
    const [sent] = rec.gmail();
    expect(sent?.method).toBe('POST');
    expect(sent?.url).toBe(`${BASE}/labels`);
    expect(body(sent as Sent)).toEqual({
      name: 'Receipts',
      color: { backgroundColor: '#4a86e8', textColor: '#ffffff' },
      labelListVisibility: 'labelShow',
      messageListVisibility: 'show',
    });
    expect(box.usage()).toEqual({ requests: 2, quotaUnits: 5 });
  });

  it('updateLabel PATCHes only what changes; deleteLabel DELETEs', async () => {
    const { box, rec } = mailbox((req) =>
      req.method === 'DELETE' ? json(204, null) : json(200, { id: 'Label_7', name: 'Bills', type: 'user' }),
    );
    expect(await box.updateLabel('Label_7', { name: 'Bills' })).toMatchObject({
      id: 'Label_7',
      name: 'Bills',
    });
    await box.deleteLabel('Label_7');
    const [patch, del] = rec.gmail();
    expect(patch?.method).toBe('PATCH');
    expect(patch?.url).toBe(`${BASE}/labels/Label_7`);
    expect(body(patch as Sent)).toEqual({ name: 'Bills' });
    expect(del?.method).toBe('DELETE');
    expect(del?.url).toBe(`${BASE}/labels/Label_7`);
  });

  it('refuses an empty patch, an empty name and a malformed id without a request', async () => {
    const { box, rec } = mailbox(() => json(200, {}));
    expect(await codeOf(box.updateLabel('Label_7', {}))).toBe('invalid_input');
    expect(await codeOf(box.createLabel({ name: '  ' }))).toBe('invalid_input');
    expect(await codeOf(box.deleteLabel('../messages/x'))).toBe('invalid_input');
    expect(rec.sent).toHaveLength(0);
  });

  it('a clash on create (HTTP 409) is invalid_input, not an outage', async () => {
    const { box } = mailbox(() => googleError(409, 'aborted', 'Label name exists or conflicts'));
    expect(await codeOf(box.createLabel({ name: 'Work' }))).toBe('invalid_input');
  });
});

describe('GmailMailbox message and thread writes', () => {
  it('modifyThread returns each message with its live labels', async () => {
    const { box, rec } = mailbox(() =>
      json(200, {
        id: 't1',
        messages: [
          { id: 'm1', threadId: 't1', labelIds: ['Label_1'] },
          { id: 'm2', threadId: 't1', labelIds: ['Label_1', 'UNREAD'] },
        ],
      }),
    );
    const out = await box.modifyThread('t1', { add: ['Label_1'], remove: ['INBOX'] });
    expect(out).toEqual([
      { id: 'm1', threadId: 't1', labelIds: ['Label_1'] },
      { id: 'm2', threadId: 't1', labelIds: ['Label_1', 'UNREAD'] },
    ]);
    const [sent] = rec.gmail();
    expect(sent?.url).toBe(`${BASE}/threads/t1/modify`);
    expect(body(sent as Sent)).toEqual({ addLabelIds: ['Label_1'], removeLabelIds: ['INBOX'] });
    expect(box.usage().quotaUnits).toBe(10);
  });

  it('modifyMessages sends one batchModify (50 units) and accepts the empty 204', async () => {
    const { box, rec } = mailbox(() => new Response(null, { status: 204 }));
    await box.modifyMessages(['a1', 'a2'], { add: [], remove: ['UNREAD'] });
    const [sent] = rec.gmail();
    expect(sent?.url).toBe(`${BASE}/messages/batchModify`);
    expect(body(sent as Sent)).toEqual({ ids: ['a1', 'a2'], addLabelIds: [], removeLabelIds: ['UNREAD'] });
    expect(box.usage().quotaUnits).toBe(50);
  });

  it('modifyMessages refuses 0 or 1,001 ids, an empty change and a label both added and removed', async () => {
    const { box, rec } = mailbox(() => new Response(null, { status: 204 }));
    const many = Array.from({ length: 1001 }, (_, i) => `m${i}`);
    expect(await codeOf(box.modifyMessages([], { add: ['STARRED'], remove: [] }))).toBe('invalid_input');
    expect(await codeOf(box.modifyMessages(many, { add: ['STARRED'], remove: [] }))).toBe('invalid_input');
    expect(await codeOf(box.modifyMessages(['m1'], { add: [], remove: [] }))).toBe('invalid_input');
    expect(await codeOf(box.modifyMessages(['m1'], { add: ['X_1'], remove: ['X_1'] }))).toBe('invalid_input');
    expect(await codeOf(box.modifyMessages(['m1/../x'], { add: ['STARRED'], remove: [] }))).toBe(
      'invalid_input',
    );
    expect(rec.sent).toHaveLength(0);
  });

  it('trash and untrash use the thread endpoints; an unknown thread is not_found', async () => {
    const { box, rec } = mailbox((req) =>
      req.url.includes('/threads/gone/')
        ? googleError(404, 'notFound', 'Requested entity was not found.')
        : json(200, { id: 't1' }),
    );
    await box.trashThread('t1');
    await box.untrashThread('t1');
    expect(await codeOf(box.trashThread('gone'))).toBe('not_found');
    expect(rec.gmail().map((s) => `${s.method} ${s.url.slice(BASE.length)}`)).toEqual([
      'POST /threads/t1/trash',
      'POST /threads/t1/untrash',
      'POST /threads/gone/trash',
    ]);
  });

  it('getMessageLabels reads format=minimal', async () => {
    const { box, rec } = mailbox(() => json(200, { id: 'm1', threadId: 't1', labelIds: ['INBOX'] }));
    expect(await box.getMessageLabels('m1')).toEqual({ id: 'm1', threadId: 't1', labelIds: ['INBOX'] });
    expect(rec.gmail()[0]?.url).toBe(`${BASE}/messages/m1?format=minimal`);
  });

  it('searchMessages passes labelIds as repeated parameters', async () => {
    const { box, rec } = mailbox(() => json(200, { messages: [{ id: 'm1', threadId: 't1' }] }));
    await box.searchMessages('is:unread', { maxResults: 500, labelIds: ['UNREAD', 'INBOX'] });
    const url = new URL(rec.gmail()[0]?.url ?? '');
    expect(url.searchParams.getAll('labelIds')).toEqual(['UNREAD', 'INBOX']);
    expect(url.searchParams.get('q')).toBe('is:unread');
  });

  it('writes are refused by the egress checkpoint without the manage tier', async () => {
    const { box, rec } = mailbox(() => json(200, {}), ['read']);
    expect(await codeOf(box.modifyMessages(['m1'], { add: ['STARRED'], remove: [] }))).toBe(
      'forbidden_operation',
    );
    expect(await codeOf(box.trashThread('t1'))).toBe('forbidden_operation');
    expect(rec.sent).toHaveLength(0);
  });
});
