import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { withMailClient } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * Moves out of the inbox judged from INBOX alone (src/providers/imap/inbox-moves.ts), on both
 * Dovecot profiles under the guarded policy: every rule is still judged on live state — a
 * protected correspondent, a message without a sender, a message another client moved away
 * between the listing and the archive, a Sent message another client added just before — and the
 * warm write costs a few commands, whatever the batch size (usage.requests: the provider's count
 * of IMAP commands in the call). policy.json's agentLabel marks what left the inbox (Bridge: a copy
 * in Labels/mailwarden; full: the keyword), a restore removes it, a spam move never carries it.
 */

const tag = `mv${Date.now().toString(36)}`;
const mid = (name: string) => `${tag}-${name}@example.net`;
const tid = (name: string) => `t${Buffer.from(mid(name), 'utf8').toString('base64url')}`;

function mail(name: string, from: string | undefined, extra: string[] = []): string {
  return [
    ...(from === undefined ? [] : [`From: ${from}`]),
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${tag} ${name}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${mid(name)}>`,
    ...extra,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of ${name}.`,
    '',
  ].join('\r\n');
}

/** Folder → how many messages of this test's `name` sit there, and their flags, as Dovecot says. */
async function where(server: DovecotServer, name: string): Promise<Record<string, string>> {
  const out = await server.doveadm(['fetch', '-u', server.user, 'mailbox flags hdr.message-id', 'all']);
  const found: Record<string, string> = {};
  let mailbox = '';
  let flags = '';
  for (const line of out.split('\n')) {
    const m = /^mailbox: (.*)$/.exec(line);
    if (m) mailbox = m[1] ?? '';
    const f = /^flags: ?(.*)$/.exec(line);
    if (f) flags = f[1] ?? '';
    if (line.includes(mid(name)) && !/^(All Mail|Starred)$/.test(mailbox)) found[mailbox] = flags;
  }
  return found;
}

const requests = (r: { structured: Record<string, unknown> }) =>
  (r.structured['usage'] as { requests: number }).requests;

describe.each(['full', 'bridge'] as const)('moves out of the inbox on %s', (profile) => {
  let b: Backend;
  let server: DovecotServer;
  const append = (folder: string, raw: string) => withMailClient(server, (c) => c.append(folder, raw, []));

  beforeAll(async () => {
    b = await startBackend(profile, {
      delayMs: 0,
      policy: { default: { dailyMoveCap: 0 } },
      env: { MAILWARDEN_IMAP_RECHECK_MS: '0' },
    });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    for (let i = 0; i < 12; i++)
      await append('INBOX', mail(`news${i}`, `News ${i} <news${i}@${tag}.example>`));
    await append('INBOX', mail('nosender', undefined));
    await append('INBOX', mail('gone', 'Gone <gone@elsewhere.example>'));
    await append('INBOX', mail('fresh', 'New Friend <friend@newly.example>'));
    await append('INBOX', mail('spammy', 'Spam <offers@spammy.example>'));
    // A warm connection with the Sent set learnt: the first archive pays for login and Sent.
    const first = await b.call('archive', { threadId: tid('news0') });
    expect(first.isError, first.text).toBe(false);
  }, 180_000);
  afterAll(async () => {
    await b?.close();
  });

  it('archive of one thread: a few commands warm, in Archive, with the agent label', async () => {
    const r = await b.call('archive', { threadId: tid('news1') });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['changed']).toEqual([{ threadId: tid('news1'), messages: 1 }]);
    expect(requests(r)).toBeLessThanOrEqual(8);
    const at = await where(server, 'news1');
    expect(Object.keys(at).filter((f) => !f.startsWith('Labels/'))).toEqual(['Archive']);
    if (profile === 'bridge') expect(at['Labels/mailwarden']).toBeDefined();
    else expect(at['Archive']).toContain('mailwarden');
  });

  it('archive of ten threads costs what archive of one does', async () => {
    const ids = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((i) => tid(`news${i}`));
    const r = await b.call('archive', { threadIds: ids });
    expect(r.isError, r.text).toBe(false);
    expect((r.structured['changed'] as unknown[]).length).toBe(10);
    expect(requests(r)).toBeLessThanOrEqual(8);
    for (const i of [2, 11]) expect(Object.keys(await where(server, `news${i}`))).toContain('Archive');
  });

  it('a message with no sender is refused and stays in the inbox', async () => {
    const r = await b.call('archive', { threadId: tid('nosender') });
    expect(r.error?.code).toBe('forbidden_operation');
    expect(r.text).toContain('no-sender');
    expect(Object.keys(await where(server, 'nosender'))).toEqual(['INBOX']);
  });

  it('a message another client moved out of the inbox after the listing is not reported moved', async () => {
    const listed = await b.call('search', { query: `in:inbox subject:${tag}`, maxResults: 50 });
    expect((listed.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId)).toContain(
      tid('gone'),
    );
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('INBOX');
      await c.messageMove({ header: { 'message-id': mid('gone') } }, 'Trash');
    });
    const r = await b.call('archive', { threadId: tid('gone') });
    expect(r.error?.code).toBe('forbidden_operation');
    expect(r.text).toContain('inbox-only');
    expect(Object.keys(await where(server, 'gone'))).toEqual(['Trash']);
  });

  it('a Sent message another client added just before protects its recipient in the next archive', async () => {
    await append(
      'Sent',
      [
        `From: ${DEMO_ADDRESS}`,
        'To: New Friend <friend@newly.example>',
        `Subject: Re: ${tag} fresh`,
        `Date: ${new Date().toUTCString()}`,
        `Message-ID: <${mid('reply')}>`,
        '',
        'Thanks!',
        '',
      ].join('\r\n'),
    );
    const r = await b.call('archive', { threadId: tid('fresh') });
    expect(r.error?.code).toBe('forbidden_operation');
    expect(r.text).toContain('protected-correspondent');
    expect(Object.keys(await where(server, 'fresh'))).toEqual(['INBOX']);
  });

  it('restore brings archived mail back and takes the agent label off', async () => {
    const r = await b.call('restore', { threadIds: [tid('news1'), tid('news2')] });
    expect(r.isError, r.text).toBe(false);
    expect((r.structured['changed'] as unknown[]).length).toBe(2);
    expect(requests(r)).toBeLessThanOrEqual(8);
    for (const n of ['news1', 'news2']) {
      const at = await where(server, n);
      expect(Object.keys(at)).toEqual(['INBOX']);
      expect(at['INBOX']).not.toContain('mailwarden');
    }
  });

  it('move_to_spam carries no agent label', async () => {
    const r = await b.call('move_to_spam', { threadId: tid('spammy') });
    expect(r.isError, r.text).toBe(false);
    expect(requests(r)).toBeLessThanOrEqual(8);
    const at = await where(server, 'spammy');
    const spam = profile === 'bridge' ? 'Spam' : 'Junk';
    expect(Object.keys(at)).toEqual([spam]);
    expect(at[spam]).not.toContain('mailwarden');
  });
});

