import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigDir } from '../../src/sandbox/client-config.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { connectClient, startHttp } from '../helpers/interop.js';
import { removeAfterFile } from '../helpers/temp.js';
import type { AnyClient, HttpProcess } from '../helpers/interop.js';
import { writeTestPolicy } from '../helpers/stack.js';

/**
 * 2025-11-25 over Streamable HTTP, as SDK v1 clients speak it: the server keeps a session per
 * client, so the capabilities it declared, its answers to elicitation and its
 * notifications/cancelled reach the call they belong to. Batches are refused in both eras.
 */

const TOKEN = 'sessions-token-0123456789abcdef0123456789abcdef';
const USER = 'many@sessions.example';
const THREADS = 110;
/** Messages for bulk_modify: three chunks of batchModify (1,000 ids each). */
const BULK = 2_500;

function manyThreads(): SeedUser {
  const at = Date.UTC(2026, 10, 1, 9);
  const thread = (key: string, i: number, subject: string) => ({
    key,
    messages: [
      {
        raw: [
          `From: Sender ${i} <s${i}@news.example>`,
          `To: ${USER}`,
          `Subject: ${subject}`,
          `Date: ${new Date(at + i * 60_000).toUTCString()}`,
          `Message-ID: <${key}@news.example>`,
          'Content-Type: text/plain; charset=utf-8',
          '',
          subject,
          '',
        ].join('\r\n'),
        labelIds: ['INBOX'],
        internalDate: at + i * 60_000,
      },
    ],
  });
  return {
    email: USER,
    userLabels: [],
    threads: [
      ...Array.from({ length: THREADS }, (_, i) => thread(`t${i}`, i, `note ${i}`)),
      ...Array.from({ length: BULK }, (_, i) => thread(`b${i}`, THREADS + i, `bulkmail ${i}`)),
    ],
  };
}

let sandbox: Sandbox;
let dir: string;
let ask: HttpProcess;
const ids = (): string[] => Array.from({ length: THREADS }, (_, i) => sandbox.threadIdForKey(USER, `t${i}`));
const labelId = (name: string): string | undefined =>
  sandbox.mailbox(USER).labels.find((l) => l.name === name)?.id;
/** Threads every message of which carries the label, read from the simulated mailbox itself. */
function threadsWith(name: string): Set<string> {
  const id = labelId(name);
  const out = new Set<string>();
  if (id === undefined) return out;
  for (const m of sandbox.mailbox(USER).messages) if (m.labelIds.includes(id)) out.add(m.threadId);
  return out;
}
/** Messages that carry the label. */
function messagesWith(name: string): Set<string> {
  const id = labelId(name);
  return new Set(
    id === undefined
      ? []
      : sandbox
          .mailbox(USER)
          .messages.filter((m) => m.labelIds.includes(id))
          .map((m) => m.id),
  );
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_SANDBOX_URL: sandbox.url,
    MAILWARDEN_TOOLS: 'read,manage,filters',
    MAILWARDEN_TOKEN: TOKEN,
    ...extra,
  };
}

beforeAll(async () => {
  sandbox = await Sandbox.start({ users: [manyThreads()] });
  dir = removeAfterFile(sandboxConfigDir(sandbox, USER, 'mailwarden-sessions-'));
  writeTestPolicy(dir, undefined);
  ask = await startHttp(env({ MAILWARDEN_CONFIRM: 'ask' }));
});
afterAll(async () => {
  await ask?.stop();
  await sandbox?.close();
});

const v1 = (server: HttpProcess, elicit = true): Promise<AnyClient> =>
  connectClient('v1', 'http', { env: {}, http: { url: server.url, token: TOKEN } }, { elicit });

const filters = async (c: AnyClient): Promise<number> =>
  ((await c.call('list_filters')).structured?.['filters'] as unknown[]).length;

