import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { sandboxConfigDir } from '../../src/sandbox/client-config.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { envelopeOf } from './envelope.js';
import { removeAfterFile } from './temp.js';
import type { Envelope } from './envelope.js';

export const MAIN = resolve(import.meta.dirname, '../../dist/bundle/main.js');

export type Protocol = '2025-11-25' | '2026-07-28';

export interface CallOutcome {
  isError: boolean;
  structured: Record<string, unknown>;
  text: string;
  /** An error result's envelope, read from its text content (errors carry no structuredContent). */
  error?: Envelope;
}

export interface Stack {
  sandbox: Sandbox;
  client: Client;
  configDir: string;
  refreshToken: string;
  stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  close(): Promise<void>;
}

export interface StackOptions {
  sandbox?: SandboxOptions;
  /** Reuse a sandbox another stack started. */
  existingSandbox?: Sandbox;
  env?: Record<string, string>;
  protocol?: Protocol;
  /** Runs after the config dir is written and before the server starts (extra accounts…). */
  beforeSpawn?: (configDir: string) => Promise<void>;
  /**
   * policy.json to write. Default: the cap, inbox-only moves and protected correspondents off, so tests of the
   * organise mechanics are not refused by the policy; the policy has tests of its own.
   */
  policy?: Record<string, unknown> | null;
}

export const RELAXED_POLICY = {
  default: { dailyMoveCap: 0, protectCorrespondents: false, inboxOnlyMoves: false },
};

/** Writes the test's policy.json (null: none, the guarded defaults). */
export function writeTestPolicy(configDir: string, policy: Record<string, unknown> | null | undefined): void {
  const chosen = policy === undefined ? RELAXED_POLICY : policy;
  if (chosen !== null)
    writeFileSync(join(configDir, 'policy.json'), `${JSON.stringify(chosen)}\n`, { mode: 0o600 });
}

/**
 * The real thing end to end: the sandbox Gmail simulator on loopback HTTP in this process, the
 * built server spawned as a child over stdio, and the MCP SDK client talking to it.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const sandbox =
    options.existingSandbox ?? (await Sandbox.start({ users: [demoCorpus()], ...options.sandbox }));
  const configDir = removeAfterFile(sandboxConfigDir(sandbox, DEMO_ADDRESS, 'mailwarden-test-'));
  const refreshToken = sandbox.refreshTokenFor(DEMO_ADDRESS);
  writeTestPolicy(configDir, options.policy);
  await options.beforeSpawn?.(configDir);
  // On a state database the server reads its account and token there (test/helpers/pg-accounts.ts).
  const stateUrl = options.env?.['MAILWARDEN_STATE'];
  if (stateUrl !== undefined && stateUrl !== '') {
    const passphrase = options.env?.['MAILWARDEN_TOKEN_PASSPHRASE'];
    if (passphrase === undefined)
      throw new Error('startStack: MAILWARDEN_STATE needs MAILWARDEN_TOKEN_PASSPHRASE');
    await (await import('./pg-accounts.js')).accountsIntoPostgres(configDir, stateUrl, passphrase);
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: configDir,
      MAILWARDEN_CONFIG_DIR: configDir,
      MAILWARDEN_SANDBOX_URL: sandbox.url,
      ...options.env,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const protocol = options.protocol ?? '2025-11-25';
  const client = new Client(
    { name: 'mailwarden-test', version: '0' },
    { versionNegotiation: { mode: protocol === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  await client.connect(transport);
  return {
    sandbox,
    client,
    configDir,
    refreshToken,
    stderr: () => stderr,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args });
      const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
      const text = content.map((c) => c.text ?? '').join('\n');
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        text,
        ...(r.isError === true ? { error: envelopeOf(text) } : {}),
      };
    },
    async close() {
      await client.close();
      if (!options.existingSandbox) await sandbox.close();
    },
  };
}
