import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, DAY, PDF_BYTES, startHarness, textMail } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

const idOf = (key: string): string => {
  const threadId = h.sandbox.threadIdForKey(ALICE, key);
  const thread = h.sandbox.mailbox(ALICE).threads.find((t) => t.id === threadId);
  return thread?.messageIds[0] ?? '';
};
const labelsOf = (id: string): string[] =>
  h.sandbox.mailbox(ALICE).messages.find((m) => m.id === id)?.labelIds ?? [];

async function listIds(query: string): Promise<string[]> {
  const res = await h.gmail(`messages?${query}`);
  expect(res.status).toBe(200);
  return (res.json.messages ?? []).map((m: { id: string }) => m.id);
}

describe('messages.list', () => {
  it('returns {id, threadId} newest first with resultSizeEstimate', async () => {
    const { json } = await h.gmail('messages');
    const view = h.sandbox.mailbox(ALICE).messages;
    const visible = view.filter((m) => !m.labelIds.includes('SPAM') && !m.labelIds.includes('TRASH'));
    expect(json.resultSizeEstimate).toBe(visible.length);
    expect(json.messages).toHaveLength(visible.length);
    expect(Object.keys(json.messages[0]).sort()).toEqual(['id', 'threadId']);
    const dates = json.messages.map(
      (m: { id: string }) => view.find((v) => v.id === m.id)?.internalDate ?? 0,
    );
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
  });

  it('filters by query and leaves spam and trash out unless asked', async () => {
    expect(await listIds('q=prize')).toEqual([]);
    expect(await listIds('q=prize&includeSpamTrash=true')).toEqual([idOf('trashed'), idOf('spam')]);
    expect(await listIds(`q=${encodeURIComponent('in:spam prize')}`)).toEqual([idOf('spam')]);
    expect(await listIds(`q=${encodeURIComponent('in:trash')}`)).toEqual([idOf('trashed')]);
    expect(await listIds(`q=${encodeURIComponent('from:billing@shop.example')}`)).toEqual([idOf('invoice')]);
    expect(await listIds(`q=${encodeURIComponent('is:unread')}`)).toHaveLength(2);
    expect(await listIds(`q=${encodeURIComponent('label:work to:me')}`)).toHaveLength(2);
    expect(await listIds(`q=${encodeURIComponent('has:attachment filename:pdf')}`)).toEqual([
      idOf('invoice'),
    ]);
  });

  it('evaluates relative dates against the sandbox clock', async () => {
    const q = `q=${encodeURIComponent('newer_than:1d')}`;
    expect(await listIds(q)).toEqual([]);
    const fresh = h.sandbox.deliver(ALICE, textMail({ subject: 'Now', messageId: 'now@example.com' }), [
      'INBOX',
    ]);
    expect(await listIds(q)).toEqual([fresh.id]);
    h.clock.advance(2 * DAY);
    expect(await listIds(q)).toEqual([]);
  });

  it('requires every labelIds value on a message', async () => {
    expect(await listIds('labelIds=INBOX&labelIds=UNREAD')).toHaveLength(2);
    expect(await listIds('labelIds=Label_1&labelIds=UNREAD&labelIds=INBOX')).toHaveLength(1);
    expect(await listIds('labelIds=SPAM')).toEqual([idOf('spam')]);
  });

  it('pages with pageToken without repeating or skipping', async () => {
    const all = await listIds('maxResults=500');
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const res = await h.gmail(`messages?maxResults=4${token ? `&pageToken=${token}` : ''}`);
      seen.push(...res.json.messages.map((m: { id: string }) => m.id));
      expect(res.json.resultSizeEstimate).toBe(all.length);
      token = res.json.nextPageToken;
    } while (token);
    expect(seen).toEqual(all);
  });

  it('answers 400 for an invalid query, a bad maxResults and an unknown parameter', async () => {
    const bad = await h.gmail(`messages?q=${encodeURIComponent('subject:"unclosed')}`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ message: 'Invalid query', status: 'INVALID_ARGUMENT' });
    expect(bad.json.error.errors[0].reason).toBe('invalidArgument');
    expect((await h.gmail('messages?maxResults=lots')).json.error.message).toContain('maxResults');
    expect((await h.gmail('messages?labelId=INBOX')).json.error.message).toContain('labelId');
    expect((await h.gmail('messages?pageToken=zzz')).status).toBe(400);
  });
});