describe.each(['full', 'bridge'] as const)("the timer's loop on %s", (profile) => {
  let b: Backend;
  let server: DovecotServer;
  const append = (raw: string) => withMailClient(server, (c) => c.append('INBOX', raw, []));
  const loopTag = `${tag}loop`;
  const lmid = (n: string) => `${loopTag}-${n}@example.net`;
  const loopMail = (n: string) => mail(n, `Bulletin <${n}@bulletins.example>`).replaceAll(tag, loopTag);

  beforeAll(async () => {
    b = await startBackend(profile, {
      delayMs: 0,
      policy: { default: { dailyMoveCap: 0 } },
      env: { MAILWARDEN_IMAP_RECHECK_MS: '0' },
    });
    server = (b.imap as NonNullable<Backend['imap']>).server;
  }, 180_000);
  afterAll(async () => {
    await b?.close();
  });

  it('new mail that fits the page is listed with one FETCH, and mark_handled after the archive asks only INBOX', async () => {
    // Caught up: everything up to this message is handled.
    await append(loopMail('seen'));
    const caught = await b.call('mark_handled', {
      messageId: `m${Buffer.from(lmid('seen'), 'utf8').toString('base64url')}`,
    });
    expect(caught.isError, caught.text).toBe(false);
    for (const n of ['a', 'b', 'c']) await append(loopMail(n));

    const listed = await b.call('list_new_mail', { limit: 20 });
    expect(listed.isError, listed.text).toBe(false);
    const lines = listed.structured['messages'] as Array<{ threadId: string; subject: string }>;
    expect(lines.map((l) => JSON.stringify(l.subject))).toEqual(
      ['a', 'b', 'c'].map((n) => expect.stringContaining(`${loopTag} ${n}`)),
    );
    expect(listed.structured['total']).toBe(3);
    // EXAMINE INBOX and one FETCH of everything above the mark: no SEARCH to count first.
    expect(requests(listed)).toBe(2);

    const archived = await b.call('archive', { threadIds: lines.map((l) => l.threadId) });
    expect(archived.isError, archived.text).toBe(false);
    expect((archived.structured['changed'] as unknown[]).length).toBe(3);

    const marked = await b.call('mark_handled', listed.structured['markHandled'] as Record<string, unknown>);
    expect(marked.isError, marked.text).toBe(false);
    // One EXAMINE: the UIDs below the mark and their Message-IDs come from the rows the archive
    // just read, which the EXAMINE proves complete.
    expect(requests(marked)).toBe(1);
    const after = await b.call('list_new_mail', { limit: 20 });
    expect(after.structured['total']).toBe(0);
  });
});
