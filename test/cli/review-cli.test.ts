import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { runCli } from '../helpers/cli-run.js';
import { startPostgres } from '../helpers/postgres.js';
import type { PgCluster } from '../helpers/postgres.js';

/*
 * `mailwarden log` and `mailwarden undo` on the Gmail sandbox and both Dovecot profiles: the
 * agent moves mail through the real server, a person reads the log and puts mail back from the
 * shell, and the mailbox (read live through the server) shows it back in the inbox. The restore
 * is logged as actor "human" and leaves the day's cap count as it was. On the sandbox it runs again
 * with the state in PostgreSQL (MAILWARDEN_STATE): the log and undo read the database's rows.
 */

interface LogJson {
  calls: Array<{
    call?: string;
    tool: string;
    actor: string;
    items: Array<{ ids: string[]; action: string; actor: string; outcome: string; count: number }>;
  }>;
  today: Array<{ account: string; used: number; cap: number }>;
}

// Each step runs the CLI as a process against a live mailbox; the machine may be busy.
vi.setConfig({ testTimeout: 90_000 });

const POLICY = { default: { dailyMoveCap: 40, protectCorrespondents: false, inboxOnlyMoves: false } };

/** Where the server keeps the log: the file in the config dir, or a PostgreSQL database. */
type State = 'files' | 'postgres';

const CASES: Array<[BackendKind, State]> = [
  ['gmail', 'files'],
  ['full', 'files'],
  ['bridge', 'files'],
  ['gmail', 'postgres'],
];

