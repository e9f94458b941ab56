import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { MAIN, RELAXED_POLICY } from '../helpers/stack.js';

/*
 * `mailwarden accounts add --imap` prepares policy.json's agentLabel on the login that proves the
 * password (src/cli/accounts-imap.ts): on Bridge the label is the folder Labels/NAME, so the
 * agent's first archive sends no CREATE. Nothing is created for a read-only account, with
 * agentLabel null, or where the label is a keyword (full Dovecot); a CREATE that fails leaves
 * the account saved and says so; a folder deleted later is created again by the next archive.
 */

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function addAccount(b: Backend, more: string[] = []): Promise<Run> {
  const imap = b.imap as NonNullable<Backend['imap']>;
  const where =
    b.kind === 'bridge'
      ? ['--port', String(imap.settings.port), '--starttls']
      : ['--port', String(imap.settings.port), '--tls'];
  const args = ['accounts', 'add', imap.account, '--imap', '--host', imap.settings.host, ...where];
  const child = spawn(
    process.execPath,
    [MAIN, ...args, '--user', imap.settings.user, '--password-stdin', ...more],
    { env: { PATH: process.env['PATH'] ?? '', ...b.env }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(`${imap.server.password}\n`);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

async function folders(b: Backend): Promise<string[]> {
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  return (await server.doveadm(['mailbox', 'list', '-u', server.user])).split('\n').filter(Boolean);
}

async function deleteLabelFolder(b: Backend): Promise<void> {
  const server = (b.imap as NonNullable<Backend['imap']>).server;
  if ((await folders(b)).includes('Labels/mailwarden'))
    await server.doveadm(['mailbox', 'delete', '-u', server.user, 'Labels/mailwarden']);
}

const creates = (commands: string[]): string[] => commands.filter((c) => /^CREATE /i.test(c));
/** Inbox threads of one message, as the agent's archive names them. */
async function singles(b: Backend): Promise<string[]> {
  const r = await b.call('search', { query: 'in:inbox', maxResults: 50 });
  const threads = r.structured['threads'] as Array<{ threadId: string; messageCount: number }>;
  return threads.filter((t) => t.messageCount === 1).map((t) => t.threadId);
}

describe('accounts add on the Bridge-like profile', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('creates Labels/mailwarden, so the first archive sends no CREATE; deleted later, an archive creates it again', async () => {
    const from = b.commands().length;
    const added = await addAccount(b);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out).toContain("Created the folder Labels/mailwarden for policy.json's agentLabel");
    expect(creates(b.commands().slice(from))).toEqual(['CREATE Labels/mailwarden']);
    expect(await folders(b)).toContain('Labels/mailwarden');

    // Added again (a new password, say): the folder is there, nothing is created.
    const again = b.commands().length;
    const readded = await addAccount(b);
    expect(readded.code).toBe(0);
    expect(readded.out).toContain('The folder Labels/mailwarden');
    expect(creates(b.commands().slice(again))).toEqual([]);

    const [first, second] = await singles(b);
    const archiveFrom = b.commands().length;
    const archived = await b.call('archive', { threadId: first as string });
    expect(archived.isError, archived.text).toBe(false);
    expect(archived.structured['changed']).toHaveLength(1);
    expect(creates(b.commands().slice(archiveFrom))).toEqual([]);
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    const filed = async () =>
      (await server.doveadm(['search', '-u', server.user, 'mailbox', 'Labels/mailwarden', 'all']))
        .split('\n')
        .filter(Boolean).length;
    expect(await filed()).toBe(1);

    // The person deletes the folder; the next agent (a fresh process) creates it again.
    await deleteLabelFolder(b);
    const other = await b.another();
    try {
      const laterFrom = b.commands().length;
      const later = await other.call('archive', { threadId: second as string });
      expect(later.isError, later.text).toBe(false);
      expect(later.structured['changed']).toHaveLength(1);
      expect(creates(b.commands().slice(laterFrom))).toEqual(['CREATE Labels/mailwarden']);
      expect(await filed()).toBe(1);
    } finally {
      await other.close();
    }
  }, 120_000);

  it('creates nothing for a read-only account or with agentLabel null', async () => {
    await deleteLabelFolder(b);
    const from = b.commands().length;
    const readOnly = await addAccount(b, ['--tiers', 'read']);
    expect(readOnly.code).toBe(0);
    expect(readOnly.out).not.toMatch(/agentLabel/);
    writeFileSync(
      join(b.configDir, 'policy.json'),
      JSON.stringify({ default: { ...RELAXED_POLICY.default, agentLabel: null } }),
    );
    try {
      const unlabelled = await addAccount(b, ['--tiers', 'read,manage']);
      expect(unlabelled.code).toBe(0);
      expect(unlabelled.out).not.toMatch(/agentLabel/);
    } finally {
      writeFileSync(join(b.configDir, 'policy.json'), JSON.stringify(RELAXED_POLICY));
    }
    expect(creates(b.commands().slice(from))).toEqual([]);
    expect(await folders(b)).not.toContain('Labels/mailwarden');
  }, 60_000);

  it('a CREATE that fails leaves the account saved and says so', async () => {
    await deleteLabelFolder(b);
    const front = (b.imap as NonNullable<Backend['imap']>).proxy;
    front?.setFaults([{ kind: 'drop', after: 'before', when: /CREATE Labels\/mailwarden/ }]);
    try {
      const added = await addAccount(b);
      expect(added.code).toBe(0);
      expect(added.err).toMatch(/^The account is saved, but the agent label's folder was not prepared \(/m);
      expect(added.err).toContain("the agent's first move out of the inbox creates it");
      expect(added.out).toMatch(/^Saved /m);
    } finally {
      front?.setFaults([]);
    }
    expect(await folders(b)).not.toContain('Labels/mailwarden');
  }, 60_000);
});

describe('accounts add on full Dovecot', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('full');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('creates no folder: the agent label is a keyword there', async () => {
    const before = await folders(b);
    const added = await addAccount(b);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out).not.toMatch(/agentLabel/);
    expect(await folders(b)).toEqual(before);
  }, 60_000);
});
