import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW, DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { imapThreadIdForKey, startImapDemo } from '../../src/sandbox/imap-account.js';
import type { ImapDemo, ImapProfile } from '../../src/sandbox/imap-account.js';
import { MAIN, startStack, writeTestPolicy } from './stack.js';
import type { CallOutcome, Stack } from './stack.js';

/**
 * One mailbox, three servers: the Gmail sandbox, a full Dovecot and a Bridge-like Dovecot, all
 * holding the demo corpus and served by the real server over stdio to the real SDK client, so
 * one table of known answers runs against each.
 */
export type BackendKind = 'gmail' | ImapProfile;

export interface Backend {
  kind: BackendKind;
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  /** The thread id this backend gives the corpus thread with that key. */
  tid(key: string): string;
  stderr(): string;
  /** IMAP backends: the throwaway server and its account. */
  imap?: ImapDemo;
  gmail?: Stack;
  close(): Promise<void>;
}

const CLOCK_ENV = { MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC' };

export async function startBackend(
  kind: BackendKind,
  options: {
    env?: Record<string, string>;
    delayMs?: number;
    tiers?: string[];
    /** policy.json (see startStack); default: relaxed. */
    policy?: Record<string, unknown> | null;
  } = {},
): Promise<Backend> {
  if (kind === 'gmail') {
    const stack = await startStack({
      sandbox: { staleThreadIndex: true },
      env: { ...CLOCK_ENV, ...options.env },
    });
    return {
      kind,
      client: stack.client,
      call: (n, a) => stack.call(n, a),
      tid: (key) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key),
      stderr: () => stack.stderr(),
      gmail: stack,
      close: () => stack.close(),
    };
  }
  const imap = await startImapDemo({
    profile: kind,
    ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
    ...(options.tiers === undefined ? {} : { tiers: options.tiers }),
  });
  writeTestPolicy(imap.configDir, options.policy);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: { PATH: process.env['PATH'] ?? '', HOME: imap.configDir, ...imap.env, ...CLOCK_ENV, ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client(
    { name: 'mailwarden-test', version: '0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  try {
    await client.connect(transport);
  } catch (e) {
    await imap.close();
    throw new Error(`server did not start: ${String(e)}\n${stderr}`);
  }
  return {
    kind,
    client,
    imap,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args });
      const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        text: content.map((c) => c.text ?? '').join('\n'),
      };
    },
    tid: imapThreadIdForKey,
    stderr: () => stderr,
    async close() {
      await client.close();
      await imap.close();
    },
  };
}