describe.each(CASES)('log and undo on %s, state in %s', (kind, state) => {
  let b: Backend;
  let threads: string[];
  let cluster: PgCluster | undefined;
  /** The move records in the state database (postgres only). */
  const rows = async (): Promise<Array<{ tool: string; actor: string; outcome: string }>> => {
    const c = new pg.Client({ connectionString: (cluster as PgCluster).url });
    await c.connect();
    try {
      return (
        await c.query<{ tool: string; actor: string; outcome: string }>(
          "SELECT tool, record->>'actor' AS actor, outcome FROM mailwarden_action_log WHERE kind = 'move' ORDER BY id",
        )
      ).rows;
    } finally {
      await c.end();
    }
  };

  const labelsOf = async (threadId: string): Promise<string[]> => {
    const t = await b.call('get_thread', { threadId, bodies: 'none' });
    expect(t.isError, t.text).toBe(false);
    return (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
  };
  const log = async (): Promise<LogJson> => {
    const r = await runCli(['log', '--json'], b.env);
    expect(r.code, r.err).toBe(0);
    return JSON.parse(r.out) as LogJson;
  };
  const callOf = async (tool: string): Promise<string> => {
    const c = (await log()).calls.find((x) => x.tool === tool && x.actor === 'agent');
    expect(c?.call).toBeDefined();
    return c?.call as string;
  };

  beforeAll(async () => {
    if (state === 'postgres') cluster = await startPostgres();
    // The server reads what the CLI (another client) changed: Bridge's reuse window is off here.
    b = await startBackend(kind, {
      policy: POLICY,
      env: {
        MAILWARDEN_IMAP_RECHECK_MS: '0',
        ...(cluster === undefined
          ? {}
          : { MAILWARDEN_STATE: cluster.url, MAILWARDEN_TOKEN_PASSPHRASE: 'review test passphrase' }),
      },
      ...(kind === 'gmail' ? {} : { delayMs: 0 }),
    });
    const s = await b.call('search', { query: 'in:inbox', maxResults: 8 });
    threads = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
    expect(threads.length).toBeGreaterThanOrEqual(5);
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await cluster?.close();
  });

  it('log shows the agent call item by item, and the day against the cap', async () => {
    const a = await b.call('archive', { threadIds: threads.slice(0, 3) });
    expect(a.isError, a.text).toBe(false);
    const view = await log();
    const archive = view.calls.find((c) => c.tool === 'archive');
    expect(archive?.items.map((i) => [i.ids[0], i.actor, i.outcome])).toEqual(
      threads.slice(0, 3).map((id) => [id, 'agent', 'moved']),
    );
    const used = archive?.items.reduce((n, i) => n + i.count, 0);
    expect(view.today[0]).toMatchObject({ cap: 40, used });
    const text = await runCli(['log'], b.env);
    expect(text.code).toBe(0);
    expect(text.out).toContain(`call ${(archive?.call ?? '').slice(0, 8)}`);
    expect(text.out).toContain('moved to Archive');
    expect(text.out).toMatch(
      new RegExp(`${used} of 40 agent moves out of the inbox used, ${40 - (used ?? 0)} left`),
    );
    // `mailwarden policy` counts the day from the same store.
    const policy = await runCli(['policy', '--json'], b.env);
    expect(policy.code, policy.err).toBe(0);
    const shown = JSON.parse(policy.out) as { accounts: Array<{ today: { used?: number } }> };
    expect(shown.accounts.map((a) => a.today.used)).toEqual([used]);
    const file = join(b.configDir, 'action-log.jsonl');
    if (state === 'postgres') {
      // What the log showed is the database's: the server wrote no file.
      expect(existsSync(file)).toBe(false);
      const moved = (await rows()).filter((r) => r.tool === 'archive' && r.outcome === 'moved');
      expect(moved).toHaveLength(3);
    } else expect(readFileSync(file, 'utf8')).toContain('"tool":"archive"');
  });

  it('undo --dry-run says what would come back and changes nothing', async () => {
    const call = await callOf('archive');
    const r = await runCli(['undo', '--call', call.slice(0, 8), '--dry-run'], b.env);
    expect(r.code, r.err + r.out).toBe(0);
    expect(r.out.match(/^would restore/gm)).toHaveLength(3);
    expect(r.out).toContain('nothing was changed');
    for (const id of threads.slice(0, 3)) expect(await labelsOf(id)).not.toContain('INBOX');
  });

  it('undo --call puts the call back in the inbox as a human action, not counted against the cap', async () => {
    const before = (await log()).today[0]?.used;
    const call = await callOf('archive');
    const r = await runCli(['undo', '--call', call], b.env);
    expect(r.code, r.err + r.out).toBe(0);
    expect(r.out).toContain('3 restored, 0 not');
    for (const id of threads.slice(0, 3)) expect(await labelsOf(id)).toContain('INBOX');
    const view = await log();
    const human = view.calls.find((c) => c.actor === 'human');
    expect(human?.tool).toBe('undo');
    expect(human?.items.map((i) => [i.ids[0], i.action, i.outcome]).sort()).toEqual(
      threads
        .slice(0, 3)
        .map((id) => [id, 'restore', 'moved'])
        .sort(),
    );
    expect(view.today[0]?.used).toBe(before);
    if (state === 'postgres')
      expect(
        (await rows()).filter((r) => r.tool === 'undo' && r.actor === 'human' && r.outcome === 'moved'),
      ).toHaveLength(3);
    // Again: nothing is where the agent put it any more.
    const again = await runCli(['undo', '--call', call], b.env);
    expect(again.code).toBe(1);
    expect(again.out.match(/already in the inbox/g)).toHaveLength(3);
  });

  it('restores only what is still where the agent put it, and says why per item', async () => {
    const [d, e] = [threads[3] as string, threads[4] as string];
    expect((await b.call('move_to_spam', { threadIds: [d, e] })).isError).toBe(false);
    // The agent then trashes one of them: it is no longer where the spam move put it.
    expect((await b.call('trash', { threadId: d })).isError).toBe(false);
    const call = await callOf('move_to_spam');
    const r = await runCli(['undo', '--call', call], b.env);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/not restored +thread \S+ +\(spam/);
    expect(r.out).toContain('it is in Trash now, not in Spam where the agent put it; left where it is');
    expect(r.out).toContain('1 restored, 1 not');
    expect(await labelsOf(d)).toContain('TRASH');
    expect(await labelsOf(e)).toContain('INBOX');
    expect(await labelsOf(e)).not.toContain('SPAM');
    // --item names the newest move of that thread (the trash): it comes back from Trash.
    const item = await runCli(['undo', '--item', d], b.env);
    expect(item.code, item.out).toBe(0);
    expect(item.out).toContain('1 restored, 0 not');
    const labels = await labelsOf(d);
    expect(labels).toContain('INBOX');
    expect(labels).not.toContain('TRASH');
  });

  it('refuses a selection it cannot read, naming the option', async () => {
    const none = await runCli(['undo'], b.env);
    expect(none.code).not.toBe(0);
    expect(none.err).toContain('give exactly one of --call ID, --since TIME or --item ID');
    const bad = await runCli(['undo', '--since', 'yesterday-ish'], b.env);
    expect(bad.err).toContain('"yesterday-ish" is not a time');
    const unknown = await runCli(['undo', '--bogus'], b.env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("Unknown option '--bogus'");
  });
});