describe('confirmations for a v1 client over HTTP (2025-11-25)', () => {
  it('asks once before create_filter under MAILWARDEN_CONFIRM=ask, and creates it on yes', async () => {
    const c = await v1(ask);
    try {
      const before = await filters(c);
      c.answers.push({ action: 'accept', content: { confirm: true } });
      const r = await c.call('create_filter', {
        criteria: { from: 'yes@filters.example' },
        addLabels: ['Yes'],
      });
      expect(r.isError, r.text).toBe(false);
      expect(r.structured?.['confirmation']).toBe('confirmed');
      expect(c.asked).toHaveLength(1);
      expect(c.asked[0]).toContain('Create a Gmail filter');
      expect(await filters(c)).toBe(before + 1);
    } finally {
      await c.close();
    }
  });

  it('a decline is declined_by_user and nothing is written', async () => {
    const c = await v1(ask);
    try {
      const before = await filters(c);
      c.answers.push({ action: 'decline' });
      const r = await c.call('create_filter', {
        criteria: { from: 'no@filters.example' },
        addLabels: ['Declined label'],
      });
      expect(r.isError).toBe(true);
      expect(r.error).toMatchObject({ code: 'declined_by_user', retryable: false });
      expect(c.asked).toHaveLength(1);
      expect(await filters(c)).toBe(before);
      // The label the filter would have applied was not created either.
      expect(labelId('Declined label')).toBeUndefined();
    } finally {
      await c.close();
    }
  });

  it('under MAILWARDEN_CONFIRM=require a client that declared elicitation is asked, not refused', async () => {
    const strict = await startHttp(env({ MAILWARDEN_CONFIRM: 'require' }));
    const c = await v1(strict);
    try {
      c.answers.push({ action: 'accept', content: { confirm: true } });
      const r = await c.call('create_filter', {
        criteria: { from: 'strict@filters.example' },
        addLabels: ['Strict'],
      });
      expect(r.isError, r.text).toBe(false);
      expect(r.structured?.['confirmation']).toBe('confirmed');
      expect(c.asked).toHaveLength(1);
      // A client that declared no elicitation is refused, with nothing written.
      const mute = await v1(strict, false);
      try {
        const no = await mute.call('create_filter', {
          criteria: { from: 'mute@filters.example' },
          addLabels: ['Mute'],
        });
        expect(no.error?.code).toBe('forbidden_operation');
        expect(labelId('Mute')).toBeUndefined();
      } finally {
        await mute.close();
      }
    } finally {
      await c.close();
      await strict.stop();
    }
  });
});

