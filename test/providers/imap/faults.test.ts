import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImapProxy } from '../../../src/sandbox/imap/index.js';
import type { ImapProxy } from '../../../src/sandbox/imap/index.js';
import { readAccounts, writeAccounts } from '../../../src/store/accounts.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * A server that drops the connection right after it received the MOVE: the move happened, its
 * answer never came. On both profiles (the Bridge-like one keeps Proton's folders and trimmed
 * capabilities; the fault proxy speaks to its plain loopback port). What the result reports and the log records must be what left the inbox.
 */

describe.each(['full', 'bridge'] as const)('on %s', (profile) => {
  let b: Backend;
  let proxy: ImapProxy;
  let other: Awaited<ReturnType<Backend['another']>>;

  beforeAll(async () => {
    b = await startBackend(profile, {
      policy: { default: { dailyMoveCap: 50, protectCorrespondents: false } },
    });
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    // The fault proxy must read commands, so this client speaks plain IMAP on loopback.
    proxy = await startImapProxy({ target: { host: server.host, port: server.plainPort } });
    const env = { MAILWARDEN_CONFIG_DIR: b.configDir };
    const [entry] = await readAccounts(env);
    if (entry?.imap === undefined) throw new Error('no imap account');
    await writeAccounts(env, [
      {
        ...entry,
        imap: { host: server.host, port: proxy.port, security: 'insecure-loopback', user: server.user },
      },
    ]);
    other = await b.another();
  }, 120_000);
  afterAll(async () => {
    await other?.close();
    await proxy?.stop();
    await b?.close();
  });

  describe('a connection dropped after the MOVE was sent', () => {
    it('reports and logs the threads as moved, because they left the inbox', async () => {
      const s = await other.call('search', { query: 'in:inbox', maxResults: 3 });
      const ids = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
      expect(ids).toHaveLength(3);
      proxy.setFaults([{ kind: 'drop', when: /UID MOVE/i, after: 'forward' }]);
      const r = await other.call('archive', { threadIds: ids });
      expect(r.isError, r.text).toBe(false);
      const changed = (r.structured['changed'] as Array<{ threadId: string }>).map((c) => c.threadId).sort();
      // The mailbox, read by the other (TLS) server: none of them is in the inbox any more.
      for (const id of ids) {
        const t = await b.call('get_thread', { threadId: id, bodies: 'none' });
        const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
        expect(labels).not.toContain('INBOX');
      }
      expect(changed).toEqual([...ids].sort());
      const moved = readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((x) => x['kind'] === 'move' && x['outcome'] === 'moved')
        .flatMap((x) => x['ids'] as string[]);
      expect(moved.sort()).toEqual([...ids].sort());
    });

    it('a MOVE that never reached the server: each thread is reported and logged as the mailbox has it', async () => {
      const s = await other.call('search', { query: 'in:inbox', maxResults: 2 });
      const ids = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
      proxy.setFaults([{ kind: 'drop', when: /UID MOVE/i, after: 'before' }]);
      const r = await other.call('archive', { threadIds: ids });
      // The threads may go in one batch or two (the second on a new connection): either way the
      // dropped MOVE changed nothing, and what is reported is what the mailbox shows.
      // An error result means nothing changed; otherwise the result lists each thread.
      const list = (k: string): string[] =>
        ((r.structured[k] ?? []) as Array<{ threadId: string }>).map((c) => c.threadId);
      const changed = r.isError ? [] : list('changed');
      const failed = r.isError ? ids : list('failed');
      expect(failed.length, r.text).toBeGreaterThan(0);
      expect([...changed, ...failed].sort()).toEqual([...ids].sort());
      const records = readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((x) => x['kind'] === 'move' && x['outcome'] !== 'pending');
      for (const id of ids) {
        const t = await b.call('get_thread', { threadId: id, bodies: 'none' });
        const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
        const last = records.filter((x) => (x['ids'] as string[]).includes(id)).at(-1);
        if (failed.includes(id)) {
          expect(labels).toContain('INBOX');
          expect(last?.['outcome']).toBe('failed');
        } else {
          expect(labels).not.toContain('INBOX');
          expect(last?.['outcome']).toBe('moved');
        }
      }
    });
  });
});