describe('messages.get', () => {
  it('serves format=full with decoded-body data and the attachment by id', async () => {
    const id = idOf('invoice');
    const { json } = await h.gmail(`messages/${id}`);
    expect(json).toMatchObject({ id, threadId: id, labelIds: ['INBOX', 'Label_2'] });
    expect(json.internalDate).toMatch(/^\d+$/);
    expect(json.historyId).toMatch(/^\d+$/);
    expect(json.sizeEstimate).toBeGreaterThan(256);
    // Gmail HTML-escapes snippets.
    expect(json.snippet).toBe('Your invoice is attached. Total €42 &amp; it&#39;s due.');
    const payload = json.payload;
    expect(payload).toMatchObject({
      partId: '',
      mimeType: 'multipart/mixed',
      filename: '',
      body: { size: 0 },
    });
    // Header values as they stand in the source: the encoded-word is not decoded.
    expect(payload.headers).toContainEqual({
      name: 'Subject',
      value: '=?utf-8?q?Your_invoice_=E2=82=AC42?=',
    });
    const [text, pdf] = payload.parts;
    expect(text.partId).toBe('0');
    expect(Buffer.from(text.body.data, 'base64url').toString('utf8')).toContain("Total €42 & it's due.");
    expect(text.body.size).toBe(Buffer.from(text.body.data, 'base64url').byteLength);
    expect(pdf).toMatchObject({ partId: '1', mimeType: 'application/pdf', filename: 'invoice.pdf' });
    expect(pdf.body.data).toBeUndefined();
    expect(pdf.body.size).toBe(256);
    expect(pdf.parts).toBeUndefined();

    const att = await h.gmail(`messages/${id}/attachments/${pdf.body.attachmentId}`);
    expect(att.status).toBe(200);
    expect(att.json.size).toBe(256);
    expect(Uint8Array.from(Buffer.from(att.json.data, 'base64url'))).toEqual(PDF_BYTES);
    expect((await h.gmail(`messages/${idOf('welcome')}/attachments/${pdf.body.attachmentId}`)).status).toBe(
      400,
    );
  });

  it('serves metadata (filtered headers, no parts), minimal (no payload) and raw (the RFC 822 bytes)', async () => {
    const id = idOf('invoice');
    const meta = await h.gmail(`messages/${id}?format=metadata&metadataHeaders=From&metadataHeaders=subject`);
    expect(meta.json.payload.headers.map((x: { name: string }) => x.name)).toEqual(['From', 'Subject']);
    expect(meta.json.payload.parts).toBeUndefined();
    const minimal = await h.gmail(`messages/${id}?format=minimal`);
    expect(minimal.json.payload).toBeUndefined();
    expect(Object.keys(minimal.json).sort()).toEqual(
      ['historyId', 'id', 'internalDate', 'labelIds', 'sizeEstimate', 'snippet', 'threadId'].sort(),
    );
    const raw = await h.gmail(`messages/${id}?format=raw`);
    const source = Buffer.from(raw.json.raw, 'base64url').toString('latin1');
    expect(source).toContain('Message-ID: <invoice-1@shop.example>');
    expect(raw.json.sizeEstimate).toBe(source.length);
    expect((await h.gmail(`messages/${id}?format=html`)).status).toBe(400);
  });

  it('keeps 8-bit sources byte-exact and shows their headers as text', async () => {
    // A latin1 string is one byte per char (a windows-1252 source); a string with wider chars is UTF-8 text.
    const legacy = h.sandbox.deliver(ALICE, textMail({ subject: 'Caf\xe9 cr\xe8me', messageId: 'l1@x' }), [
      'INBOX',
    ]);
    const modern = h.sandbox.deliver(ALICE, textMail({ subject: 'Café ✓', messageId: 'u8@x' }), ['INBOX']);
    const subject = async (id: string): Promise<string> =>
      (await h.gmail(`messages/${id}?format=metadata&metadataHeaders=Subject`)).json.payload.headers[0].value;
    expect(await subject(legacy.id)).toBe('Café crème');
    expect(await subject(modern.id)).toBe('Café ✓');
    const raw = await h.gmail(`messages/${legacy.id}?format=raw`);
    expect(Buffer.from(raw.json.raw, 'base64url').includes(Buffer.from([0x43, 0x61, 0x66, 0xe9]))).toBe(true);
  });

  it('404s an unknown message id', async () => {
    expect((await h.gmail('messages/ffffffffffffffff')).status).toBe(404);
  });
});