describe('cancellation over HTTP', () => {
  for (const kind of ['v1', 'v2-2026-07-28'] as const) {
    it(`${kind}: a modify_labels of 100 threads cancelled while its one batchModify is in flight sends nothing more; nothing unwritten is logged as done`, async () => {
      const c = await connectClient(kind, 'http', { env: {}, http: { url: ask.url, token: TOKEN } });
      const targets = ids().slice(0, 100);
      const label = `Cancel test ${kind}`;
      try {
        // The 100 threads' messages go in one batchModify (Gmail takes 1,000 ids a request);
        // slow enough that the call is still running when the client cancels.
        sandbox.faults.script([{ method: 'messages.batchModify', kind: 'delay', delayMs: 1_000 }]);
        sandbox.resetStats();
        const abort = new AbortController();
        const since = Date.now();
        const call = c.call('modify_labels', { threadIds: targets, add: [label] }, { signal: abort.signal });
        call.catch(() => undefined);
        const started = Date.now();
        const sent = () => sandbox.stats().byMethod['messages.batchModify']?.requests ?? 0;
        while (sent() === 0 && Date.now() - started < 20_000) await sleep(25);
        expect(sent()).toBe(1);
        abort.abort();
        await expect(call).rejects.toThrow();
        // The write already sent lands as a whole; nothing starts after the cancellation.
        await sleep(1_500);
        const changed = threadsWith(label);
        await sleep(1_500);
        expect(threadsWith(label)).toEqual(changed);
        expect([0, targets.length]).toContain(changed.size);
        expect(sent()).toBe(1);

        // The action log reports as done only threads the mailbox shows changed.
        const log = readFileSync(join(dir, 'action-log.jsonl'), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map(
            (l) =>
              JSON.parse(l) as {
                time: string;
                tool?: string;
                outcome?: string;
                threadIds?: string[];
                ids?: string[];
              },
          );
        const done = log
          .filter((r) => r.tool === 'modify_labels' && r.outcome === 'ok' && Date.parse(r.time) >= since)
          .flatMap((r) => r.threadIds ?? r.ids ?? []);
        for (const id of done) expect(changed.has(id), id).toBe(true);
      } finally {
        sandbox.faults.clear();
        await c.close();
      }
    });
  }
});

describe('cancellation of bulk_modify over HTTP (2025-11-25)', () => {
  it('stops between batchModify chunks: the chunk in flight lands, no later one is sent', async () => {
    const c = await v1(ask);
    const label = 'Bulk cancel';
    try {
      sandbox.faults.script([{ method: 'messages.batchModify', kind: 'delay', delayMs: 1_500 }]);
      sandbox.resetStats();
      // Over 1,000 messages: the human is asked first, and says yes.
      c.answers.push({ action: 'accept', content: { confirm: true } });
      const abort = new AbortController();
      const since = Date.now();
      const call = c.call(
        'bulk_modify',
        { query: 'subject:bulkmail', add: [label], maxMessages: 5_000 },
        { signal: abort.signal },
      );
      call.catch(() => undefined);
      const started = Date.now();
      while (
        (sandbox.stats().byMethod['messages.batchModify']?.requests ?? 0) === 0 &&
        Date.now() - started < 30_000
      )
        await sleep(25);
      expect(c.asked).toHaveLength(1);
      abort.abort();
      await expect(call).rejects.toThrow();
      await sleep(3_000);
      const changed = messagesWith(label);
      expect(sandbox.stats().byMethod['messages.batchModify']?.requests).toBe(1);
      expect(changed.size).toBe(1_000);

      const log = readFileSync(join(dir, 'action-log.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map(
          (l) =>
            JSON.parse(l) as {
              time: string;
              tool?: string;
              outcome?: string;
              messageIds?: string[];
              ids?: string[];
            },
        );
      const done = log
        .filter((r) => r.tool === 'bulk_modify' && r.outcome === 'ok' && Date.parse(r.time) >= since)
        .flatMap((r) => r.messageIds ?? r.ids ?? []);
      expect(done.length).toBeGreaterThan(0);
      for (const id of done) expect(changed.has(id), id).toBe(true);
    } finally {
      sandbox.faults.clear();
      await c.close();
    }
  });
});

describe('JSON-RPC batches', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(ask.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('are refused in 2025-11-25 with a JSON-RPC Invalid Request error', async () => {
    const init = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const res = await post([init(1), init(2)]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/batch/i);
  });

  it('are refused in 2026-07-28, and a batch of writes writes nothing', async () => {
    const meta = {
      [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
      [CLIENT_INFO_META_KEY]: { name: 't', version: '0' },
      [CLIENT_CAPABILITIES_META_KEY]: {},
    };
    const targets = ids().slice(100, 105);
    const calls = targets.map((threadId, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'modify_labels', arguments: { threadId, add: ['Batched'] }, _meta: meta },
    }));
    const res = await post(calls, { 'mcp-protocol-version': '2026-07-28' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/batch/i);
    expect(threadsWith('Batched').size).toBe(0);
  });
});

describe('what the server advertises', () => {
  it('does not advertise tools.listChanged, which it never sends', async () => {
    const res = await fetch(ask.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      }),
    });
    const text = await res.text();
    const json = JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as {
      result: { capabilities: { tools?: { listChanged?: boolean } } };
    };
    expect(json.result.capabilities.tools).toBeDefined();
    expect(json.result.capabilities.tools?.listChanged).not.toBe(true);
    const session = res.headers.get('mcp-session-id');
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
  });
});
