import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigDir } from '../../src/sandbox/client-config.js';
import type { OffsetClock } from '../../src/mail/clock.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { HAPROXY, startBalancer } from '../../src/sandbox/balancer.js';
import type { Balancer } from '../../src/sandbox/balancer.js';
import { envelopeOf } from '../helpers/envelope.js';
import { connectClient, startHttp } from '../helpers/interop.js';
import type { AnyClient, HttpProcess } from '../helpers/interop.js';
import { startPostgres } from '../helpers/postgres.js';
import { accountsIntoPostgres } from '../helpers/pg-accounts.js';
import type { PgCluster } from '../helpers/postgres.js';
import { removeAfterFile } from '../helpers/temp.js';
import { writeTestPolicy } from '../helpers/stack.js';

/*
 * Three `mailwarden http` replicas on one state behind a real HAProxy (docs/deployment.md). A
 * 2026-07-28 request carries everything it needs, so any replica answers it; a 2025-11-25
 * session lives in the replica that opened it, so the balancer keeps it there by its
 * Mcp-Session-Id. The whole suite runs twice: with the replicas sharing the config dir of one
 * machine (the files backend) and with their state in one PostgreSQL database
 * (MAILWARDEN_STATE). Either way the daily cap holds across them because every replica takes the
 * same per-account lock, and the servers' own timers claim each account's run in the shared state.
 */

const TOKEN = 'replicas-token-0123456789abcdef0123456789abcdef';
const USER = 'replicas@sandbox.example';
const THREADS = 70;
/** Single-message threads for bulk_modify (one chunk of batchModify). */
const BULK = 300;
const CAP = 50;

