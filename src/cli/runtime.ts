import { readFileSync } from 'node:fs';
import { systemClock } from '../mail/clock.js';
import type { ServerRuntime } from '../mcp/server.js';
import { tiersFromEnv } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { GmailMailbox } from '../providers/gmail/mailbox.js';
import { fetchTransport, loopbackTransport } from '../providers/gmail/transport.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { Sandbox } from '../sandbox/index.js';
import { accountName, configDir, readOAuthClient, readToken } from '../store/config.js';
import { ActionLog } from '../policy/action-log.js';
import { join } from 'node:path';
import type { Env } from '../store/config.js';
import { ALL_TOOLS } from '../tools/index.js';
import type { Logger } from '../tools/define.js';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** stdout carries MCP, so every diagnostic goes to stderr as one JSON line. */
export const stderrLogger: Logger = {
  info: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'info', message, ...fields })}\n`),
  warn: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...fields })}\n`),
};

export interface RuntimeOptions {
  demo: boolean;
  env: Env;
  account?: string;
  log?: Logger;
}

export interface BuiltRuntime {
  runtime: ServerRuntime;
  /** Present in demo mode: the in-process sandbox the mailbox talks to over loopback HTTP. */
  sandbox?: Sandbox;
  close(): Promise<void>;
}

/**
 * The demo: the sandbox Gmail simulator on loopback, seeded with the demo corpus, stale index on.
 * Loaded on demand so a real server's start-up never pays for the simulator and its corpus.
 */
export async function startDemoSandbox(port = 0): Promise<Sandbox> {
  const [{ Sandbox }, { demoCorpus }] = await Promise.all([
    import('../sandbox/index.js'),
    import('../sandbox/corpus/index.js'),
  ]);
  return Sandbox.start({ users: [demoCorpus()], staleThreadIndex: true, port });
}

/** The owner of the demo mailbox (kept here so serving does not load the corpus module). */
export const DEMO_ACCOUNT_ADDRESS = 'you@mailwarden.example';

function openDemoMailbox(sandbox: Sandbox, tiers: ReadonlySet<Tier>): Mailbox {
  return new GmailMailbox({
    account: 'demo',
    credentials: { ...sandbox.oauthClient, refreshToken: sandbox.refreshTokenFor(DEMO_ACCOUNT_ADDRESS) },
    tiers,
    transport: loopbackTransport(sandbox.url),
  });
}

async function openConfiguredMailbox(env: Env, account: string, tiers: ReadonlySet<Tier>): Promise<Mailbox> {
  const [client, token] = await Promise.all([readOAuthClient(env), readToken(env, account)]);
  // Tests and benchmarks point a real client at a sandbox started elsewhere; loopback only.
  const sandboxUrl = env['MAILWARDEN_SANDBOX_URL'];
  return new GmailMailbox({
    account,
    credentials: { ...client, refreshToken: token.refreshToken },
    tiers,
    transport: sandboxUrl ? loopbackTransport(sandboxUrl) : fetchTransport,
  });
}

export async function buildRuntime(opts: RuntimeOptions): Promise<BuiltRuntime> {
  const tiers = tiersFromEnv(opts.env);
  const log = opts.log ?? stderrLogger;
  const sandbox = opts.demo ? await startDemoSandbox() : undefined;
  const account = opts.demo ? 'demo' : accountName(opts.env, opts.account);
  let opened: Promise<Mailbox> | undefined;
  const mailbox = (): Promise<Mailbox> => {
    opened ??= sandbox
      ? Promise.resolve(openDemoMailbox(sandbox, tiers))
      : openConfiguredMailbox(opts.env, account, tiers);
    // A failed open (no token yet) is retried on the next call rather than cached.
    opened.catch(() => (opened = undefined));
    return opened;
  };
  // The demo's changes land in the sandbox, and are logged apart from a real account's.
  const actionLog = new ActionLog(
    join(configDir(opts.env), opts.demo ? 'action-log.demo.jsonl' : 'action-log.jsonl'),
  );
  const runtime: ServerRuntime = {
    tools: ALL_TOOLS,
    tiers,
    mailbox,
    actionLog,
    clock: systemClock,
    log,
    version: VERSION,
  };
  return {
    runtime,
    ...(sandbox ? { sandbox } : {}),
    async close() {
      if (opened) await (await opened.catch(() => undefined))?.close();
      await sandbox?.close();
    },
  };
}
