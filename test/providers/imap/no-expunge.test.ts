import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { startDovecot, withMailClient } from '../../../src/sandbox/imap/index.js';
import type { DovecotServer, RecordedCommand } from '../../../src/sandbox/imap/index.js';
import { moveUids } from '../../../src/providers/imap/writer.js';
import { isMailError } from '../../../src/mail/errors.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * On Proton Mail Bridge an EXPUNGE in Trash or Drafts deletes the message for good, every copy
 * included. No write path may send one there: the tools that move mail in and out of Trash and
 * that add and remove labels run through the Bridge-like front end, which records every command,
 * and the record is replayed per connection to know which folder each EXPUNGE ran in. The COPY +
 * UID EXPUNGE fallback for servers without MOVE refuses to run in Trash.
 */

const tag = `nx${Date.now().toString(36)}`;
const mid = (n: string) => `${tag}-${n}@example.net`;
const tid = (n: string) => `t${Buffer.from(mid(n), 'utf8').toString('base64url')}`;
const mail = (n: string, from: string) =>
  [
    `From: ${from}`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${tag} ${n}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${mid(n)}>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of ${n}.`,
    '',
  ].join('\r\n');

/** Each EXPUNGE the clients sent, with the folder its connection had open. */
function expunges(record: readonly RecordedCommand[]): Array<{ folder: string | undefined; text: string }> {
  const open = new Map<number, string | undefined>();
  const out: Array<{ folder: string | undefined; text: string }> = [];
  for (const c of record) {
    const m = /^\S+ (?:(UID) )?([A-Za-z]+)(?: (.*))?$/s.exec(c.text);
    if (m === null) continue;
    const verb = (m[2] ?? '').toUpperCase();
    if ((verb === 'SELECT' || verb === 'EXAMINE') && /^OK/i.test(c.answer ?? ''))
      open.set(c.connection, (m[3] ?? '').replace(/^"|"$/g, ''));
    if (verb === 'CLOSE' || verb === 'UNSELECT') open.set(c.connection, undefined);
    if (verb === 'EXPUNGE') out.push({ folder: open.get(c.connection), text: c.text });
  }
  return out;
}

/** The folders holding a copy (doveadm names a virtual mailbox's messages by their real folder). */
async function where(server: DovecotServer, n: string): Promise<string[]> {
  const out = await server.doveadm(['fetch', '-u', server.user, 'mailbox hdr.message-id', 'all']);
  const found: string[] = [];
  let mailbox = '';
  for (const line of out.split('\n')) {
    const m = /^mailbox: (.*)$/.exec(line);
    if (m) mailbox = m[1] ?? '';
    if (line.includes(mid(n)) && !/^(All Mail|Starred)$/.test(mailbox)) found.push(mailbox);
  }
  return [...new Set(found)].sort();
}

describe('no EXPUNGE in Trash or Drafts on the Bridge-like profile', () => {
  let b: Backend;
  let server: DovecotServer;

  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0, policy: { default: { dailyMoveCap: 0 } } });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    await withMailClient(server, async (c) => {
      await c.append('INBOX', mail('letter', 'Shop <orders@shop.example>'), []);
      await c.append('Drafts', mail('draft', DEMO_ADDRESS), ['\\Draft']);
    });
  }, 180_000);
  afterAll(async () => {
    await b?.close();
  });

  it('trash, untrash, restore and label changes leave Trash and Drafts unexpunged', async () => {
    const front = (b.imap as NonNullable<Backend['imap']>).proxy;
    if (front === undefined) throw new Error('the bridge profile has a front end');
    const from = front.commands().length;
    const ok = async (name: string, args: Record<string, unknown>) => {
      const r = await b.call(name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(false);
      return r;
    };
    const made = await ok('create_label', { name: `Keep${tag}` });
    const keep = (made.structured['label'] as { id: string } | undefined)?.id ?? `Keep${tag}`;
    await ok('modify_labels', { threadId: tid('letter'), add: [keep] });
    await ok('trash', { threadId: tid('letter') });
    expect(await where(server, 'letter')).toContain('Trash');
    await ok('untrash', { threadId: tid('letter') });
    await ok('trash', { threadId: tid('letter') });
    await ok('restore', { threadId: tid('letter') });
    await ok('modify_labels', { threadId: tid('letter'), remove: [keep] });
    await ok('modify_labels', { threadId: tid('draft'), add: [keep] });
    await ok('modify_labels', { threadId: tid('draft'), remove: [keep] });

    const seen = expunges(front.commands().slice(from));
    // The record is read right: removing the label expunged its copies in the label folder.
    expect(seen.some((e) => e.folder === `Labels/Keep${tag}`)).toBe(true);
    expect(
      seen.filter((e) => e.folder === 'Trash' || e.folder === 'Drafts' || e.folder === undefined),
    ).toEqual([]);
    expect(await where(server, 'letter')).toEqual(['INBOX']);
    expect(await where(server, 'draft')).toEqual(['Drafts']);
  });
});

describe('the COPY + UID EXPUNGE fallback (servers without MOVE)', () => {
  let server: DovecotServer;
  beforeAll(async () => {
    server = await startDovecot({ profile: 'full' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses to move mail out of Trash, and the message stays there', async () => {
    await withMailClient(server, (c) => c.append('Trash', mail('binned', 'Shop <orders@shop.example>'), []));
    await withMailClient(server, async (client) => {
      client.capabilities.delete('MOVE');
      await client.mailboxOpen('Trash');
      const [uid] = (await client.search({ header: { 'message-id': mid('binned') } }, { uid: true })) || [];
      expect(uid).toBeDefined();
      const trash = {
        path: 'Trash',
        role: 'trash',
        kind: 'location',
        name: 'Trash',
        labelId: 'TRASH',
      } as const;
      const err = await moveUids(client, trash, [uid as number], 'INBOX').catch((e: unknown) => e);
      expect(isMailError(err) && err.code).toBe('unsupported');
      expect(String((err as Error).message)).toContain('never expunges in Trash or Drafts');
    });
    expect(await where(server, 'binned')).toEqual(['Trash']);
  });
});
