import { describe, expect, it } from 'vitest';
import { MailError } from '../../../src/mail/errors.js';
import type { MimeNode } from '../../../src/mail/types.js';
import type { Tier } from '../../../src/policy/tiers.js';
import { GmailMailbox } from '../../../src/providers/gmail/mailbox.js';
import { CREDENTIALS, TOKEN_URL, fakeTime, json, recordingTransport, rejection } from './helpers.js';
import type { Handler } from './helpers.js';

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

// windows-1252 curly quotes (0x93/0x94) must arrive as bytes, undecoded; 0xfb 0xff 0xbf encodes
// to "-_-_" in base64url, so a decoder on the wrong alphabet would corrupt it.
const PLAIN = new Uint8Array(Buffer.from('Hello \x93there\x94\r\n', 'latin1'));
const HTML = bytes(0x3c, 0x70, 0x3e, 0xfb, 0xff, 0xbf, 0x3c, 0x2f, 0x70, 0x3e);

const h = (name: string, value: string) => ({ name, value });

const THREAD = {
  id: '18c0ffee00000001',
  historyId: '4242',
  messages: [
    {
      id: '18c0ffee00000002',
      threadId: '18c0ffee00000001',
      labelIds: ['INBOX', 'UNREAD'],
      snippet: 'Hello there',
      sizeEstimate: 20480,
      internalDate: '1764500000000',
      payload: {
        partId: '',
        mimeType: 'multipart/mixed',
        filename: '',
        headers: [h('From', 'Alice <alice@example.com>'), h('Subject', '=?UTF-8?Q?Invoice?=')],
        body: { size: 0 },
        parts: [
          {
            partId: '0',
            mimeType: 'multipart/alternative',
            filename: '',
            headers: [h('Content-Type', 'multipart/alternative; boundary="b2"')],
            body: { size: 0 },
            parts: [
              {
                partId: '0.0',
                mimeType: 'text/plain',
                filename: '',
                headers: [h('Content-Type', 'text/plain; charset=windows-1252')],
                body: { size: PLAIN.length, data: b64url(PLAIN) },
              },
              {
                partId: '0.1',
                mimeType: 'TEXT/HTML',
                filename: '',
                headers: [h('Content-Type', 'text/html; charset=utf-8')],
                body: { size: HTML.length, data: b64url(HTML) },
              },
            ],
          },
          {
            partId: '1',
            mimeType: 'application/pdf',
            filename: 'invoice.pdf',
            headers: [h('Content-Disposition', 'attachment; filename="invoice.pdf"')],
            body: { size: 12345, attachmentId: 'ANGjdJ_x-1' },
          },
        ],
      },
    },
  ],
};

function mailbox(handler: Handler, tiers: Tier[] = ['read']) {
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
  });
  return { box, rec };
}

