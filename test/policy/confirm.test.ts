import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { sandboxConfigDir } from '../../src/sandbox/client-config.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { envelopeOf } from '../helpers/envelope.js';
import type { Envelope } from '../helpers/envelope.js';
import { MAIN } from '../helpers/stack.js';
import type { Protocol } from '../helpers/stack.js';
import { removeAfterFile, tempDir } from '../helpers/temp.js';

/**
 * Confirmations through MCP elicitation, with the real SDK client against the built server, in
 * both protocol revisions: 2025-11-25 (the server sends elicitation/create while the call
 * waits) and 2026-07-28 (the call answers input_required and the client retries it).
 */

type Answer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
};

interface Conn {
  client: Client;
  configDir: string;
  /** Questions the human was shown. */
  asked: Array<{ message: string; requestedSchema: unknown }>;
  /** What the human answers next (one per question). */
  answers: Answer[];
  call(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; structured: Record<string, unknown>; error?: Envelope }>;
  close(): Promise<void>;
}

async function connect(
  sandbox: Sandbox,
  protocol: Protocol,
  options: { elicit: boolean; env?: Record<string, string>; autoFulfill?: boolean },
): Promise<Conn> {
  const configDir = removeAfterFile(sandboxConfigDir(sandbox, DEMO_ADDRESS, 'mailwarden-confirm-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: configDir,
      MAILWARDEN_CONFIG_DIR: configDir,
      MAILWARDEN_SANDBOX_URL: sandbox.url,
      MAILWARDEN_TOOLS: 'read,manage,filters',
      ...options.env,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client(
    { name: 'confirm-test', version: '0' },
    {
      capabilities: options.elicit ? { elicitation: {} } : {},
      versionNegotiation: { mode: protocol === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' },
      ...(options.autoFulfill === false ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const conn: Conn = {
    client,
    configDir,
    asked: [],
    answers: [],
    async call(name, args) {
      const r = await client.callTool({ name, arguments: args });
      const text = ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        ...(r.isError === true ? { error: envelopeOf(text) } : {}),
      };
    },
    close: () => client.close(),
  };
  if (options.elicit) {
    client.setRequestHandler('elicitation/create', (request) => {
      const params = request.params as { message: string; requestedSchema: unknown };
      conn.asked.push({ message: params.message, requestedSchema: params.requestedSchema });
      return Promise.resolve(conn.answers.shift() ?? { action: 'cancel' });
    });
  }
  await client.connect(transport).catch((e: unknown) => {
    throw new Error(`could not connect: ${String(e)}\n${stderr}`);
  });
  return conn;
}

const YES: Answer = { action: 'accept', content: { confirm: true } };
let seq = 0;
/** A create_filter call with criteria no other call uses, so each test creates its own filter. */
function filterArgs(): Record<string, unknown> {
  seq += 1;
  return { criteria: { from: `sender${seq}@confirm.example` }, addLabels: [`Confirm ${seq}`] };
}

let sandbox: Sandbox;
const filterCount = async (conn: Conn) =>
  ((await conn.call('list_filters', {})).structured['filters'] as unknown[]).length;
const labelNames = () => sandbox.mailbox(DEMO_ADDRESS).labels.map((l) => l.name);

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [demoCorpus()] });
});
afterAll(async () => {
  await sandbox?.close();
});

for (const protocol of ['2025-11-25', '2026-07-28'] as const) {
  describe(`confirmations over ${protocol}`, () => {
    let human: Conn;
    beforeAll(async () => {
      human = await connect(sandbox, protocol, { elicit: true });
    });
    afterAll(async () => {
      await human?.close();
    });

    it('asks once before create_filter and creates it on accept', async () => {
      const before = await filterCount(human);
      const args = filterArgs();
      human.asked.length = 0;
      human.answers.push(YES);
      const r = await human.call('create_filter', args);
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured['confirmation']).toBe('confirmed');
      expect(human.asked).toHaveLength(1);
      expect(human.asked[0]?.message).toContain('Create a Gmail filter');
      expect(human.asked[0]?.message).toContain(
        `Matches: from:(${(args['criteria'] as { from: string }).from})`,
      );
      expect(human.asked[0]?.requestedSchema).toMatchObject({ type: 'object', required: ['confirm'] });
      expect(await filterCount(human)).toBe(before + 1);
    });

    for (const [what, answer] of [
      ['decline', { action: 'decline' }],
      ['cancel', { action: 'cancel' }],
      ['accept without the box ticked', { action: 'accept', content: { confirm: false } }],
    ] as Array<[string, Answer]>) {
      it(`${what}: declined_by_user and nothing is done`, async () => {
        const before = await filterCount(human);
        const args = filterArgs();
        human.answers.push(answer);
        const r = await human.call('create_filter', args);
        expect(r.isError).toBe(true);
        expect(r.error).toMatchObject({ code: 'declined_by_user', retryable: false });
        expect(await filterCount(human)).toBe(before);
        expect(labelNames()).not.toContain((args['addLabels'] as string[])[0]);
      });
    }

    it('every answer is in the action log', () => {
      const log = readFileSync(join(human.configDir, 'action-log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { op: string; outcome: string; tool: string });
      const confirms = log.filter((l) => l.op === 'confirm');
      expect(confirms.map((c) => c.outcome)).toEqual(['ok', 'failed', 'failed', 'failed']);
      expect(confirms.every((c) => c.tool === 'create_filter')).toBe(true);
    });

    it('a client that cannot elicit: ask proceeds unconfirmed, require refuses', async () => {
      const plain = await connect(sandbox, protocol, { elicit: false });
      const strict = await connect(sandbox, protocol, {
        elicit: false,
        env: { MAILWARDEN_CONFIRM: 'require' },
      });
      try {
        const r = await plain.call('create_filter', filterArgs());
        expect(r.isError, JSON.stringify(r.structured)).toBe(false);
        expect(r.structured['confirmation']).toBe('unavailable');
        const before = await filterCount(strict);
        const args = filterArgs();
        const s = await strict.call('create_filter', args);
        expect(s.error).toMatchObject({ code: 'forbidden_operation' });
        expect(s.error?.message).toContain('MAILWARDEN_CONFIRM');
        expect(await filterCount(strict)).toBe(before);
        expect(labelNames()).not.toContain((args['addLabels'] as string[])[0]);
      } finally {
        await plain.close();
        await strict.close();
      }
    });

    it('MAILWARDEN_CONFIRM=off never asks', async () => {
      const off = await connect(sandbox, protocol, { elicit: true, env: { MAILWARDEN_CONFIRM: 'off' } });
      try {
        const r = await off.call('create_filter', filterArgs());
        expect(r.structured['confirmation']).toBe('not_required');
        expect(off.asked).toEqual([]);
      } finally {
        await off.close();
      }
    });
  });
}

describe('an unknown MAILWARDEN_CONFIRM', () => {
  it('stops the server at start, naming the variable, before any change could be made', () => {
    const r = spawnSync(process.execPath, [MAIN], {
      env: {
        PATH: process.env['PATH'] ?? '',
        MAILWARDEN_CONFIRM: 'maybe',
        MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-confirm-env-'),
      },
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/invalid_input: MAILWARDEN_CONFIRM: "maybe" is not one of off, ask, require/);
  });
});

describe('2026-07-28: an answer is bound to the exact call', () => {
  let manual: Conn;
  beforeAll(async () => {
    manual = await connect(sandbox, '2026-07-28', { elicit: true, autoFulfill: false });
  });
  afterAll(async () => {
    await manual?.close();
  });

  interface Round {
    resultType?: string;
    requestState?: string;
    inputRequests?: Record<string, { method: string; params?: { message?: string } }>;
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: Array<{ type: string; text?: string }>;
  }
  const send = async (
    args: Record<string, unknown>,
    retry?: { state: string; answer: Answer },
  ): Promise<Round> =>
    (await manual.client.request(
      {
        method: 'tools/call',
        params: {
          name: 'create_filter',
          arguments: args,
          ...(retry
            ? { requestState: retry.state, inputResponses: { mailwarden_confirm: retry.answer } }
            : {}),
        },
      },
      { allowInputRequired: true },
    )) as unknown as Round;

  it('returns input_required with the question and a request state', async () => {
    const first = await send(filterArgs());
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests?.['mailwarden_confirm']?.method).toBe('elicitation/create');
    expect(first.inputRequests?.['mailwarden_confirm']?.params?.message).toContain('Create a Gmail filter');
    expect(first.requestState).toMatch(/^mwc1\./);
  });

  it('an accepted answer for other arguments is not an answer: the server asks again, nothing is created', async () => {
    const before = await filterCount(manual);
    const asked = filterArgs();
    const first = await send(asked);
    const other = filterArgs();
    const replay = await send(other, { state: first.requestState ?? '', answer: YES });
    expect(replay.resultType).toBe('input_required');
    expect(await filterCount(manual)).toBe(before);
    expect(labelNames()).not.toContain((other['addLabels'] as string[])[0]);
    const forged = await send(asked, { state: `${first.requestState ?? ''}x`, answer: YES });
    expect(forged.resultType).toBe('input_required');
    expect(await filterCount(manual)).toBe(before);
    // The genuine answer for the call it was asked for goes through.
    const done = await send(asked, { state: first.requestState ?? '', answer: YES });
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(done.structuredContent?.['confirmation']).toBe('confirmed');
    expect(await filterCount(manual)).toBe(before + 1);
  });

  it("an answer is used once: replaying a decline's state with an accept asks again", async () => {
    const args = filterArgs();
    const first = await send(args);
    const state = first.requestState ?? '';
    const no = await send(args, { state, answer: { action: 'decline' } });
    expect(no.isError).toBe(true);
    expect(envelopeOf(no.content?.[0]?.text ?? '')).toMatchObject({ code: 'declined_by_user' });
    const again = await send(args, { state, answer: YES });
    expect(again.resultType).toBe('input_required');
    expect(labelNames()).not.toContain((args['addLabels'] as string[])[0]);
  });
});
