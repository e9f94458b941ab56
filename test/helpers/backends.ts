import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_NOW, DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { imapThreadIdForKey, startImapDemo } from '../../src/sandbox/imap-account.js';
import type { ImapDemo, ImapProfile } from '../../src/sandbox/imap-account.js';
import type { BridgeOptions } from '../../src/sandbox/imap/index.js';
import { startImapProxy } from '../../src/sandbox/imap/index.js';
import type { ImapProxy } from '../../src/sandbox/imap/index.js';
import { readAccounts, writeAccounts } from '../../src/store/accounts.js';
import type { SeedUser } from '../../src/sandbox/seed.js';
import { MAIN, startStack, writeTestPolicy } from './stack.js';
import { envelopeOf } from './envelope.js';
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
  /** Another server process on the same config dir (a second client, a cron job): same mailbox. */
  another(): Promise<{ call: Backend['call']; close(): Promise<void>; pid(): number | null }>;
  /** The config dir the server runs with. */
  configDir: string;
  /** The environment the server runs with (for the CLI commands that work the same config). */
  env: Record<string, string>;
  /**
   * Writes the provider received since the backend started (option recordWrites): Gmail write
   * methods from the sandbox's request counts; IMAP commands that change the mailbox, read from
   * a recording proxy the account is pointed through (plain loopback IMAP, so it can be read).
   */
  writes(): string[];
  /**
   * IMAP: every command the server's connections sent, tag left out, in order: the Bridge-like
   * front end's record, or the recording proxy's (option recordWrites); empty otherwise.
   */
  commands(): string[];
  close(): Promise<void>;
}

/** Gmail API methods that change the mailbox (the sandbox's method names). */
const GMAIL_WRITES =
  /^(labels\.(create|patch|update|delete)|messages\.(modify|batchModify|trash|untrash)|threads\.(modify|trash|untrash)|settings\.filters\.(create|delete)|drafts\.create)$/;

/** IMAP commands that change the mailbox (RFC 9051), with or without UID. */
const IMAP_WRITES = /^[A-Za-z0-9.]+ (?:UID )?(CREATE|DELETE|RENAME|APPEND|STORE|COPY|MOVE|EXPUNGE)\b/i;

function gmailWrites(stack: Stack): string[] {
  const out: string[] = [];
  for (const [method, c] of Object.entries(stack.sandbox.stats().byMethod))
    if (GMAIL_WRITES.test(method)) for (let i = 0; i < c.requests; i++) out.push(method);
  return out.sort();
}

async function spawnClient(
  env: Record<string, string>,
): Promise<{ client: Client; stderr: () => string; pid: () => number | null }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: { PATH: process.env['PATH'] ?? '', ...env },
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
    throw new Error(`server did not start: ${String(e)}\n${stderr}`);
  }
  return { client, stderr: () => stderr, pid: () => transport.pid };
}

function caller(client: Client): Backend['call'] {
  return async (name, args = {}) => {
    const r = await client.callTool({ name, arguments: args });
    const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
    const text = content.map((c) => c.text ?? '').join('\n');
    return {
      isError: r.isError === true,
      structured: (r.structuredContent ?? {}) as Record<string, unknown>,
      text,
      ...(r.isError === true ? { error: envelopeOf(text) } : {}),
    };
  };
}