describe('message writes', () => {
  it('modify adds and removes labels and answers {id, threadId, labelIds}', async () => {
    const id = idOf('welcome');
    const res = await h.gmail(`messages/${id}/modify`, {
      body: { addLabelIds: ['STARRED', 'Label_1'], removeLabelIds: ['UNREAD'] },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id,
      threadId: id,
      labelIds: ['INBOX', 'CATEGORY_PERSONAL', 'STARRED', 'Label_1'],
    });
    expect(labelsOf(id)).toEqual(res.json.labelIds);
    expect((await h.gmail(`messages/${id}/modify`, { body: {} })).status).toBe(400);
    expect((await h.gmail(`messages/${id}/modify`, { body: { addLabelIds: ['Label_77'] } })).status).toBe(
      400,
    );
  });

  it('trash adds TRASH only; untrash removes it; the message stays listed under in:trash', async () => {
    const id = idOf('welcome');
    const trashed = await h.gmail(`messages/${id}/trash`, { method: 'POST' });
    expect(trashed.json.labelIds).toEqual(['INBOX', 'UNREAD', 'CATEGORY_PERSONAL', 'TRASH']);
    expect(await listIds(`q=${encodeURIComponent('in:trash')}`)).toContain(id);
    expect(await listIds('q=welcome')).toEqual([]);
    const back = await h.gmail(`messages/${id}/untrash`, { method: 'POST' });
    expect(back.json.labelIds).toEqual(['INBOX', 'UNREAD', 'CATEGORY_PERSONAL']);
  });

  it('batchModify answers 204, ignores unknown ids and refuses more than 1000 ids', async () => {
    const ids = [idOf('welcome'), idOf('invoice'), 'ffffffffffffffff'];
    const res = await h.gmail('messages/batchModify', { body: { ids, addLabelIds: ['STARRED'] } });
    expect(res.status).toBe(204);
    expect(res.json).toBeUndefined();
    expect(labelsOf(idOf('welcome'))).toContain('STARRED');
    expect(labelsOf(idOf('invoice'))).toContain('STARRED');

    const tooMany = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(16, '0'));
    const over = await h.gmail('messages/batchModify', { body: { ids: tooMany, addLabelIds: ['STARRED'] } });
    expect(over.status).toBe(400);
    expect(over.json.error.message).toContain('ids');
    const exactly = await h.gmail('messages/batchModify', {
      body: { ids: tooMany.slice(0, 1000), removeLabelIds: ['STARRED'] },
    });
    expect(exactly.status).toBe(204);
  });

  it('never deletes: DELETE and batchDelete answer 403 and the message remains', async () => {
    const id = idOf('welcome');
    const del = await h.gmail(`messages/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(403);
    expect(del.json.error.errors[0].reason).toBe('insufficientPermissions');
    expect((await h.gmail(`threads/${id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await h.gmail('messages/batchDelete', { body: { ids: [id] } })).status).toBe(403);
    expect((await h.gmail(`messages/${id}`)).status).toBe(200);
    expect(h.sandbox.mailbox(ALICE).messages.some((m) => m.id === id)).toBe(true);
  });
});