describe('GmailMailbox.getThread', () => {
  it('turns Gmail JSON into a MailThread with exact MIME bytes and attachment ids', async () => {
    const { box, rec } = mailbox(() => json(200, THREAD));
    const thread = await box.getThread('18c0ffee00000001', { format: 'full' });
    const leaf = (
      partId: string,
      mimeType: string,
      headers: MimeNode['headers'],
      body: Uint8Array,
    ): MimeNode => ({
      partId,
      mimeType,
      headers,
      filename: '',
      size: body.length,
      body,
      children: [],
    });
    const root: MimeNode = {
      partId: '',
      mimeType: 'multipart/mixed',
      headers: THREAD.messages[0]?.payload.headers ?? [],
      filename: '',
      size: 0,
      children: [
        {
          partId: '0',
          mimeType: 'multipart/alternative',
          headers: [h('Content-Type', 'multipart/alternative; boundary="b2"')],
          filename: '',
          size: 0,
          children: [
            leaf('0.0', 'text/plain', [h('Content-Type', 'text/plain; charset=windows-1252')], PLAIN),
            leaf('0.1', 'text/html', [h('Content-Type', 'text/html; charset=utf-8')], HTML),
          ],
        },
        {
          partId: '1',
          mimeType: 'application/pdf',
          headers: [h('Content-Disposition', 'attachment; filename="invoice.pdf"')],
          filename: 'invoice.pdf',
          size: 12345,
          attachmentId: 'ANGjdJ_x-1',
          children: [],
        },
      ],
    };
    expect(thread).toEqual({
      id: '18c0ffee00000001',
      historyId: '4242',
      messages: [
        {
          id: '18c0ffee00000002',
          threadId: '18c0ffee00000001',
          labelIds: ['INBOX', 'UNREAD'],
          internalDate: 1764500000000,
          snippet: 'Hello there',
          sizeEstimate: 20480,
          headers: root.headers,
          root,
        },
      ],
    });
    const body = thread.messages[0]?.root.children[0]?.children[0]?.body;
    expect(body).toBeInstanceOf(Uint8Array);
    expect(Array.from(body ?? [])).toEqual(Array.from(PLAIN));
    expect(rec.gmail()[0]?.url).toBe(
      'https://gmail.googleapis.com/gmail/v1/users/me/threads/18c0ffee00000001?format=full',
    );
  });

  it('asks for metadata headers by name', async () => {
    const { box, rec } = mailbox(() => json(200, { id: 'abc', messages: [] }));
    await box.getThread('abc', { format: 'metadata', metadataHeaders: ['From', 'List-Unsubscribe'] });
    expect(rec.gmail()[0]?.url).toBe(
      'https://gmail.googleapis.com/gmail/v1/users/me/threads/abc?format=metadata&metadataHeaders=From&metadataHeaders=List-Unsubscribe',
    );
  });

  it('refuses a malformed thread id as invalid_input, sending nothing', async () => {
    const { box, rec } = mailbox(() => json(200, {}));
    const e = await rejection(box.getThread('../send', { format: 'full' }));
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('threadId');
    expect(rec.sent).toHaveLength(0);
  });
});

describe('GmailMailbox.history', () => {
  it('an expired start id (404) is invalid_input naming historyId, never an empty page', async () => {
    const { box } = mailbox(() =>
      json(404, { error: { code: 404, message: 'Requested entity was not found.' } }),
    );
    const e = await rejection(box.history('1000', {}));
    expect(e).toBeInstanceOf(MailError);
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('historyId');
    expect(e.message).toMatch(/historyId 1000 is older than Gmail keeps \(about a week\); call get_profile/);
  });

  it('maps the four change kinds and asks for exactly them', async () => {
    const m = (id: string, labelIds: string[]) => ({ id, threadId: `t${id}`, labelIds });
    const { box, rec } = mailbox(() =>
      json(200, {
        historyId: '2000',
        nextPageToken: 'p2',
        history: [
          { id: '1001', messagesAdded: [{ message: m('1', ['INBOX', 'UNREAD']) }] },
          { id: '1002', labelsRemoved: [{ message: m('1', ['INBOX']), labelIds: ['UNREAD'] }] },
          { id: '1003', labelsAdded: [{ message: m('1', ['INBOX', 'STARRED']), labelIds: ['STARRED'] }] },
          { id: '1004', messagesDeleted: [{ message: m('2', []) }] },
        ],
      }),
    );
    expect(await box.history('1000', { pageToken: 'p1' })).toEqual({
      added: [{ messageId: '1', threadId: 't1', labelIds: ['INBOX', 'UNREAD'] }],
      deleted: [{ messageId: '2', threadId: 't2' }],
      labelsAdded: [{ messageId: '1', threadId: 't1', labelIds: ['STARRED'] }],
      labelsRemoved: [{ messageId: '1', threadId: 't1', labelIds: ['UNREAD'] }],
      historyId: '2000',
      nextPageToken: 'p2',
    });
    const url = new URL(rec.gmail()[0]?.url ?? '');
    expect(url.searchParams.getAll('historyTypes')).toEqual([
      'messageAdded',
      'messageDeleted',
      'labelAdded',
      'labelRemoved',
    ]);
    expect(url.searchParams.get('startHistoryId')).toBe('1000');
    expect(url.searchParams.get('pageToken')).toBe('p1');
  });
});

