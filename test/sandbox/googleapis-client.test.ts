/**
 * The proof that matters: Google's own Node client, unmodified except for its root URLs, works
 * against the sandbox for everything mailwarden uses.
 */
import { auth, gmail } from '@googleapis/gmail';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, PDF_BYTES, startHarness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

function client(refreshToken = h.sandbox.refreshTokenFor(ALICE)) {
  const oauth = new auth.OAuth2({
    clientId: h.sandbox.oauthClient.clientId,
    clientSecret: h.sandbox.oauthClient.clientSecret,
    endpoints: { oauth2TokenUrl: `${h.sandbox.url}/token` },
  });
  oauth.setCredentials({ refresh_token: refreshToken });
  return gmail({ version: 'v1', auth: oauth, rootUrl: `${h.sandbox.url}/`, retry: false });
}

it('reads, searches, modifies and fetches attachments through googleapis', async () => {
  const g = client();
  const profile = await g.users.getProfile({ userId: 'me' });
  expect(profile.data.emailAddress).toBe(ALICE);

  const list = await g.users.threads.list({ userId: 'me', q: 'has:attachment', maxResults: 5 });
  const threadId = list.data.threads?.[0]?.id ?? '';
  expect(threadId).toBe(h.sandbox.threadIdForKey(ALICE, 'invoice'));

  const thread = await g.users.threads.get({ userId: 'me', id: threadId, format: 'full' });
  const part = thread.data.messages?.[0]?.payload?.parts?.find((p) => p.filename === 'invoice.pdf');
  const att = await g.users.messages.attachments.get({
    userId: 'me',
    messageId: thread.data.messages?.[0]?.id ?? '',
    id: part?.body?.attachmentId ?? '',
  });
  expect(Uint8Array.from(Buffer.from(att.data.data ?? '', 'base64url'))).toEqual(PDF_BYTES);

  const listed = await g.users.messages.list({ userId: 'me', labelIds: ['INBOX', 'UNREAD'] });
  const ids = (listed.data.messages ?? []).map((m) => m.id ?? '');
  expect(ids).toHaveLength(2);
  const batch = await g.users.messages.batchModify({
    userId: 'me',
    requestBody: { ids, removeLabelIds: ['UNREAD'] },
  });
  expect(batch.status).toBe(204);
  const after = await g.users.messages.list({ userId: 'me', q: 'is:unread' });
  expect(after.data.messages).toBeUndefined();
  expect(after.data.resultSizeEstimate).toBe(0);

  const history = await g.users.history.list({
    userId: 'me',
    startHistoryId: profile.data.historyId ?? '',
    historyTypes: ['labelRemoved'],
  });
  expect(history.data.history).toHaveLength(2);

  const labels = await g.users.labels.list({ userId: 'me' });
  expect(labels.data.labels?.some((l) => l.id === 'CATEGORY_PROMOTIONS')).toBe(true);
});

it('surfaces Google-shaped errors the way googleapis reports them', async () => {
  const g = client();
  await expect(g.users.messages.get({ userId: 'me', id: 'ffffffffffffffff' })).rejects.toMatchObject({
    status: 404,
    message: 'Requested entity was not found.',
  });
  const revoked = h.sandbox.issueRefreshToken(ALICE, ['gmail.readonly']);
  h.sandbox.revokeRefreshToken(revoked);
  await expect(client(revoked).users.getProfile({ userId: 'me' })).rejects.toMatchObject({
    message: expect.stringContaining('invalid_grant'),
  });
});