function seed(): SeedUser {
  const at = Date.UTC(2026, 10, 2, 9);
  const bulk = (i: number) => ({
    key: `b${i}`,
    messages: [
      {
        raw: [
          `From: Bulk ${i} <bulk@bulk${i}.example>`,
          `To: ${USER}`,
          `Subject: bulkmail ${i}`,
          `Date: ${new Date(at - (i + 1) * 60_000).toUTCString()}`,
          `Message-ID: <b${i}@bulk${i}.example>`,
          'Content-Type: text/plain; charset=utf-8',
          '',
          `bulk ${i}`,
          '',
        ].join('\r\n'),
        labelIds: ['INBOX'],
        internalDate: at - (i + 1) * 60_000,
      },
    ],
  });
  return {
    email: USER,
    userLabels: [],
    threads: [
      ...Array.from({ length: BULK }, (_, i) => bulk(i)),
      ...Array.from({ length: THREADS }, (_, i) => ({
        key: `t${i}`,
        messages: [
          {
            raw: [
              `From: Sender ${i} <s${i}@news${i}.example>`,
              `To: ${USER}`,
              `Subject: note ${i}`,
              `Date: ${new Date(at + i * 60_000).toUTCString()}`,
              `Message-ID: <t${i}@news${i}.example>`,
              'Content-Type: text/plain; charset=utf-8',
              '',
              `note ${i}`,
              '',
            ].join('\r\n'),
            labelIds: ['INBOX'],
            internalDate: at + i * 60_000,
          },
        ],
      })),
    ],
  };
}

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let replicas: HttpProcess[] = [];
const fileLines = (): string[] =>
  existsSync(join(dir, 'action-log.jsonl'))
    ? readFileSync(join(dir, 'action-log.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
let lb: Balancer;
/** Gmail API requests by method made while the replicas started and their timers ran. */
let atStart: Record<string, number> = {};

const client = (kind: 'v1' | 'v2-2026-07-28', url: string): Promise<AnyClient> =>
  connectClient(kind, 'http', { env: {}, http: { url, token: TOKEN } }, { elicit: false });
const delta = (before: number[], after: number[]) => after.map((n, i) => n - (before[i] ?? 0));
const inInbox = (key: string): boolean => {
  const id = sandbox.threadIdForKey(USER, key);
  return sandbox.mailbox(USER).messages.some((m) => m.threadId === id && m.labelIds.includes('INBOX'));
};

/** The state the replicas share: the config dir's files, or one PostgreSQL database. */
type Backend = 'files' | 'postgres';

describe.skipIf(!existsSync(HAPROXY)).each(['files', 'postgres'] as Backend[])(
  'replicas behind HAProxy on %s (needs haproxy)',
  (backend) => {
    let cluster: PgCluster | undefined;
    /** The records of the log the replicas share, whichever backend holds them. */
    let logLines: () => Promise<string[]>;
    beforeAll(async () => {
      // The suite reads hundreds of messages within a minute (listings, bulk calls); Gmail's
      // per-minute quota is not what it tests, so the sandbox's is set out of the way.
      sandbox = await Sandbox.start({ users: [seed()], quotaUnitsPerMinute: 1_000_000 });
      dir = removeAfterFile(sandboxConfigDir(sandbox, USER, 'mailwarden-replicas-'));
      writeTestPolicy(dir, {
        default: {
          dailyMoveCap: CAP,
          protectCorrespondents: false,
          // A rule the replicas' own timers sweep at start (t65's sender).
          senderRules: { archive: ['news65.example'] },
        },
      });
      env = {
        HOME: dir,
        MAILWARDEN_CONFIG_DIR: dir,
        MAILWARDEN_SANDBOX_URL: sandbox.url,
        MAILWARDEN_TOOLS: 'read,manage',
        MAILWARDEN_TOKEN: TOKEN,
        MAILWARDEN_CONFIRM: 'off',
      };
      if (backend === 'postgres') {
        cluster = await startPostgres();
        const url = cluster.url;
        env['MAILWARDEN_STATE'] = url;
        // The account's token is in the database too, sealed with the replicas' one passphrase.
        env['MAILWARDEN_TOKEN_PASSPHRASE'] = 'the replicas passphrase';
        await accountsIntoPostgres(dir, url, env['MAILWARDEN_TOKEN_PASSPHRASE']);
        // The policy's move records are in the database; the mailbox's own records stay in the file.
        logLines = async () => {
          const c = new pg.Client({ connectionString: url });
          await c.connect();
          try {
            const rows = (
              await c.query<{ record: unknown }>('SELECT record FROM mailwarden_action_log ORDER BY id')
            ).rows;
            return [...fileLines(), ...rows.map((r) => JSON.stringify(r.record))];
          } finally {
            await c.end();
          }
        };
      } else logLines = async () => fileLines();
      const before = sandbox.stats().byMethod;
      replicas = await Promise.all([0, 1, 2].map(() => startHttp(env)));
      // Each replica's rule timer ticks at start: wait for the sweep, and a while for the others.
      const deadline = Date.now() + 30_000;
      while (inInbox('t65') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 2_000));
      atStart = Object.fromEntries(
        Object.entries(sandbox.stats().byMethod).map(([m, e]) => [
          m,
          e.requests - (before[m]?.requests ?? 0),
        ]),
      );
      lb = await startBalancer(replicas.map((r) => r.url));
    }, 120_000);
    afterAll(async () => {
      await lb?.close();
      await Promise.all(replicas.map((r) => r.stop()));
      await sandbox?.close();
      await cluster?.close();
    });

    it('a 2026-07-28 client is answered by every replica in turn', async () => {
      const before = await lb.served();
      const c = await client('v2-2026-07-28', lb.plainUrl);
      try {
        for (let i = 0; i < 6; i++) {
          const r = await c.call('get_profile');
          expect(r.isError, r.text).toBe(false);
          expect(r.structured?.['emailAddress']).toBe(USER);
        }
      } finally {
        await c.close();
      }
      const served = delta(before, await lb.served());
      expect(served.every((n) => n >= 2)).toBe(true);
    });

    it('a 2025-11-25 session stays on the replica that opened it; without the stick table it breaks', async () => {
      const before = await lb.served();
      const c = await client('v1', lb.url);
      try {
        for (let i = 0; i < 6; i++) {
          const r = await c.call('get_profile');
          expect(r.isError, r.text).toBe(false);
        }
      } finally {
        await c.close();
      }
      const served = delta(before, await lb.served());
      // initialize, initialized, 6 calls and the closing DELETE: all on one replica.
      expect(served.filter((n) => n > 0)).toHaveLength(1);
      expect(Math.max(...served)).toBeGreaterThanOrEqual(8);

      // Round robin alone sends the session's next request to a replica that never saw it.
      const failure = await (async () => {
        const plain = await client('v1', lb.plainUrl);
        try {
          for (let i = 0; i < 3; i++) await plain.call('get_profile');
          return undefined;
        } finally {
          await plain.close().catch(() => undefined);
        }
      })().catch((e: unknown) => e);
      expect(String(failure)).toMatch(/Session not found/);
    });

    it('two clients racing 30 archives each through the balancer move exactly the cap in total', async () => {
      const keys = Array.from({ length: 60 }, (_, i) => `t${i}`);
      const [a, b] = await Promise.all([
        client('v2-2026-07-28', lb.plainUrl),
        client('v2-2026-07-28', lb.plainUrl),
      ]);
      const before = await lb.served();
      const outcomes: Array<'moved' | 'refused' | 'other'> = [];
      const race = async (c: AnyClient, mine: string[]) => {
        for (const key of mine) {
          const r = await c.call('archive', { threadId: sandbox.threadIdForKey(USER, key) });
          const changed = (r.structured?.['changed'] as unknown[] | undefined)?.length ?? 0;
          if (!r.isError && changed === 1) outcomes.push('moved');
          else if (/daily-cap/.test(r.text)) outcomes.push('refused');
          else outcomes.push('other');
        }
      };
      try {
        await Promise.all([
          race(
            a,
            keys.filter((_, i) => i % 2 === 0),
          ),
          race(
            b,
            keys.filter((_, i) => i % 2 === 1),
          ),
        ]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
      expect(outcomes.filter((o) => o === 'moved')).toHaveLength(CAP);
      expect(outcomes.filter((o) => o === 'refused')).toHaveLength(60 - CAP);
      // The mailbox agrees: exactly 50 of the 60 left the inbox; the 10 beyond stay.
      expect(keys.filter((k) => !inInbox(k))).toHaveLength(CAP);
      expect(keys.filter(inInbox)).toHaveLength(60 - CAP);
      // Every replica took part in the race.
      expect(delta(before, await lb.served()).every((n) => n > 0)).toBe(true);
    });

    it('the sender-rule timer sweeps the account once, not once per replica', () => {
      // One sweep: one replica signed in and searched for the rule's sender; the other two found
      // the slot taken and opened no mailbox at all.
      expect(inInbox('t65')).toBe(false);
      expect(atStart['oauth.token']).toBe(1);
      expect(atStart['messages.list']).toBe(1);
      expect(atStart['messages.batchModify']).toBe(1);
    });

    it('a replica killed mid bulk_modify leaves an unknown outcome every replica reports; a restart redoes nothing', async () => {
      const batches = () => sandbox.stats().byMethod['messages.batchModify']?.requests ?? 0;
      const before = batches();
      // The write reaches Gmail and is held there 3 s: the replica dies with it in flight.
      sandbox.faults.script([{ method: 'messages.batchModify', kind: 'delay', delayMs: 3_000 }]);
      const c = await client('v2-2026-07-28', lb.plainUrl);
      let victim: HttpProcess | undefined;
      let victimAt = -1;
      let restarted = false;
      try {
        // A move the cap does not count (the race above used today's): the archived notes back to
        // the inbox, in one chunk.
        const call = c.call('bulk_modify', {
          query: 'subject:note -in:inbox',
          add: ['INBOX'],
          maxMessages: 1_000,
        });
        call.catch(() => undefined);
        const deadline = Date.now() + 30_000;
        while (batches() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
        expect(batches()).toBe(before + 1);
        const serving = (await lb.inFlight()).findIndex((n) => n > 0);
        expect(serving).toBeGreaterThanOrEqual(0);
        victim = replicas[serving] as HttpProcess;
        victimAt = serving;
        victim.proc.kill('SIGKILL');
        await victim.exit;
        const outcome = await call.then(
          (r) => (r.isError ? r.text : 'answered'),
          (e: unknown) => String(e),
        );
        expect(outcome).not.toBe('answered');
        await new Promise((r) => setTimeout(r, 3_500));
        sandbox.faults.clear();

        // The intent line has no outcome line: whichever replica answers counts it as unknown.
        const lines = (await logLines())
          .filter((l) => l.includes('"bulk_modify"'))
          .map((l) => JSON.parse(l) as { call?: string; outcome: string; kind?: string; op?: string });
        const open = [...new Set(lines.map((l) => l.call))].filter((call) =>
          lines.filter((l) => l.call === call).every((l) => l.outcome === 'pending'),
        );
        // The move's intent (the policy's record) and the write's (the mailbox's) are both left open.
        const left = lines.filter((l) => open.includes(l.call));
        expect(left.some((l) => l.kind === 'move')).toBe(true);
        expect(left.some((l) => l.op === 'modifyMessages')).toBe(true);
        const ask = async () => {
          const r = await c.call('count_moves', {});
          expect(r.isError, r.text).toBe(false);
          return (r.structured?.['agent'] as { unknown: { items: number; byKind: { restore: number } } })
            .unknown;
        };
        const unknown = await ask();
        expect(unknown.items).toBeGreaterThan(0);
        expect(unknown.byKind.restore).toBe(unknown.items);
        // Every replica left answers the same.
        expect(await ask()).toEqual(unknown);

        // The killed replica comes back: nothing is sent again, nothing counted twice.
        replicas[serving] = await startHttp(env, ['--port', new URL(victim.url).port]);
        restarted = true;
        await new Promise((r) => setTimeout(r, 2_000));
        expect(batches()).toBe(before + 1);
        for (let i = 0; i < 3; i++) expect(await ask()).toEqual(unknown);
      } finally {
        sandbox.faults.clear();
        await c.close();
        // The later tests need all three behind the balancer.
        if (victim !== undefined && !restarted)
          replicas[victimAt] = await startHttp(env, ['--port', new URL(victim.url).port]);
      }
    });

    it('a new-mail mark set through one replica is what the next replica lists from', async () => {
      const c = await client('v2-2026-07-28', lb.plainUrl);
      try {
        const first = await c.call('list_new_mail', { limit: 5 });
        expect(first.isError, first.text).toBe(false);
        const lines = first.structured?.['messages'] as Array<{ messageId: string }>;
        expect(lines.length).toBeGreaterThan(0);
        const last = lines[lines.length - 1] as { messageId: string };
        const marked = await c.call('mark_handled', { messageId: last.messageId });
        expect(marked.isError, marked.text).toBe(false);
        // Two more calls land on the two other replicas: neither lists what was handled.
        for (let i = 0; i < 2; i++) {
          const next = await c.call('list_new_mail', { limit: 5 });
          expect(next.isError, next.text).toBe(false);
          const ids = (next.structured?.['messages'] as Array<{ messageId: string }>).map((m) => m.messageId);
          for (const m of lines) expect(ids).not.toContain(m.messageId);
        }
      } finally {
        await c.close();
      }
    });

    // PostgreSQL only: the state database goes away and comes back under running replicas.
    if (backend === 'postgres')
      it('PostgreSQL stopped mid bulk_modify: a clear retryable error, then any replica works again with no record lost', async () => {
        const db = cluster as PgCluster;
        const batches = () => sandbox.stats().byMethod['messages.batchModify']?.requests ?? 0;
        const rowsNow = async (): Promise<Array<{ id: string; record: Record<string, unknown> }>> => {
          const c = new pg.Client({ connectionString: db.url });
          await c.connect();
          try {
            return (
              await c.query<{ id: string; record: Record<string, unknown> }>(
                'SELECT id, record FROM mailwarden_action_log ORDER BY id',
              )
            ).rows;
          } finally {
            await c.end();
          }
        };
        // The notes (t0…t69): back in the inbox since the restore above (t65 too, unless the rule swept it again).
        const notes = new Set(
          Array.from({ length: THREADS }, (_, i) => sandbox.threadIdForKey(USER, `t${i}`)),
        );
        const notesInInbox = () =>
          sandbox.mailbox(USER).messages.filter((m) => notes.has(m.threadId) && m.labelIds.includes('INBOX'))
            .length;
        // The race above spent today's cap; policy.json is read for every write, so this call's
        // moves out of the inbox get room without a restart.
        const policy = (cap: number) => ({
          default: {
            dailyMoveCap: cap,
            protectCorrespondents: false,
            senderRules: { archive: ['news65.example'] },
          },
        });
        writeTestPolicy(dir, policy(CAP + 2 * THREADS));
        const before = batches();
        const known = new Set((await rowsNow()).map((r) => r.id));
        const moving = notesInInbox();
        expect(moving).toBeGreaterThanOrEqual(THREADS - 1);
        // The write reaches Gmail and is held there 3 s; the database stops while it is held.
        sandbox.faults.script([{ method: 'messages.batchModify', kind: 'delay', delayMs: 3_000 }]);
        const c = await client('v2-2026-07-28', lb.plainUrl);
        let stopped = false;
        try {
          const call = c.call('bulk_modify', {
            query: 'subject:note in:inbox',
            remove: ['INBOX'],
            maxMessages: 1_000,
          });
          call.catch(() => undefined);
          const deadline = Date.now() + 30_000;
          let settled: string | undefined;
          void call.then((x) => (settled = x.text));
          while (batches() === before && settled === undefined && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 25));
          expect(batches(), settled).toBe(before + 1);
          // Everything written before the stop, this call's intent records among them: one per
          // message from the policy, one for the batch from the mailbox.
          const atStop = await rowsNow();
          const mine = atStop.filter((r) => !known.has(r.id));
          expect(
            mine.filter((r) => r.record['kind'] === 'move' && r.record['outcome'] === 'pending'),
          ).toHaveLength(moving);
          expect(
            mine.filter((r) => r.record['op'] === 'modifyMessages' && r.record['outcome'] === 'pending'),
          ).toHaveLength(1);
          await db.stop('fast');
          stopped = true;

          const r = await call;
          expect(r.isError, r.text).toBe(true);
          const e = envelopeOf(r.text);
          expect(e.code).toBe('upstream_unavailable');
          expect(e.retryable).toBe(true);
          expect(e.message).toContain(`the state database ${db.url}`);
          expect(e.message).toContain('Try again when it is back');
          // No driver stack or source path reaches the client.
          expect(r.text).not.toMatch(/\n\s+at |node_modules|\.js:\d+/);
          sandbox.faults.clear();
          // While it is down, the next replica says the same, changing nothing.
          const down = await c.call('count_moves', {});
          expect(down.isError).toBe(true);
          expect(envelopeOf(down.text)).toMatchObject({ code: 'upstream_unavailable', retryable: true });

          await db.start();
          stopped = false;
          // No replica restarted: three calls in turn, one on each, all answered from the database.
          const served = await lb.served();
          const answers: string[] = [];
          for (let i = 0; i < 3; i++) {
            const again = await c.call('count_moves', {});
            expect(again.isError, again.text).toBe(false);
            answers.push(JSON.stringify((again.structured?.['agent'] as { unknown: unknown }).unknown));
          }
          expect(delta(served, await lb.served()).every((n) => n >= 1)).toBe(true);
          // The held write may have happened: its items are unknown, the same on every replica.
          expect(new Set(answers).size).toBe(1);
          const unknown = JSON.parse(answers[0] as string) as { byKind: { archive: number } };
          expect(unknown.byKind.archive).toBe(moving);

          // No record written before the stop was lost or changed, and none of this call's
          // intents got a second outcome; the mailbox was written once.
          const after = await rowsNow();
          const byId = new Map(after.map((r) => [r.id, JSON.stringify(r.record)]));
          for (const r of atStop) expect(byId.get(r.id)).toBe(JSON.stringify(r.record));
          expect(after.filter((r) => !known.has(r.id) && r.record['outcome'] !== 'pending')).toEqual([]);
          expect(batches()).toBe(before + 1);
          expect(notesInInbox()).toBe(0);

          // And a write goes through again on the database that came back: the notes return.
          const back = await c.call('bulk_modify', {
            query: 'subject:note -in:inbox',
            add: ['INBOX'],
            maxMessages: 1_000,
          });
          expect(back.isError, back.text).toBe(false);
          expect(batches()).toBe(before + 2);
          expect(notesInInbox()).toBe(THREADS);
          const restored = (await rowsNow()).filter(
            (r) => !byId.has(r.id) && r.record['kind'] === 'move' && r.record['outcome'] === 'moved',
          );
          expect(restored).toHaveLength(THREADS);
        } finally {
          sandbox.faults.clear();
          if (stopped) await db.start();
          writeTestPolicy(dir, policy(CAP));
          await c.close();
        }
      }, 120_000);

    it('kept what they share where the backend says: the mark, the timer slot and the move records', async () => {
      if (backend === 'postgres') {
        const c = new pg.Client({ connectionString: (cluster as PgCluster).url });
        await c.connect();
        try {
          const count = async (sql: string) => Number((await c.query<{ n: string }>(sql)).rows[0]?.n);
          expect(await count('SELECT count(*) AS n FROM mailwarden_inbox_marks')).toBe(1);
          expect(
            await count("SELECT count(*) AS n FROM mailwarden_timer_slots WHERE timer = 'sender-rules'"),
          ).toBe(1);
          expect(
            await count("SELECT count(*) AS n FROM mailwarden_action_log WHERE kind = 'move'"),
          ).toBeGreaterThan(CAP);
        } finally {
          await c.end();
        }
        expect(existsSync(join(dir, 'timers'))).toBe(false);
        // Every record is in the database, the mailbox's own too: no replica wrote the file.
        expect(fileLines()).toEqual([]);
      } else {
        expect(existsSync(join(dir, 'timers', 'default.json'))).toBe(true);
        expect(fileLines().filter((l) => l.includes('"kind":"move"')).length).toBeGreaterThan(CAP);
      }
    });

    it('a bulk_modify preview token issued by one replica is spent by another, once', async () => {
      const query = 'subject:bulkmail';
      const change = { query, add: ['STARRED'], maxMessages: 1_000 };
      const starred = () =>
        sandbox
          .mailbox(USER)
          .messages.filter((m) => m.labelIds.includes('STARRED'))
          .map((m) => m.id);
      expect(starred()).toEqual([]);
      // The tests above spent the sandbox's per-minute Gmail quota: a minute passes on its clock.
      (sandbox.clock as OffsetClock).advance(60_000);
      // Each client talks to one replica directly: the dry run, the write and the replay each
      // reach a different process.
      const [a, b, c] = (await Promise.all(replicas.map((r) => client('v2-2026-07-28', r.url)))) as [
        AnyClient,
        AnyClient,
        AnyClient,
      ];
      try {
        const dry = await a.call('bulk_modify', { ...change, dryRun: true });
        expect(dry.isError, dry.text).toBe(false);
        expect(dry.structured?.['toWrite']).toBe(BULK);
        const token = dry.structured?.['previewToken'];
        expect(token).toMatch(/^pv_/);
        // Mail matching the query arrives after the dry run: the token pins what was shown.
        const late = sandbox.deliver(
          USER,
          [
            'From: Bulk late <bulk@late.example>',
            `To: ${USER}`,
            'Subject: bulkmail late',
            'Message-ID: <late@late.example>',
            'Content-Type: text/plain; charset=utf-8',
            '',
            'late',
            '',
          ].join('\r\n'),
          ['INBOX'],
        );
        const write = await b.call('bulk_modify', { ...change, previewToken: token });
        expect(write.isError, write.text).toBe(false);
        expect(write.structured).toMatchObject({
          pinned: BULK,
          newMatches: 1,
          toWrite: BULK,
          submitted: BULK,
        });
        const pinned = Array.from({ length: BULK }, (_, i) => {
          const id = sandbox.threadIdForKey(USER, `b${i}`);
          return sandbox.mailbox(USER).messages.find((m) => m.threadId === id)?.id;
        });
        expect(starred().sort()).toEqual([...pinned].sort());
        expect(starred()).not.toContain(late.id);

        const replay = await c.call('bulk_modify', { ...change, previewToken: token });
        expect(replay.isError).toBe(true);
        expect(replay.error).toMatchObject({ code: 'invalid_input' });
        expect(replay.text).toMatch(/previewToken: already used/);
        expect(starred()).toHaveLength(BULK);
      } finally {
        await Promise.all([a.close(), b.close(), c.close()]);
      }
      // Where the token was kept: the database's table, or a file under the shared state dir.
      if (backend === 'postgres') {
        const db = new pg.Client({ connectionString: (cluster as PgCluster).url });
        await db.connect();
        try {
          const rows = (await db.query<{ used: boolean }>('SELECT used FROM mailwarden_preview_tokens')).rows;
          expect(rows).toEqual([{ used: true }]);
        } finally {
          await db.end();
        }
        expect(existsSync(join(dir, 'previews'))).toBe(false);
      } else {
        expect(readdirSync(join(dir, 'previews', 'default')).filter((f) => f.endsWith('.used'))).toHaveLength(
          1,
        );
      }
    });
  },
);
