import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import type { DovecotServer } from '../../../src/sandbox/imap/index.js';
import { appendMessage } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';
import { MAIN } from '../../helpers/stack.js';

/*
 * bulk_modify (dry run, preview token, undo plan, verify) and the snooze sweep on IMAP accounts,
 * checked against Dovecot itself (doveadm), on both profiles.
 */

/** Folders holding a message whose Message-ID contains `needle` (views and label copies left out). */
async function foldersOf(server: DovecotServer, needle: string): Promise<string[]> {
  const out = await server.doveadm(['fetch', '-u', server.user, 'mailbox hdr.message-id', 'all']);
  const found = new Set<string>();
  let mailbox = '';
  for (const l of out.split('\n')) {
    const m = /^mailbox: (.*)$/.exec(l);
    if (m) mailbox = m[1] ?? '';
    if (l.includes(needle) && !/^(All Mail|Starred|Labels\/)/.test(mailbox)) found.add(mailbox);
  }
  return [...found].sort();
}

function raw(tag: string, i: number): string {
  return [
    'From: Bulk Sender <bulk@bulk.example>',
    `To: ${DEMO_ADDRESS}`,
    `Subject: Bulk ${tag} ${i}`,
    `Message-ID: <${tag}-${i}@bulk.example>`,
    'Date: Mon, 30 Nov 2026 08:00:00 +0000',
    '',
    'Hello.',
    '',
  ].join('\r\n');
}

describe.each(['full', 'bridge'] as const)('bulk_modify and sweep_snoozed on %s', (profile) => {
  let b: Backend;
  let server: DovecotServer;
  beforeAll(async () => {
    // The guarded defaults: every message of a bulk move is read and judged, and logged in full.
    b = await startBackend(profile, { delayMs: 0, policy: null });
    server = (b.imap as NonNullable<Backend['imap']>).server;
    for (let i = 0; i < 6; i++) await appendMessage(server, 'INBOX', raw(`bk-${profile}`, i));
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('dry run, then the write with its preview token, verify and an undo plan; the undo puts every message back', async () => {
    const change = { query: 'from:bulk@bulk.example in:inbox', remove: ['INBOX'] };
    const dry = await b.call('bulk_modify', { ...change, dryRun: true });
    expect(dry.isError, dry.text).toBe(false);
    expect(dry.structured['toWrite']).toBe(6);
    const token = dry.structured['previewToken'] as string;
    expect(typeof token).toBe('string');
    for (let i = 0; i < 6; i++) expect(await foldersOf(server, `bk-${profile}-${i}@`)).toEqual(['INBOX']);

    const w = await b.call('bulk_modify', { ...change, previewToken: token, undo: true, verify: true });
    expect(w.isError, w.text).toBe(false);
    expect([w.structured['submitted'], w.structured['failed']]).toEqual([6, 0]);
    for (let i = 0; i < 6; i++) expect(await foldersOf(server, `bk-${profile}-${i}@`)).toEqual(['Archive']);

    // Each message's line names where it was: folder, UIDVALIDITY and UID.
    const moved = readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['tool'] === 'bulk_modify' && l['kind'] === 'move' && l['outcome'] === 'moved');
    expect(moved).toHaveLength(6);
    for (const l of moved)
      expect(l['places']).toEqual([
        { folder: 'INBOX', uidValidity: expect.stringMatching(/^\d+$/), uid: expect.any(Number) },
      ]);
    expect(new Set(moved.map((l) => (l['places'] as Array<{ uid: number }>)[0]?.uid)).size).toBe(6);

    const undo = await b.call('undo_bulk_modify', { plan: w.structured['undoPlan'] });
    expect(undo.isError, undo.text).toBe(false);
    expect(undo.structured['submitted']).toBe(6);
    for (let i = 0; i < 6; i++) expect(await foldersOf(server, `bk-${profile}-${i}@`)).toEqual(['INBOX']);

    // A spent preview token is refused, and nothing moves.
    const again = await b.call('bulk_modify', { ...change, previewToken: token });
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/invalid_input|previewToken/);
    for (let i = 0; i < 6; i++) expect(await foldersOf(server, `bk-${profile}-${i}@`)).toEqual(['INBOX']);
  });

  it('a due snooze comes back with `mailwarden sweep`, under the lock and logged message by message', async () => {
    const list = await b.call('search', { query: `rfc822msgid:bk-${profile}-0@bulk.example` });
    const threadId = (list.structured['threads'] as Array<{ threadId: string }>)[0]?.threadId as string;
    const s = await b.call('snooze', { threadId, until: '2026-12-24' });
    expect(s.isError, s.text).toBe(false);
    expect(await foldersOf(server, `bk-${profile}-0@`)).not.toContain('INBOX');

    const env = {
      PATH: process.env['PATH'] ?? '',
      HOME: b.configDir,
      ...(b.imap as NonNullable<Backend['imap']>).env,
      TZ: 'UTC',
      MAILWARDEN_NOW: '2026-12-24T10:00:00Z',
    };
    const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [MAIN, 'sweep'],
        { env, encoding: 'utf8', timeout: 60_000 },
        (_e, stdout) => resolve({ code: child.exitCode, stdout }),
      );
    });
    expect(r.code, r.stdout).toBe(0);
    const summary = JSON.parse(r.stdout) as {
      ok: boolean;
      accounts: Array<{ report: { returned: string[] } }>;
    };
    expect(summary.ok).toBe(true);
    expect(summary.accounts[0]?.report.returned).toEqual([threadId]);
    expect(await foldersOf(server, `bk-${profile}-0@`)).toEqual(['INBOX']);

    const records = readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['kind'] === 'move' && l['tool'] === 'sweep_snoozed');
    expect(records.map((l) => [l['action'], l['actor'], l['outcome']])).toEqual([
      ['restore', 'rule', 'pending'],
      ['restore', 'rule', 'moved'],
    ]);
  });
});
