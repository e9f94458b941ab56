import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FACTS } from '../../../src/sandbox/corpus/index.js';
import { appendMessage } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import { answersFor } from '../../helpers/corpus-answers.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * mailwarden on the Bridge-like profile where Proton Mail Bridge differs from a plain IMAP server
 * (src/sandbox/imap/bridge-front.ts): flat labels, SEARCH on raw bytes, an added X-Pm-Gluon-Id
 * header. The full profile runs the same calls where the difference is the point.
 */

const k = DEMO_FACTS.keys;
const ENCODED = `=?UTF-8?B?${Buffer.from('Offsite in Zürich', 'utf8').toString('base64')}?=`;
const raw =
  `From: Lena <lena@example.org>\r\nTo: you@mailwarden.example\r\nSubject: ${ENCODED}\r\n` +
  'Message-ID: <zurich-offsite@example.org>\r\nDate: Sun, 15 Nov 2026 09:00:00 +0000\r\n' +
  'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
  `${Buffer.from('Wir treffen uns in Zürich zum Quartalsabschluss.\r\n', 'utf8').toString('base64')}\r\n`;

type Checked = { predicate: string; by: string; recall?: string };
const checkedBy = (structured: Record<string, unknown>): Checked[] =>
  (structured['verification'] as { checkedBy?: Checked[] } | undefined)?.checkedBy ?? [];
const subjects = (structured: Record<string, unknown>): string[] =>
  ((structured['threads'] as Array<{ subject: string }> | undefined) ?? []).map((t) => t.subject);

describe('mailwarden on the Bridge-like profile', () => {
  let b: Backend;
  let full: Backend;
  beforeAll(async () => {
    [b, full] = await Promise.all([startBackend('bridge'), startBackend('full')]);
    for (const x of [b, full])
      await appendMessage((x.imap as NonNullable<Backend['imap']>).server, 'INBOX', raw);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([b?.close(), full?.close()]);
  });

  it('create_label refuses a nested name on Bridge before creating anything, and a flat label works end to end', async () => {
    const nested = await b.call('create_label', { name: 'Audit/Probe' });
    expect(nested.isError).toBe(true);
    expect(nested.error).toMatchObject({ code: 'invalid_input' });
    expect(nested.error?.message).toMatch(/^name: .*a label cannot have children/);
    const front = b.imap?.proxy;
    const creates = front
      ?.commands()
      .filter((c) => / CREATE /i.test(c.text))
      .map((c) => c.text);
    expect(creates).toEqual([]);
    const listed = (await b.call('list_labels', {})).text;
    expect(listed).not.toMatch(/Audit/);

    const flat = await b.call('create_label', { name: 'Probe' });
    expect(flat.isError, flat.text).toBe(false);
    // gluon creates a mailbox subscribed, and refuses a SUBSCRIBE of it: CREATE alone goes out.
    const sent = (front?.commands() ?? []).filter((c) => / (CREATE|SUBSCRIBE) /i.test(c.text));
    expect(sent.map((c) => [c.text.replace(/^\S+ /, ''), c.answer?.slice(0, 2)])).toEqual([
      ['CREATE Labels/Probe', 'OK'],
    ]);
    const added = await b.call('modify_labels', { threadId: b.tid(k.calendarInvite), add: ['Probe'] });
    expect(added.isError, added.text).toBe(false);
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    const inLabel = await server.doveadm(['search', '-u', server.user, 'mailbox', 'Labels/Probe', 'all']);
    expect(inLabel.trim().split('\n').filter(Boolean).length).toBeGreaterThan(0);
  });

  it('search says recall is limited where Bridge matches raw bytes, and Dovecot finds what Bridge cannot', async () => {
    const onBridge = await b.call('search', { query: 'subject:Zürich' });
    expect(onBridge.isError, onBridge.text).toBe(false);
    expect(subjects(onBridge.structured)).toEqual([]);
    expect(checkedBy(onBridge.structured)).toContainEqual({
      predicate: 'subject:zürich',
      by: 'server',
      recall: 'limited',
    });
    expect(onBridge.structured['note']).toMatch(/^recall limited for subject:zürich: /);

    const onFull = await full.call('search', { query: 'subject:Zürich' });
    expect(subjects(onFull.structured).join(' ')).toMatch(/Offsite in Zürich/);
    expect(checkedBy(onFull.structured).some((c) => c.recall !== undefined)).toBe(false);
    expect(onFull.structured['note']).toBeUndefined();

    // The sender's address is plain ASCII in the raw header: found, and nothing is marked limited.
    const byAddress = await b.call('search', { query: 'from:lena@example.org' });
    expect(subjects(byAddress.structured).join(' ')).toMatch(/Offsite in Zürich/);
    expect(checkedBy(byAddress.structured).some((c) => c.recall !== undefined)).toBe(false);
  });

  it('ids come from Message-ID, not from the raw header Bridge adds to (X-Pm-Gluon-Id)', async () => {
    const r = await b.call('search', { query: 'from:lena@example.org' });
    const id = (r.structured['threads'] as Array<{ threadId: string }>)[0]?.threadId;
    expect(id).toBe(`t${Buffer.from('zurich-offsite@example.org').toString('base64url')}`);
    const t = await b.call('get_thread', { threadId: id, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    expect((t.structured['messages'] as unknown[]).length).toBe(1);
    expect(t.text).not.toMatch(/Pm-Gluon/i);
  });
});

describe('mailwarden on Bridge with All Mail hidden (a Bridge setting)', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { bridge: { allMail: false } });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('reads, searches and archives without All Mail', async () => {
    const info = await b.call('get_profile', {});
    expect(info.isError, info.text).toBe(false);
    const key = k.awaitingOwnerReply[0] as string;
    const t = await b.call('get_thread', { threadId: b.tid(key), bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    expect(
      (t.structured['messages'] as Array<{ labels: string[] }>).some((m) => m.labels.includes('INBOX')),
    ).toBe(true);
    const spam = await b.call('search', { query: 'in:spam', maxResults: 50 });
    expect((spam.structured['threads'] as unknown[]).length).toBe(answersFor('bridge').spam);
    const r = await b.call('archive', { threadId: b.tid(key) });
    expect(r.isError, r.text).toBe(false);
    const after = await b.call('get_thread', { threadId: b.tid(key), bodies: 'none' });
    expect(
      (after.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels),
    ).not.toContain('INBOX');
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    expect(await server.doveadm(['mailbox', 'list', '-u', server.user])).not.toMatch(/All Mail/);
  }, 120_000);
});
