import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { runCli } from '../../helpers/cli-run.js';
import { startPostgres } from '../../helpers/postgres.js';
import type { PgCluster } from '../../helpers/postgres.js';
import { startStack } from '../../helpers/stack.js';
import type { Stack } from '../../helpers/stack.js';
import { tempDir } from '../../helpers/temp.js';

/*
 * The built server with MAILWARDEN_STATE=postgres://…: two server processes, each with a config
 * dir of its own, on one sandbox mailbox and one state database share one daily cap.
 */

let cluster: PgCluster;
const stacks: Stack[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const s of stacks.splice(0).reverse()) await s.close();
  await cluster?.close();
});

describe('two servers on one state database', () => {
  it('share the daily cap: 2 archives through one and 2 through the other with a cap of 3 move 3 messages', async () => {
    const url = await cluster.createDatabase('servers');
    const policy = { default: { dailyMoveCap: 3, protectCorrespondents: false } };
    // The account and its token are in the database too (the passphrase is every server's).
    const env = { MAILWARDEN_STATE: url, MAILWARDEN_TOKEN_PASSPHRASE: 'servers passphrase' };
    const a = await startStack({ policy, env });
    stacks.push(a);
    const b = await startStack({ policy, env, existingSandbox: a.sandbox });
    stacks.push(b);
    const view = () => a.sandbox.mailbox(DEMO_ADDRESS);
    const inInbox = (threadId: string) =>
      view().messages.some((m) => m.threadId === threadId && m.labelIds.includes('INBOX'));
    // Threads of one message, all in the inbox and not the user's own.
    const single = view()
      .threads.filter((t) => t.messageIds.length === 1)
      .filter((t) => {
        const l = view().messages.find((m) => m.id === t.messageIds[0])?.labelIds ?? [];
        return l.includes('INBOX') && !l.includes('SENT') && !l.includes('DRAFT');
      })
      .map((t) => t.id)
      .sort()
      .slice(0, 4);
    expect(single).toHaveLength(4);
    const [t1, t2, t3, t4] = single as [string, string, string, string];

    const first = await a.call('archive', { threadIds: [t1, t2] });
    expect(first.isError, first.text).toBe(false);
    const second = await b.call('archive', { threadIds: [t3, t4] });
    expect(second.text).toContain('daily-cap');
    expect([t1, t2, t3, t4].filter(inInbox)).toEqual([t4]);

    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const rows = await c.query<{ outcome: string; n: number }>(
        "SELECT outcome, count(*)::int AS n FROM mailwarden_action_log WHERE kind = 'move' GROUP BY outcome ORDER BY outcome",
      );
      expect(rows.rows).toEqual([
        { outcome: 'moved', n: 3 },
        { outcome: 'pending', n: 3 },
        { outcome: 'refused', n: 1 },
      ]);
      // The mailbox's own records of the writes (intent and outcome) are rows too, and no server
      // wrote an action log file.
      const writes = await c.query<{ op: string; outcomes: string[] }>(
        `SELECT op, array_agg(outcome ORDER BY id) AS outcomes FROM mailwarden_action_log
          WHERE kind IS NULL AND outcome <> 'ok' OR call IN
            (SELECT call FROM mailwarden_action_log WHERE kind IS NULL AND outcome = 'pending')
          GROUP BY call, op ORDER BY op`,
      );
      expect(writes.rows.length).toBeGreaterThan(0);
      for (const w of writes.rows) expect(w.outcomes, w.op).toEqual(['pending', 'ok']);
      for (const s of [a, b]) expect(existsSync(join(s.configDir, 'action-log.jsonl'))).toBe(false);
    } finally {
      await c.end();
    }
  }, 120_000);

  it('a MAILWARDEN_STATE that is neither files nor a PostgreSQL URL stops the start, naming the setting', async () => {
    const r = await runCli([], {
      MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-state-'),
      MAILWARDEN_STATE: 'sqlite:///tmp/x',
    });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('MAILWARDEN_STATE: "sqlite:///tmp/x" is not allowed; use "files"');
  }, 60_000);
});
