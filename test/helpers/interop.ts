import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { envelopeOf } from './envelope.js';
import type { Envelope } from './envelope.js';
import { MAIN } from './stack.js';

export type { Envelope } from './envelope.js';

/**
 * The clients people run, against the built server: SDK v1 (`@modelcontextprotocol/sdk` 1.32, what
 * most desktop and CLI clients embed; 2025-11-25 only) and SDK v2 pinned to either revision, over
 * stdio or Streamable HTTP. Each is used the way its users use it: callTool, which validates
 * structuredContent against the listed outputSchema.
 */

export type ClientKind = 'v1' | 'v2-2025-11-25' | 'v2-2026-07-28';
export type Wire = 'stdio' | 'http';

export const CLIENT_KINDS: readonly ClientKind[] = ['v1', 'v2-2025-11-25', 'v2-2026-07-28'];
export const WIRES: readonly Wire[] = ['stdio', 'http'];

export interface Outcome {
  isError: boolean;
  /** structuredContent, exactly as the client returned it (absent on errors). */
  structured: Record<string, unknown> | undefined;
  text: string;
  /** The error envelope read from the text content of an isError result. */
  error?: Envelope;
}

export type Answer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
};

export interface AnyClient {
  kind: ClientKind;
  wire: Wire;
  protocol(): string | undefined;
  listTools(): Promise<Array<{ name: string; outputSchema?: unknown }>>;
  call(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<Outcome>;
  /** Questions the human was shown (elicitation). */
  asked: string[];
  /** What the human answers next, one per question; an empty queue declines. */
  answers: Answer[];
  stderr(): string;
  close(): Promise<void>;
}

function outcome(r: { isError?: unknown; structuredContent?: unknown; content?: unknown }): Outcome {
  const content = (Array.isArray(r.content) ? r.content : []) as Array<{ type: string; text?: string }>;
  const text = content.map((c) => c.text ?? '').join('\n');
  const isError = r.isError === true;
  return {
    isError,
    structured: r.structuredContent as Record<string, unknown> | undefined,
    text,
    ...(isError ? { error: envelopeOf(text) } : {}),
  };
}

export interface ServerTarget {
  /** Environment for a stdio server spawned per client. */
  env: Record<string, string>;
  /** The HTTP server's URL and bearer, for wire 'http'. */
  http?: { url: string; token: string };
}

const DECLINE: Answer = { action: 'decline' };
/** Long enough for the slow calls the tests make on purpose; the SDK default is 60 s. */
const TIMEOUT_MS = 120_000;

export async function connectClient(
  kind: ClientKind,
  wire: Wire,
  target: ServerTarget,
  options: { elicit?: boolean } = {},
): Promise<AnyClient> {
  const elicit = options.elicit ?? true;
  let stderr = '';
  const asked: string[] = [];
  const answers: Answer[] = [];
  const answer = (message: string): Answer => {
    asked.push(message);
    return answers.shift() ?? DECLINE;
  };
  const httpTarget = (): { url: URL; headers: Record<string, string> } => {
    if (target.http === undefined) throw new Error('no HTTP server for this target');
    return { url: new URL(target.http.url), headers: { Authorization: `Bearer ${target.http.token}` } };
  };
  const stdioParams = {
    command: process.execPath,
    args: [MAIN],
    env: { PATH: process.env['PATH'] ?? '', ...target.env },
    stderr: 'pipe' as const,
  };

  if (kind === 'v1') {
    const client = new ClientV1(
      { name: 'interop-v1', version: '0' },
      { capabilities: elicit ? { elicitation: {} } : {} },
    );
    if (elicit)
      client.setRequestHandler(ElicitRequestSchema, (request) =>
        Promise.resolve(answer(request.params.message)),
      );
    if (wire === 'stdio') {
      const transport = new StdioV1(stdioParams);
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      await client.connect(transport);
    } else {
      const { url, headers } = httpTarget();
      await client.connect(new HttpV1(url, { requestInit: { headers } }));
    }
    return {
      kind,
      wire,
      protocol: () => (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion,
      async listTools() {
        return (await client.listTools()).tools;
      },
      async call(name, args = {}, opts = {}) {
        const r = await client.callTool({ name, arguments: args }, undefined, {
          timeout: TIMEOUT_MS,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        return outcome(r as Parameters<typeof outcome>[0]);
      },
      asked,
      answers,
      stderr: () => stderr,
      close: () => client.close(),
    };
  }

  const modern = kind === 'v2-2026-07-28';
  const client = new ClientV2(
    { name: 'interop-v2', version: '0' },
    {
      capabilities: elicit ? { elicitation: {} } : {},
      versionNegotiation: { mode: modern ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  if (elicit)
    client.setRequestHandler('elicitation/create', (request) =>
      Promise.resolve(answer((request.params as { message: string }).message)),
    );
  if (wire === 'stdio') {
    const transport = new StdioV2(stdioParams);
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
  } else {
    const { url, headers } = httpTarget();
    await client.connect(new HttpV2(url, { requestInit: { headers } }));
  }
  return {
    kind,
    wire,
    protocol: () => client.getNegotiatedProtocolVersion(),
    async listTools() {
      return (await client.listTools()).tools;
    },
    async call(name, args = {}, opts = {}) {
      const r = await client.callTool(
        { name, arguments: args },
        { timeout: TIMEOUT_MS, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
      return outcome(r);
    },
    asked,
    answers,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

export interface HttpProcess {
  url: string;
  proc: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
  stop(): Promise<void>;
}

/** `mailwarden http [args]` as a user starts it; the URL is read from what it prints. */
export async function startHttp(env: Record<string, string>, args: string[] = []): Promise<HttpProcess> {
  const proc = spawn(process.execPath, [MAIN, 'http', '--port', '0', ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${err}`)), 30_000);
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /MCP over Streamable HTTP at (http:\/\/\S+)/.exec(err);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exit.then((code) => reject(new Error(`server exited ${String(code)}: ${err}`)));
  });
  return {
    url,
    proc,
    stderr: () => err,
    exit,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exit;
    },
  };
}
