import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NOW, DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { COLLEAGUES } from '../../src/sandbox/corpus/people.js';
import { sandboxConfigDir } from '../../src/sandbox/client-config.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { envelopeOf } from '../helpers/envelope.js';
import type { Envelope } from '../helpers/envelope.js';
import { MAIN } from '../helpers/stack.js';
import { removeAfterFile } from '../helpers/temp.js';

/*
 * A filter that keeps mail out of the inbox is a standing move (issue 22, item 1): under the
 * guarded defaults (inboxOnlyMoves, protectCorrespondents) a person confirms it through
 * elicitation whatever MAILWARDEN_CONFIRM says; a client that cannot ask is refused, naming the
 * rule; its criteria.from may not cover a protected correspondent; the action log keeps its
 * criteria and action on creation and deletion. Gmail only: the IMAP provider has no filters.
 */

interface Conn {
  configDir: string;
  asked: string[];
  answers: Array<{ action: 'accept' | 'decline'; content?: Record<string, boolean> }>;
  call(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; structured: Record<string, unknown>; text: string; error?: Envelope }>;
  close(): Promise<void>;
}

let sandbox: Sandbox;

async function connect(elicit: boolean, confirm: string): Promise<Conn> {
  const configDir = removeAfterFile(sandboxConfigDir(sandbox, DEMO_ADDRESS, 'mailwarden-standing-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: configDir,
      MAILWARDEN_CONFIG_DIR: configDir,
      MAILWARDEN_SANDBOX_URL: sandbox.url,
      MAILWARDEN_TOOLS: 'read,manage,filters',
      MAILWARDEN_CONFIRM: confirm,
      MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
      TZ: 'UTC',
    },
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'standing-test', version: '0' },
    { capabilities: elicit ? { elicitation: {} } : {}, versionNegotiation: { mode: 'legacy' } },
  );
  const conn: Conn = {
    configDir,
    asked: [],
    answers: [],
    async call(name, args) {
      const r = await client.callTool({ name, arguments: args });
      const text = ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        text,
        ...(r.isError === true ? { error: envelopeOf(text) } : {}),
      };
    },
    close: () => client.close(),
  };
  if (elicit)
    client.setRequestHandler('elicitation/create', (request) => {
      conn.asked.push((request.params as { message: string }).message);
      return Promise.resolve(conn.answers.shift() ?? { action: 'decline' });
    });
  await client.connect(transport);
  return conn;
}

const creates = () => sandbox.stats().byMethod['settings.filters.create']?.requests ?? 0;
const YES = { action: 'accept' as const, content: { confirm: true } };

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('a filter that keeps mail out of the inbox', () => {
  let mute: Conn;
  let human: Conn;
  beforeAll(async () => {
    mute = await connect(false, 'ask');
    human = await connect(true, 'off');
  });
  afterAll(async () => {
    await mute?.close();
    await human?.close();
  });

  it('is refused, naming the rule, when the client cannot ask a person (MAILWARDEN_CONFIRM=ask)', async () => {
    const before = creates();
    for (const action of [{ removeLabels: ['INBOX'] }, { addLabels: ['TRASH'] }, { addLabels: ['Trash'] }]) {
      const r = await mute.call('create_filter', { criteria: { from: 'news@stranger.example' }, ...action });
      expect(r.isError, r.text).toBe(true);
      expect(r.error?.code).toBe('forbidden_operation');
      expect(r.text).toMatch(/standing-move/);
    }
    expect(creates()).toBe(before);
    // A filter that only labels is no standing move: it goes on as before, unconfirmed.
    const label = await mute.call('create_filter', {
      criteria: { from: 'news@stranger.example' },
      addLabels: ['Receipts'],
    });
    expect(label.isError, label.text).toBe(false);
    expect(label.structured['confirmation']).toBe('unavailable');
  });

  it('asks a person even with MAILWARDEN_CONFIRM=off, and a "no" creates nothing', async () => {
    const before = creates();
    human.asked.length = 0;
    human.answers.push({ action: 'decline' });
    const no = await human.call('create_filter', {
      criteria: { from: 'promo@stranger.example' },
      removeLabels: ['INBOX'],
    });
    expect(no.isError).toBe(true);
    expect(no.error?.code).toBe('declined_by_user');
    expect(human.asked).toHaveLength(1);
    expect(creates()).toBe(before);
    human.answers.push(YES);
    const yes = await human.call('create_filter', {
      criteria: { from: 'promo@stranger.example' },
      removeLabels: ['INBOX'],
    });
    expect(yes.isError, yes.text).toBe(false);
    expect(yes.structured['confirmation']).toBe('confirmed');
    expect(human.asked).toHaveLength(2);
    expect(creates()).toBe(before + 1);
  });

  it('never covers a protected correspondent, by address or domain, and must name its senders', async () => {
    const before = creates();
    human.asked.length = 0;
    const domain = COLLEAGUES.priya.email.split('@')[1] as string;
    for (const criteria of [
      { from: COLLEAGUES.priya.email },
      { from: COLLEAGUES.priya.email.toUpperCase() },
      { from: `someone@else.example OR ${domain}` },
      { from: domain },
      { subject: 'invoice' },
      { from: 'priya' },
    ]) {
      const r = await human.call('create_filter', { criteria, removeLabels: ['INBOX'] });
      expect(r.isError, JSON.stringify(criteria)).toBe(true);
      expect(r.error?.code).toBe('forbidden_operation');
      expect(r.text).toMatch(/standing-move/);
    }
    expect(human.asked).toHaveLength(0);
    expect(creates()).toBe(before);
  });

  it('the action log keeps the criteria and action of its creation and deletion', async () => {
    human.answers.push(YES);
    const made = await human.call('create_filter', {
      criteria: { from: 'digest@stranger.example' },
      addLabels: ['TRASH'],
    });
    expect(made.isError, made.text).toBe(false);
    const id = (made.structured['filter'] as { id: string }).id;
    const gone = await human.call('delete_filter', { filterId: id });
    expect(gone.isError, gone.text).toBe(false);
    const lines = readFileSync(join(human.configDir, 'action-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { op?: string; outcome: string; detail?: Record<string, unknown> });
    const mine = (op: string) =>
      lines.find((l) => l.op === op && l.outcome === 'ok' && l.detail?.['filterId'] === id);
    const created = mine('createFilter');
    const deleted = mine('deleteFilter');
    expect(created?.detail).toMatchObject({
      criteria: { from: 'digest@stranger.example' },
      action: { addLabelIds: ['TRASH'] },
      filterId: id,
    });
    expect(deleted?.detail).toMatchObject({
      filterId: id,
      criteria: { from: 'digest@stranger.example' },
      action: { addLabelIds: ['TRASH'] },
    });
  });
});
