import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { MAIN, startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';

/* `mailwarden sweep` for cron, and MAILWARDEN_AUTO_SWEEP, against the sandbox over loopback. */

const TZ = 'Europe/Berlin';
let sandbox: Sandbox;
let stack: Stack;
let auto: Stack | undefined;
let x = '';
let y = '';
let z = '';

const view = () => sandbox.mailbox(DEMO_ADDRESS);
const labelsOf = (threadId: string) =>
  view()
    .messages.filter((m) => m.threadId === threadId)
    .map((m) => m.labelIds);
const inInbox = (threadId: string) => labelsOf(threadId).every((l) => l.includes('INBOX'));

/** The CLI as cron would run it: async, because the sandbox answering it lives in this process. */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: stack.configDir,
        MAILWARDEN_CONFIG_DIR: stack.configDir,
        MAILWARDEN_SANDBOX_URL: sandbox.url,
        TZ,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

interface Sweep {
  dryRun: boolean;
  dueThreads: string[];
  returned: string[];
  pending: string[];
  ok: boolean;
}
interface Summary {
  ok: boolean;
  accounts: Array<{ account: string; report: Sweep }>;
}

/** The one account's report, after checking the summary has exactly that account. */
function reportOf(stdout: string, ok: boolean): Sweep {
  const summary = JSON.parse(stdout) as Summary;
  expect(summary.ok).toBe(ok);
  expect(summary.accounts.map((a) => a.account)).toEqual(['default']);
  return (summary.accounts[0] as { report: Sweep }).report;
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
  const v = view();
  const inbox = v.threads.filter((th) =>
    v.messages.some((m) => m.threadId === th.id && m.labelIds.includes('INBOX')),
  );
  [x, y, z] = inbox.slice(0, 3).map((th) => th.id) as [string, string, string];
  stack = await startStack({ existingSandbox: sandbox, env: { TZ, MAILWARDEN_NOW: '2026-06-15T08:00:00Z' } });
  expect((await stack.call('snooze', { threadIds: [x, y], until: '2026-06-16' })).isError).toBe(false);
  expect((await stack.call('snooze', { threadId: z, until: '2026-06-30 9am' })).isError).toBe(false);
});

afterAll(async () => {
  await auto?.close();
  await stack?.close();
  await sandbox?.close();
});

describe('mailwarden sweep', () => {
  const NOW = { MAILWARDEN_NOW: '2026-06-17T06:00:00Z' };

  it('--dry-run prints what is due and changes nothing', async () => {
    const before = view();
    const r = await cli(['sweep', '--dry-run'], NOW);
    expect(r.code, r.err).toBe(0);
    const out = reportOf(r.out, true);
    expect(out.dryRun).toBe(true);
    expect(new Set(out.dueThreads)).toEqual(new Set([x, y]));
    expect(view()).toEqual(before);
  });

  it('exits 1 when a batch fails, leaving the threads snoozed', async () => {
    sandbox.faults.script([{ method: 'messages.batchModify', kind: 'http503', retryAfterSeconds: 0 }]);
    try {
      const r = await cli(['sweep'], NOW);
      expect(r.code, r.err).toBe(1);
      const out = reportOf(r.out, false);
      expect(out.ok).toBe(false);
      expect(new Set(out.pending)).toEqual(new Set([x, y]));
    } finally {
      sandbox.faults.clear();
    }
    expect(inInbox(x) || inInbox(y)).toBe(false);
  });

  it('exits 0 and prints the summary when every batch lands', async () => {
    const r = await cli(['sweep'], NOW);
    expect(r.code, r.err).toBe(0);
    const out = reportOf(r.out, true);
    expect(out).toMatchObject({ dryRun: false, ok: true, pending: [] });
    expect(new Set(out.returned)).toEqual(new Set([x, y]));
    expect(inInbox(x) && inInbox(y)).toBe(true);
    expect(inInbox(z)).toBe(false);
    // The writes went through the policy layer: the action log names the CLI.
    const log = readFileSync(join(stack.configDir, 'action-log.jsonl'), 'utf8');
    expect(log).toMatch(/"tool":"cli sweep","op":"modifyMessages".*"outcome":"ok"/);
  });

  it('refuses to write when the server is read-only', async () => {
    const r = await cli(['sweep'], { ...NOW, MAILWARDEN_READONLY: '1' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('forbidden_operation');
  });

  it('refuses a MAILWARDEN_NOW that is not an instant with a zone', async () => {
    const r = await cli(['sweep', '--dry-run'], { MAILWARDEN_NOW: '2026-06-17 08:00' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('MAILWARDEN_NOW');
  });
});

describe('MAILWARDEN_AUTO_SWEEP=1', () => {
  it('sweeps when the server starts', async () => {
    auto = await startStack({
      existingSandbox: sandbox,
      env: { TZ, MAILWARDEN_NOW: '2026-07-01T06:00:00Z', MAILWARDEN_AUTO_SWEEP: '1' },
    });
    const deadline = Date.now() + 15_000;
    while (!inInbox(z) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(inInbox(z)).toBe(true);
    for (const labels of labelsOf(z)) expect(labels).toContain('UNREAD');
    while (!auto.stderr().includes('auto-sweep done') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(auto.stderr()).toContain('"returned":1');
    // The server still answers while the timer waits for the next hour.
    expect((await auto.call('list_snoozed')).structured).toMatchObject({ total: 0 });
  });
});
