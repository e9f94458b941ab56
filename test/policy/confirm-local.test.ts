import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../src/mail/clock.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { ActionLog } from '../../src/policy/action-log.js';
import type { ConfirmMode } from '../../src/policy/confirm.js';
import type { Mailbox } from '../../src/providers/mailbox.js';
import { confirmChange, defineTool } from '../../src/tools/common/define.js';
import { envelopeOf } from '../helpers/envelope.js';
import { tempDir } from '../helpers/temp.js';

/**
 * ctx.confirm as other tools use it (unsubscribe, large bulk changes), through the real MCP
 * plumbing in process: a client with elicitation, probe tools, a stub mailbox.
 */

const writes: string[] = [];
const stubMailbox = new Proxy({} as Mailbox, {
  get(_t, prop) {
    if (prop === 'account') return 'probe';
    if (prop === 'provider') return 'gmail';
    if (prop === 'capabilities') return { history: true, filters: true, organisation: 'labels' };
    if (prop === 'then') return undefined;
    return (...args: unknown[]) => {
      writes.push(String(prop));
      return Promise.resolve({ id: 'Label_1', name: String(args[0]), type: 'user' });
    };
  },
});

const probe = defineTool({
  name: 'probe_confirm',
  title: 'Probe',
  tier: 'manage',
  access: 'write',
  description: 'test tool',
  input: z.strictObject({ n: z.number() }),
  output: z.object({ outcome: z.string() }),
  async handle(ctx, args) {
    const outcome = await confirmChange(ctx, {
      message: 'Trash 3 threads?\u200B\u202E',
      details: { count: args.n, sender: 'news@x.example' },
    });
    await ctx.mailbox.trashThread('t1');
    return { outcome };
  },
});

const writesFirst = defineTool({
  name: 'probe_write_first',
  title: 'Probe',
  tier: 'manage',
  access: 'write',
  description: 'test tool',
  input: z.strictObject({}),
  output: z.object({ outcome: z.string() }),
  async handle(ctx) {
    await ctx.mailbox.createLabel({ name: 'x' });
    return { outcome: await confirmChange(ctx, { message: 'Too late?' }) };
  },
});

const asksTwice = defineTool({
  name: 'probe_asks_twice',
  title: 'Probe',
  tier: 'manage',
  access: 'write',
  description: 'test tool',
  input: z.strictObject({}),
  output: z.object({ outcome: z.string() }),
  async handle(ctx) {
    await confirmChange(ctx, { message: 'First?' });
    return { outcome: await confirmChange(ctx, { message: 'Second?' }) };
  },
});

interface Setup {
  client: Client;
  asked: string[];
  logPath: string;
}
let open: Client | undefined;

async function setup(
  mode: ConfirmMode,
  answer?: { action: 'accept' | 'decline'; content?: Record<string, string | number | boolean | string[]> },
): Promise<Setup> {
  const logPath = join(tempDir('mailwarden-confirm-local-'), 'action-log.jsonl');
  const server = createMcpServer({
    tools: [probe, writesFirst, asksTwice],
    tiers: new Set(['read', 'manage']),
    confirmMode: mode,
    mailbox: () => Promise.resolve(stubMailbox),
    actionLog: new ActionLog(logPath),
    clock: systemClock,
    log: { info: () => undefined, warn: () => undefined },
    version: 'test',
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(
    { name: 'probe', version: '0' },
    answer ? { capabilities: { elicitation: {} } } : {},
  );
  const asked: string[] = [];
  if (answer) {
    client.setRequestHandler('elicitation/create', (req) => {
      asked.push((req.params as { message: string }).message);
      return Promise.resolve(answer);
    });
  }
  await client.connect(clientSide);
  open = client;
  return { client, asked, logPath };
}

async function call(s: Setup, name: string, args: Record<string, unknown>) {
  const r = await s.client.callTool({ name, arguments: args });
  // An error result has no structuredContent; its envelope is the text content.
  if (r.isError === true) {
    expect(r.structuredContent).toBeUndefined();
    const text = (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
    return { error: envelopeOf(text) };
  }
  return (r.structuredContent ?? {}) as Record<string, unknown>;
}

afterEach(async () => {
  writes.length = 0;
  await open?.close();
  open = undefined;
});

describe('ctx.confirm', () => {
  it('shows the message and details as lines, stripped of invisible characters, and goes on after a yes', async () => {
    const s = await setup('ask', { action: 'accept', content: { confirm: true } });
    expect(await call(s, 'probe_confirm', { n: 3 })).toEqual({ outcome: 'confirmed' });
    expect(s.asked).toEqual(['Trash 3 threads?\ncount: 3\nsender: news@x.example']);
    expect(writes).toEqual(['trashThread']);
  });

  it('a no stops the tool before its write', async () => {
    const s = await setup('ask', { action: 'decline' });
    const out = await call(s, 'probe_confirm', { n: 1 });
    expect(out['error']).toMatchObject({ code: 'declined_by_user' });
    expect(writes).toEqual([]);
    const log = readFileSync(s.logPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(log).toMatchObject([
      {
        account: 'probe',
        tool: 'probe_confirm',
        op: 'confirm',
        outcome: 'failed',
        error: 'declined_by_user',
      },
    ]);
  });

  it('require with a client that cannot elicit refuses; ask proceeds and says so; off does not ask', async () => {
    const strict = await setup('require');
    expect((await call(strict, 'probe_confirm', { n: 1 }))['error']).toMatchObject({
      code: 'forbidden_operation',
    });
    expect(writes).toEqual([]);
    await strict.client.close();
    const ask = await setup('ask');
    expect(await call(ask, 'probe_confirm', { n: 1 })).toEqual({ outcome: 'unavailable' });
    await ask.client.close();
    const off = await setup('off', { action: 'decline' });
    expect(await call(off, 'probe_confirm', { n: 1 })).toEqual({ outcome: 'not_required' });
    expect(off.asked).toEqual([]);
  });

  it('one question per call: a second one is a bug (a 2026-07-28 retry carries one answer)', async () => {
    const s = await setup('ask', { action: 'accept', content: { confirm: true } });
    expect((await call(s, 'probe_asks_twice', {}))['error']).toMatchObject({ code: 'internal_error' });
    expect(s.asked).toEqual(['First?']);
  });

  it('asking after a write is a bug the plumbing reports', async () => {
    const s = await setup('ask', { action: 'accept', content: { confirm: true } });
    const out = await call(s, 'probe_write_first', {});
    expect(out['error']).toMatchObject({ code: 'internal_error' });
    expect(s.asked).toEqual([]);
  });
});
