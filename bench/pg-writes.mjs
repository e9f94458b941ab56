// node bench/pg-writes.mjs (after npm run build): what the PostgreSQL state backend adds to each
// write against the files, measured in one process through the real write policy: createGate
// (src/policy/gate.ts) with filePolicyStore (action log + lock dir + move-count marker in a temp
// dir) or pgPolicyStore (a throwaway PostgreSQL 15 cluster started by src/sandbox/postgres.ts, the
// one the tests start, here with fsync on like a production server). Each call is gate.run over a batch of inbox messages with an agent archive
// and a daily cap set, so every call takes the account's write lock, counts the day's moves,
// judges each item, appends the intent records, "writes" (a callback that reports every item
// moved, no mailbox) and appends the outcome records. Batches of 1, 50 and 1,000 items; each rep
// times both backends back to back, the order alternating (files first, then PostgreSQL first),
// so machine noise hits both alike. Each rep works a fresh account, so the day's count starts at 0.
// Prints JSON: ms per item (median of the reps) for each backend, and PostgreSQL / files.
// BENCH_REPS (default 7) reps; BENCH_ITEMS_PER_REP (default 200) items per timing at each batch
// size (a batch of 1 is timed over 200 calls, of 50 over 4 calls, of 1,000 over one call).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionLog } from '../dist/policy/action-log.js';
import { createGate, filePolicyStore } from '../dist/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../dist/policy/write-policy.js';
import { startPostgres } from '../dist/sandbox/postgres.js';
import { openStateDb, pgPolicyStore } from '../dist/store/pg/index.js';
import { machine, median, round } from './lib.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 7);
const PER_REP = Number(process.env.BENCH_ITEMS_PER_REP ?? 200);
const BATCHES = [1, 50, 1000];
const TZ = 'UTC';

// The cluster flushes to disk as a production server does (BENCH_PG_FSYNC=off: as the tests run it).
const DURABLE = process.env.BENCH_PG_FSYNC !== 'off';
const cluster = await startPostgres({ durable: DURABLE });
const dir = mkdtempSync(join(tmpdir(), 'mailwarden-bench-pg-writes-'));
let db;
try {
  db = await openStateDb(cluster.url);
  const stores = {
    files: filePolicyStore({ MAILWARDEN_CONFIG_DIR: dir }, new ActionLog(join(dir, 'action-log.jsonl'))),
    postgres: pgPolicyStore(db),
  };
  const server = (await db.pool.query('SHOW server_version')).rows[0].server_version;
  const policyFor = (account) =>
    effectivePolicy(
      {
        ...parsePolicy({ default: { dailyMoveCap: 10_000_000, protectCorrespondents: false } }),
        path: '/nonexistent/policy.json',
      },
      account,
    );
  const intent = { tool: 'archive', action: 'archive', actor: 'agent' };
  const moved = async (allowed) => allowed.map((i) => ({ id: i.id, outcome: 'moved' }));
  const items = (prefix, n) =>
    Array.from({ length: n }, (_, i) => ({
      id: `${prefix}-${i}`,
      kind: 'message',
      messageCount: 1,
      sender: `news${i % 17}@shop.example`,
      senderHeader: `Shop <news${i % 17}@shop.example>`,
      subject: `offer ${i}`,
      labelIds: ['INBOX', 'UNREAD'],
    }));

  let accounts = 0;
  /** ms per item for `calls` gate runs of `size` items each on a fresh account. */
  async function time(backend, size, calls) {
    const account = `bench${++accounts}`;
    const gate = createGate({ policy: policyFor(account), store: stores[backend], timeZone: TZ });
    const t = performance.now();
    for (let c = 0; c < calls; c++) {
      const run = await gate.run(items(`${account}-${c}`, size), intent, moved);
      if (run.results.some((r) => r.outcome !== 'moved')) throw new Error(`${backend}: not every item moved`);
    }
    return (performance.now() - t) / (calls * size);
  }

  // One untimed round of each, so both have loaded their code and opened their files and connections.
  for (const backend of ['files', 'postgres']) await time(backend, 10, 2);

  const batches = [];
  for (const size of BATCHES) {
    const calls = Math.max(1, Math.round(PER_REP / size));
    const ms = { files: [], postgres: [] };
    for (let rep = 0; rep < REPS; rep++) {
      const order = rep % 2 === 0 ? ['files', 'postgres'] : ['postgres', 'files'];
      for (const backend of order) ms[backend].push(await time(backend, size, calls));
    }
    const files = median(ms.files);
    const postgres = median(ms.postgres);
    batches.push({
      items: size,
      callsPerTiming: calls,
      files: { msPerItemMedian: round(files, 3), msPerItem: ms.files.map((x) => round(x, 3)) },
      postgres: { msPerItemMedian: round(postgres, 3), msPerItem: ms.postgres.map((x) => round(x, 3)) },
      ratio: round(postgres / files, 2),
    });
  }
  const logRows = (await db.pool.query('SELECT count(*)::int AS n FROM mailwarden_action_log')).rows[0].n;
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machine(),
        postgres: `PostgreSQL ${server}, throwaway cluster on 127.0.0.1 (TCP), fsync ${DURABLE ? 'on' : 'off'}`,
        reps: REPS,
        itemsPerTiming: PER_REP,
        batches,
        recordsWrittenPerBackend: logRows,
      },
      null,
      2,
    ),
  );
} finally {
  await db?.close();
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
}
