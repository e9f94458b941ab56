import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { startPostgres } from '../helpers/postgres.js';
import type { PgCluster } from '../helpers/postgres.js';
import { MAIN } from '../helpers/stack.js';

/*
 * The review page (`mailwarden review`) reads the log the server writes, wherever it is kept: the
 * agent archives through the real server, the page (plain HTTP, signed in with its one-time link)
 * lists those moves with the day's count against the cap, and a restore from it puts the mail back
 * in the inbox, logged as a human restore in the same store. Once with the state in files, once
 * in PostgreSQL (MAILWARDEN_STATE), where no action log file is written at all.
 */

vi.setConfig({ testTimeout: 90_000 });

const POLICY = { default: { dailyMoveCap: 40, protectCorrespondents: false, inboxOnlyMoves: false } };

interface Review {
  proc: ChildProcess;
  origin: string;
  login: string;
}

function startReview(env: Record<string, string>): Promise<Review> {
  const proc = spawn(process.execPath, [MAIN, 'review', '--no-browser'], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  return new Promise((resolve, reject) => {
    const seen = (d: Buffer): void => {
      text += d.toString();
      const m = /(http:\/\/[^/\s]+)\/login\?token=[A-Za-z0-9_-]+/.exec(text);
      if (m) resolve({ proc, origin: m[1] as string, login: m[0] });
    };
    proc.stdout?.on('data', seen);
    proc.stderr?.on('data', (d: Buffer) => (text += d.toString()));
    proc.once('exit', (code) => reject(new Error(`review ended (${code}): ${text}`)));
  });
}

type State = 'files' | 'postgres';

describe.each(['files', 'postgres'] as State[])('the review page with the state in %s', (state) => {
  let b: Backend;
  let cluster: PgCluster | undefined;
  let review: Review | undefined;
  let cookie = '';
  let archived: string[] = [];

  const inInbox = (threadId: string): boolean =>
    (b.gmail?.sandbox.mailbox(DEMO_ADDRESS).messages ?? [])
      .filter((m) => m.threadId === threadId)
      .every((m) => m.labelIds.includes('INBOX'));
  const page = async (): Promise<string> => {
    const r = await fetch(`${review?.origin}/`, { headers: { cookie } });
    expect(r.status).toBe(200);
    return r.text();
  };
  /** Every move record, wherever this state keeps it, oldest first. */
  const moveRecords = async (): Promise<Array<Record<string, unknown>>> => {
    if (cluster === undefined)
      return readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"kind":"move"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      return (
        await c.query<{ record: Record<string, unknown> }>(
          "SELECT record FROM mailwarden_action_log WHERE kind = 'move' ORDER BY id",
        )
      ).rows.map((r) => r.record);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    if (state === 'postgres') cluster = await startPostgres();
    b = await startBackend('gmail', {
      policy: POLICY,
      ...(cluster === undefined
        ? {}
        : { env: { MAILWARDEN_STATE: cluster.url, MAILWARDEN_TOKEN_PASSPHRASE: 'review test passphrase' } }),
    });
    const s = await b.call('search', { query: 'in:inbox', maxResults: 4 });
    archived = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId).slice(0, 3);
    expect(archived).toHaveLength(3);
    const a = await b.call('archive', { threadIds: archived });
    expect(a.isError, a.text).toBe(false);
    for (const id of archived) expect(inInbox(id)).toBe(false);
    review = await startReview(b.env);
    const signIn = await fetch(review.login, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^mw_review_\d+=/);
  }, 180_000);

  afterAll(async () => {
    review?.proc.kill('SIGTERM');
    await b?.close();
    await cluster?.close();
  });

  it('lists the moves the agent made through the server, and the day against the cap', async () => {
    const html = await page();
    for (const id of archived) expect(html).toContain(`value="thread:${id}"`);
    const used = (await moveRecords())
      .filter((r) => r['tool'] === 'archive' && r['outcome'] === 'moved')
      .reduce((n, r) => n + (r['count'] as number), 0);
    expect(used).toBeGreaterThanOrEqual(3);
    expect(html).toMatch(new RegExp(`data-testid="cap-used">${used}<`));
    expect(html).toContain(`data-testid="cap-left">${40 - used} left<`);
    if (state === 'postgres') expect(existsSync(join(b.configDir, 'action-log.jsonl'))).toBe(false);
  });

  it('restores the whole call from the page: back in the inbox, logged as a human restore in the same store', async () => {
    const html = await page();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    const call = /name="call" value="([^"]+)"/.exec(html)?.[1];
    expect(csrf).toBeDefined();
    expect(call).toBeDefined();
    const r = await fetch(`${review?.origin}/restore`, {
      method: 'POST',
      headers: {
        cookie,
        origin: review?.origin ?? '',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        csrf: csrf as string,
        account: 'default',
        call: call as string,
        scope: 'call',
      }).toString(),
    });
    const body = await r.text();
    expect(r.status, body).toBe(200);
    expect(body).toContain('Restored 3 of 3');
    for (const id of archived) expect(inInbox(id)).toBe(true);
    const human = (await moveRecords()).filter((x) => x['actor'] === 'human' && x['tool'] === 'review');
    expect(human.map((x) => [(x['ids'] as string[])[0], x['outcome']]).sort()).toEqual(
      archived
        .flatMap((id) => [
          [id, 'moved'],
          [id, 'pending'],
        ])
        .sort(),
    );
    // A person's restore is not counted against the agent's cap.
    const usedOf = (h: string): string | undefined => /data-testid="cap-used">(\d+)</.exec(h)?.[1];
    expect(usedOf(await page())).toBe(usedOf(html));
  });
});