describe('GmailMailbox: search, labels, attachments, cost', () => {
  it('searches threads with Gmail parameters and reports units', async () => {
    const { box, rec } = mailbox(() =>
      json(200, {
        threads: [{ id: 'a', snippet: 's' }, { id: 'b' }],
        nextPageToken: 'n',
        resultSizeEstimate: 7,
      }),
    );
    const page = await box.searchThreads('is:unread from:alice', { maxResults: 50, includeSpamTrash: false });
    expect(page).toEqual({ items: [{ id: 'a' }, { id: 'b' }], nextPageToken: 'n', resultSizeEstimate: 7 });
    const url = new URL(rec.gmail()[0]?.url ?? '');
    expect(url.pathname).toBe('/gmail/v1/users/me/threads');
    expect(url.searchParams.get('q')).toBe('is:unread from:alice');
    expect(url.searchParams.get('maxResults')).toBe('50');
    expect(url.searchParams.get('includeSpamTrash')).toBe('false');
    expect(box.usage()).toEqual({ requests: 2, quotaUnits: 10 });
  });

  it('searchMessages returns refs; a bad maxResults is invalid_input before any request', async () => {
    const { box, rec } = mailbox(() => json(200, { messages: [{ id: 'm1', threadId: 't1' }] }));
    expect((await box.searchMessages('x', { maxResults: 1 })).items).toEqual([{ id: 'm1', threadId: 't1' }]);
    const e = await rejection(box.searchMessages('x', { maxResults: 501 }));
    expect(e.field).toBe('maxResults');
    expect(rec.gmail()).toHaveLength(1);
  });

  it('listLabels leaves counts out (labels.list has none); getLabel carries them', async () => {
    const { box } = mailbox((req) =>
      req.url.endsWith('/labels')
        ? json(200, {
            labels: [
              { id: 'INBOX', name: 'INBOX', type: 'system' },
              { id: 'Label_1', name: 'Receipts', type: 'user' },
            ],
          })
        : json(200, {
            id: 'Label_1',
            name: 'Receipts',
            type: 'user',
            messagesTotal: 4,
            messagesUnread: 1,
            threadsTotal: 3,
            threadsUnread: 1,
          }),
    );
    expect(await box.listLabels()).toEqual([
      { id: 'INBOX', name: 'INBOX', type: 'system' },
      { id: 'Label_1', name: 'Receipts', type: 'user' },
    ]);
    expect(await box.getLabel('Label_1')).toMatchObject({ messagesTotal: 4, threadsUnread: 1 });
  });

  it('getAttachment returns the decoded bytes', async () => {
    const data = bytes(0x25, 0x50, 0x44, 0x46, 0xfb, 0xff, 0xbf, 0x00);
    const { box, rec } = mailbox(() => json(200, { size: data.length, data: b64url(data) }));
    expect(Array.from(await box.getAttachment('18c0ffee00000002', 'ANGjdJ_x-1'))).toEqual(Array.from(data));
    expect(rec.gmail()[0]?.url).toBe(
      'https://gmail.googleapis.com/gmail/v1/users/me/messages/18c0ffee00000002/attachments/ANGjdJ_x-1',
    );
  });

  it('states its provider and capabilities, and stops after close()', async () => {
    const { box } = mailbox(() => json(200, {}));
    expect(box.provider).toBe('gmail');
    expect(box.capabilities).toEqual({ history: true, filters: true, organisation: 'labels' });
    await box.close();
    await expect(box.getProfile()).rejects.toThrow(/closed/);
  });
});
