import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mail/fence-format.js';
import { DEFAULT_NOW, DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { MoveCounts } from '../../src/policy/move-counts.js';
import { FOLDERS } from '../../src/sandbox/imap/dovecot-config.js';
import { appendMessage } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import {
  appendRecord,
  closeStateBackends,
  logRecords,
  moveRecords,
  stateEnv,
  withStates,
} from '../helpers/state-backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { MAIN } from '../helpers/stack.js';

/*
 * Sender rules applied by the server, on every provider: the rule sweep (here through
 * `mailwarden sweep-rules`, a second process on the same config dir, and through a server's own
 * sweep at start), judged by the write policy like any move, and counted by count_moves.
 */

/** The server under test does not sweep on its own (0), so each sweep below is one the test ran. */
const POLICY = {
  default: {
    dailyMoveCap: 1,
    senderRules: { archive: ['rules.example'], spam: ['offers@junk.example'] },
    sweepRulesEveryMinutes: 0,
  },
};

/** Where a message is now, read from the mailbox itself (sandbox state / doveadm). */
async function whereIs(b: Backend, mail: Delivered): Promise<'INBOX' | 'Archive' | 'Spam' | 'elsewhere'> {
  if (b.gmail) {
    const m = b.gmail.sandbox.mailbox(DEMO_ADDRESS).messages.find((x) => x.id === mail.id);
    if (m === undefined) return 'elsewhere';
    if (m.labelIds.includes('INBOX')) return 'INBOX';
    if (m.labelIds.includes('SPAM')) return 'Spam';
    return m.labelIds.includes('TRASH') ? 'elsewhere' : 'Archive';
  }
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  const out = await server.doveadm(['fetch', '-u', server.user, 'mailbox hdr.message-id', 'all']);
  const folders = new Set<string>();
  let mailbox = '';
  for (const line of out.split('\n')) {
    const m = /^mailbox: (.*)$/.exec(line);
    if (m) mailbox = m[1] ?? '';
    if (line.includes(mail.messageId) && !/^(All Mail|Starred|Labels\/)/.test(mailbox)) folders.add(mailbox);
  }
  const layout = FOLDERS[b.kind as 'full' | 'bridge'];
  if (folders.size !== 1) return 'elsewhere';
  const [only] = [...folders];
  return only === 'INBOX'
    ? 'INBOX'
    : only === layout.archive
      ? 'Archive'
      : only === layout.junk
        ? 'Spam'
        : 'elsewhere';
}

interface Delivered {
  /** The provider's thread id (the report names messages by it too). */
  threadId: string;
  /** Gmail: the message id. */
  id?: string;
  messageId: string;
}

async function deliver(
  b: Backend,
  name: string,
  from: string,
  folder: 'INBOX' | 'SENT' = 'INBOX',
): Promise<Delivered> {
  const messageId = `rules-${name}-${b.kind}@example.org`;
  const raw = [
    folder === 'SENT' ? `From: ${DEMO_ADDRESS}` : `From: ${from}`,
    `To: ${folder === 'SENT' ? from : DEMO_ADDRESS}`,
    `Subject: Sender rules: ${name}`,
    `Message-ID: <${messageId}>`,
    'Date: Sun, 29 Nov 2026 08:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello.',
    '',
  ].join('\r\n');
  if (b.gmail) {
    const labels = folder === 'SENT' ? ['SENT'] : ['INBOX', 'UNREAD'];
    const d = b.gmail.sandbox.deliver(DEMO_ADDRESS, raw, labels);
    return { ...d, messageId };
  }
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  await appendMessage(server, folder === 'SENT' ? 'Sent' : 'INBOX', raw, {
    internalDate: DEFAULT_NOW - 86_400_000,
  });
  return { threadId: `t${Buffer.from(messageId).toString('base64url')}`, messageId };
}

/** The environment a second process on the same mailbox and config dir needs. */
function cliEnv(b: Backend): Record<string, string> {
  const base = {
    PATH: process.env['PATH'] ?? '',
    HOME: b.configDir,
    MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
    TZ: 'UTC',
  };
  // On a state database the accounts' secrets are there, sealed with the server's passphrase.
  const state =
    b.env['MAILWARDEN_STATE'] === undefined
      ? {}
      : {
          MAILWARDEN_STATE: b.env['MAILWARDEN_STATE'],
          MAILWARDEN_TOKEN_PASSPHRASE: b.env['MAILWARDEN_TOKEN_PASSPHRASE'] ?? '',
        };
  if (b.gmail)
    return {
      ...base,
      ...state,
      MAILWARDEN_CONFIG_DIR: b.configDir,
      MAILWARDEN_SANDBOX_URL: b.gmail.sandbox.url,
    };
  return { ...(b.imap as NonNullable<Backend['imap']>).env, ...base, ...state };
}

/** `mailwarden sweep-rules`, run as cron would; async, since the Gmail sandbox runs in this process. */
function sweepRules(
  b: Backend,
  args: string[],
  env: Record<string, string> = cliEnv(b),
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'sweep-rules', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

interface ReportLine {
  id: string;
  threadId: string;
  sender: string;
  action: string;
  rule: string;
  outcome: string;
  refusedBy?: string;
}
interface Summary {
  ok: boolean;
  dryRun: boolean;
  accounts: Array<{
    account: string;
    report?: { messages: ReportLine[]; counts: Record<string, number>; ok: boolean };
    error?: { code: string; message: string };
  }>;
}

afterAll(closeStateBackends);

describe.each(withStates(['gmail', 'full', 'bridge'] as BackendKind[]))(
  'sender rules on %s, state in %s',
  (kind, state) => {
    let b: Backend;
    const mail: Record<string, Delivered> = {};

    beforeAll(async () => {
      b = await startBackend(kind, { policy: POLICY, env: await stateEnv(state) });
      // Someone the owner has written to, at a domain a rule covers.
      await deliver(b, 'to-friend', 'friend@rules.example', 'SENT');
      mail['subdomain'] = await deliver(b, 'subdomain', 'News <news@mail.rules.example>');
      mail['domain'] = await deliver(b, 'domain', 'info@rules.example');
      mail['address'] = await deliver(b, 'address', 'Offers <OFFERS@junk.example>');
      mail['lookalike'] = await deliver(b, 'lookalike', 'news@badrules.example');
      mail['sameDomain'] = await deliver(b, 'same-domain', 'other@junk.example');
      mail['friend'] = await deliver(b, 'friend', 'Friend <friend@rules.example>');
    }, 120_000);
    afterAll(async () => {
      await b?.close();
    });

    const byThread = (lines: ReportLine[], key: string) =>
      lines.filter((l) => l.threadId === (mail[key] as Delivered).threadId);

    if (kind === 'gmail')
      it('sweep-rules --dry-run says what would move, moves nothing, exits 0; bad usage exits 2', async () => {
        const r = await sweepRules(b, ['--dry-run']);
        expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
        const s = JSON.parse(r.stdout) as Summary;
        expect(s.ok).toBe(true);
        expect(s.dryRun).toBe(true);
        const report = s.accounts[0]?.report;
        expect(report?.counts).toMatchObject({
          matched: 4,
          wouldMove: 3,
          refused: 1,
          moved: 0,
          failed: 0,
          unknown: 0,
        });
        expect(byThread(report?.messages ?? [], 'subdomain')).toEqual([
          expect.objectContaining({ action: 'archive', rule: 'rules.example', outcome: 'wouldMove' }),
        ]);
        for (const key of Object.keys(mail)) expect(await whereIs(b, mail[key] as Delivered)).toBe('INBOX');
        expect((await sweepRules(b, ['--bogus'])).status).toBe(2);
        expect((await sweepRules(b, ['extra'])).status).toBe(2);
      });

    it('moves what the rules cover (a subdomain, the domain, an exact address) and nothing else', async () => {
      const r = await sweepRules(b, []);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      const s = JSON.parse(r.stdout) as Summary;
      expect(s.ok).toBe(true);
      const report = s.accounts[0]?.report;
      expect(report?.counts).toMatchObject({
        matched: 4,
        moved: 3,
        refused: 1,
        failed: 0,
        unknown: 0,
        wouldMove: 0,
      });
      const lines = report?.messages ?? [];
      expect(byThread(lines, 'subdomain')).toEqual([
        expect.objectContaining({ action: 'archive', rule: 'rules.example', outcome: 'moved' }),
      ]);
      expect(byThread(lines, 'domain')).toEqual([
        expect.objectContaining({ action: 'archive', rule: 'rules.example', outcome: 'moved' }),
      ]);
      expect(byThread(lines, 'address')).toEqual([
        expect.objectContaining({ action: 'spam', rule: 'offers@junk.example', outcome: 'moved' }),
      ]);
      expect(byThread(lines, 'lookalike')).toEqual([]);
      expect(byThread(lines, 'sameDomain')).toEqual([]);
      // The mailbox says the same.
      expect(await whereIs(b, mail['subdomain'] as Delivered)).toBe('Archive');
      expect(await whereIs(b, mail['domain'] as Delivered)).toBe('Archive');
      expect(await whereIs(b, mail['address'] as Delivered)).toBe('Spam');
      expect(await whereIs(b, mail['lookalike'] as Delivered)).toBe('INBOX');
      expect(await whereIs(b, mail['sameDomain'] as Delivered)).toBe('INBOX');
      if (b.gmail) {
        // policy.json agentLabel (default mailwarden): on what a rule archived, not on its spam move.
        const view = b.gmail.sandbox.mailbox(DEMO_ADDRESS);
        const agent = view.labels.find((l) => l.name === 'mailwarden')?.id;
        expect(agent).toBeDefined();
        const labelsOf = (d: Delivered) => view.messages.find((x) => x.id === d.id)?.labelIds ?? [];
        expect(labelsOf(mail['subdomain'] as Delivered)).toContain(agent);
        expect(labelsOf(mail['domain'] as Delivered)).toContain(agent);
        expect(labelsOf(mail['address'] as Delivered)).not.toContain(agent);
      }
    });

    it('a protected correspondent is not moved by a rule, and the refusal says which rule', async () => {
      const r = await sweepRules(b, ['--dry-run']);
      const report = (JSON.parse(r.stdout) as Summary).accounts[0]?.report;
      // Run again: only the friend is left, refused again.
      expect(report?.counts).toMatchObject({ matched: 1, wouldMove: 0, refused: 1 });
      expect(byThread(report?.messages ?? [], 'friend')).toEqual([
        expect.objectContaining({
          action: 'archive',
          rule: 'rules.example',
          outcome: 'refused',
          refusedBy: 'protected-correspondent',
        }),
      ]);
      expect(await whereIs(b, mail['friend'] as Delivered)).toBe('INBOX');
      const records = (await moveRecords(b)).filter((x) => x['actor'] === 'rule');
      expect(
        records
          .filter((x) => x['outcome'] === 'moved')
          .map((x) => x['senderRule'])
          .sort(),
      ).toEqual(['offers@junk.example', 'rules.example', 'rules.example']);
      expect(records.filter((x) => x['outcome'] === 'refused').map((x) => x['refusedBy'])).toEqual([
        'protected-correspondent',
      ]);
    });

    it('rule moves do not use the daily cap: with a cap of 1, the agent may still archive one thread', async () => {
      const first = await b.call('archive', { threadId: (mail['lookalike'] as Delivered).threadId });
      expect(first.isError, first.text).toBe(false);
      expect(first.structured['changed']).toEqual([
        expect.objectContaining({ threadId: (mail['lookalike'] as Delivered).threadId }),
      ]);
      expect(first.structured['remainingToday']).toBe(0);
      const second = await b.call('archive', { threadId: (mail['sameDomain'] as Delivered).threadId });
      expect(second.isError).toBe(true);
      expect(second.text).toMatch(/daily-cap/);
      expect(await whereIs(b, mail['lookalike'] as Delivered)).toBe('Archive');
      expect(await whereIs(b, mail['sameDomain'] as Delivered)).toBe('INBOX');
    });

    it('count_moves keeps rule and agent moves apart, exactly, and counts an unknown write as unknown', async () => {
      // A crash between a move's intent line and its outcome line: the write may have happened.
      const account = (await logRecords(b))[0]?.['account'] as string;
      await appendRecord(b, {
        time: new Date(DEFAULT_NOW).toISOString(),
        account,
        tool: 'archive',
        op: 'move',
        kind: 'move',
        action: 'trash',
        actor: 'agent',
        call: 'crashed-call',
        unit: 'thread',
        ids: ['t-crashed'],
        count: 1,
        outcome: 'pending',
      });
      const r = await b.call('count_moves', {});
      expect(r.isError, r.text).toBe(false);
      const c = r.structured as unknown as MoveCounts;
      expect(c.complete).toBe(true);
      expect(c.rule.moved.archive).toEqual({ messages: 2, threads: 0 });
      expect(c.rule.moved.spam).toEqual({ messages: 1, threads: 0 });
      expect(c.rule.messagesOutOfInbox).toBe(3);
      // Refused once: by the sweep (a dry run writes nothing to the log).
      expect(c.rule.refused).toEqual({ items: 1, byRule: { 'protected-correspondent': 1 } });
      expect(c.rule.unknown.items).toBe(0);
      expect(c.agent.moved.archive).toEqual({ messages: 0, threads: 1 });
      expect(c.agent.messagesOutOfInbox).toBe(1);
      expect(c.agent.refused).toEqual({ items: 1, byRule: { 'daily-cap': 1 } });
      expect(c.agent.unknown).toEqual({
        items: 1,
        byKind: { archive: 0, spam: 0, trash: 1, snooze: 0, restore: 0, label: 0 },
      });
      // Moved items per sender (addresses fenced as mail-derived), most first, then by address.
      const senders = c.bySender.map((x) => ({
        ...x,
        sender: unfence(x.sender ?? ''),
      }));
      expect(senders).toEqual([
        { sender: 'info@rules.example', agent: 0, rule: 1, byKind: { archive: 1 } },
        { sender: 'news@badrules.example', agent: 1, rule: 0, byKind: { archive: 1 } },
        { sender: 'news@mail.rules.example', agent: 0, rule: 1, byKind: { archive: 1 } },
        { sender: 'offers@junk.example', agent: 0, rule: 1, byKind: { spam: 1 } },
      ]);
      expect(c.senders).toBe(4);
    });

    it('list_sender_rules shows the rules and says they change only in policy.json', async () => {
      const r = await b.call('list_sender_rules', {});
      expect(r.isError, r.text).toBe(false);
      expect(r.structured).toMatchObject({
        archive: ['rules.example'],
        spam: ['offers@junk.example'],
        sweepRulesEveryMinutes: 0,
        sources: {
          senderRules: 'policy.json default section',
          sweepRulesEveryMinutes: 'policy.json default section',
        },
      });
      expect(r.structured['policyPath']).toBe(join(b.configDir, 'policy.json'));
      expect(r.structured['howToChange']).toMatch(/only by editing .*policy\.json/);
    });

    if (kind === 'gmail')
      it('a serving server applies the rules at start; a failed sweep exits 1', async () => {
        const late = await deliver(b, 'late', 'late@x.rules.example');
        expect(await whereIs(b, late)).toBe('INBOX');
        // The next server sweeps at start (and every 15 minutes).
        const { sweepRulesEveryMinutes: _, ...rest } = POLICY.default;
        writeFileSync(join(b.configDir, 'policy.json'), JSON.stringify({ default: rest }));
        const records = async () =>
          (await moveRecords(b)).filter((x) => (x['ids'] as string[]).includes(late.id as string));
        const other = await b.another();
        try {
          // Done when the move's outcome line is in the log (the intent line comes first).
          const deadline = Date.now() + 30_000;
          while ((await records()).length < 2 && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 200));
        } finally {
          await other.close();
        }
        expect((await records()).map((x) => [x['actor'], x['tool'], x['senderRule'], x['outcome']])).toEqual([
          ['rule', 'sender-rules', 'rules.example', 'pending'],
          ['rule', 'sender-rules', 'rules.example', 'moved'],
        ]);
        expect(await whereIs(b, late)).toBe('Archive');
        // A mailbox that cannot be reached: the account's error in the JSON, exit 1.
        const down = await sweepRules(b, [], { ...cliEnv(b), MAILWARDEN_SANDBOX_URL: 'http://127.0.0.1:1' });
        expect(down.status, down.stderr).toBe(1);
        const s = JSON.parse(down.stdout) as Summary;
        expect(s.ok).toBe(false);
        expect(s.accounts[0]?.error?.code).toBeDefined();
      });
  },
);