async function anotherOn(env: Record<string, string>) {
  const { client, pid } = await spawnClient(env);
  return { call: caller(client), close: () => client.close().catch(() => undefined), pid };
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
    /** Bridge-like profile: All Mail hidden or IDLE off (src/sandbox/imap/dovecot-config.ts). */
    bridge?: BridgeOptions;
    /** IMAP: route the account through a recording proxy so writes() can list its commands. */
    recordWrites?: boolean;
    /** The mailbox to serve instead of the demo corpus (same address). */
    seed?: SeedUser;
  } = {},
): Promise<Backend> {
  if (kind === 'gmail') {
    const stack = await startStack({
      sandbox: { staleThreadIndex: true, ...(options.seed ? { users: [options.seed] } : {}) },
      env: { ...CLOCK_ENV, ...options.env },
      ...(options.policy === undefined ? {} : { policy: options.policy }),
    });
    const env = {
      HOME: stack.configDir,
      MAILWARDEN_CONFIG_DIR: stack.configDir,
      MAILWARDEN_SANDBOX_URL: stack.sandbox.url,
      ...CLOCK_ENV,
      ...options.env,
    };
    return {
      kind,
      client: stack.client,
      configDir: stack.configDir,
      env,
      another: () => anotherOn(env),
      call: (n, a) => stack.call(n, a),
      tid: (key) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key),
      stderr: () => stack.stderr(),
      gmail: stack,
      writes: () => gmailWrites(stack),
      commands: () => [],
      close: () => stack.close(),
    };
  }
  const imap = await startImapDemo({
    profile: kind,
    ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
    ...(options.tiers === undefined ? {} : { tiers: options.tiers }),
    ...(options.bridge === undefined ? {} : { bridge: options.bridge }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  writeTestPolicy(imap.configDir, options.policy);
  const seen: string[] = [];
  let recorder: ImapProxy | undefined;
  if (options.recordWrites === true) {
    recorder = await startImapProxy({
      target: { host: imap.server.host, port: imap.server.plainPort },
      // A fault that never fires sees every client chunk: the recording.
      faults: [
        { kind: 'drop', repeat: true, when: { test: (t: string) => (seen.push(t), false) } as RegExp },
      ],
    });
    const port = recorder.port;
    const list = await readAccounts(imap.env);
    await writeAccounts(
      imap.env,
      list.map((e) => {
        if (e.name !== imap.account || e.imap === undefined) return e;
        const { pinSha256: _p, pinCertPem: _c, ...rest } = e.imap;
        return { ...e, imap: { ...rest, port, security: 'insecure-loopback' as const } };
      }),
    );
  }
  const imapWrites = (): string[] =>
    seen
      .flatMap((chunk) => chunk.split('\r\n'))
      .filter((line) => IMAP_WRITES.test(line))
      .map((line) => line.replace(/^[A-Za-z0-9.]+ /, '').slice(0, 120));
  const imapCommands = (): string[] =>
    recorder !== undefined
      ? seen
          .flatMap((chunk) => chunk.split('\r\n'))
          .filter((line) => /^[A-Za-z0-9.]+ [A-Za-z]/.test(line))
          .map((line) => line.replace(/^[A-Za-z0-9.]+ /, ''))
      : (imap.proxy?.commands() ?? []).map((c) => c.text.replace(/^\S+ /, ''));
  const env: Record<string, string> = { HOME: imap.configDir, ...imap.env, ...CLOCK_ENV, ...options.env };
  let spawned: Awaited<ReturnType<typeof spawnClient>>;
  try {
    // On a state database the server reads the account and its password there.
    const stateUrl = env['MAILWARDEN_STATE'];
    if (stateUrl !== undefined && stateUrl !== '')
      await (
        await import('./pg-accounts.js')
      ).accountsIntoPostgres(imap.configDir, stateUrl, env['MAILWARDEN_TOKEN_PASSPHRASE'] ?? '');
    spawned = await spawnClient(env);
  } catch (e) {
    await recorder?.stop();
    await imap.close();
    throw e;
  }
  const { client, stderr } = spawned;
  return {
    kind,
    client,
    imap,
    configDir: imap.configDir,
    env,
    another: () => anotherOn(env),
    call: caller(client),
    tid: (key) => imapThreadIdForKey(key, options.seed),
    stderr,
    writes: imapWrites,
    commands: imapCommands,
    async close() {
      await client.close();
      await recorder?.stop();
      await imap.close();
    },
  };
}
