#!/usr/bin/env node
// First: V8's tiering for this process, before any command's code runs (tiering.ts says why).
import './tiering.js';
import { serveOverStdio } from '../mcp/stdio.js';
import { tiersFromEnv } from '../policy/tiers.js';
import { isMailError } from '../mail/errors.js';
import { debugOn, fullError } from './debug.js';
import { demoFromEnv } from './demo-env.js';
import { envFlag } from '../store/config.js';
import { buildRuntime, DEMO_ACCOUNT_ADDRESS, startDemoSandbox, stderrLogger, VERSION } from './runtime.js';
import { commandUsage, parseCommand, usage, UsageError } from './commands.js';
import type { ParsedCommand } from './commands.js';

const USAGE = usage(VERSION);

type Parsed = ParsedCommand;

function flagString(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

const has = (p: Parsed, name: string): boolean => p.values[name] !== undefined && p.values[name] !== false;

/**
 * A command that works an existing account refuses a name the registry does not hold: a typo
 * must not reach an account's policy or mail under another name. With no registry, the server
 * serves tokens/NAME.json: a name without one (other than "default") is unknown too.
 */
async function checkAccount(p: Parsed): Promise<void> {
  const wanted = flagString(p, 'account');
  if (!p.spec.existingAccount || wanted === undefined) return;
  const { findAccount, readAccounts } = await import('../store/accounts.js');
  const list = await readAccounts(process.env);
  if (list.length > 0) {
    if (findAccount(list, wanted) === undefined)
      throw new UsageError(
        `--account: no account "${wanted}"; registered: ${list.map((a) => a.name).join(', ')} (mailwarden accounts list)`,
      );
    return;
  }
  if (wanted === 'default') return;
  const { accountsStore } = await import('../store/accounts-store.js');
  const exists = await (await accountsStore(process.env)).hasSecret(wanted, 'gmail-token');
  if (!exists)
    throw new UsageError(
      `--account: no account "${wanted}": no accounts are registered and there is no token for it (mailwarden auth --account ${wanted}, or mailwarden accounts add)`,
    );
}

async function serve(p: Parsed): Promise<void> {
  const account = flagString(p, 'account');
  const built = await buildRuntime({
    demo: has(p, 'demo'),
    env: process.env,
    ...(account ? { account } : {}),
  });
  if (built.sandbox) stderrLogger.info('serving the sandbox mailbox', { sandbox: built.sandbox.url });
  // Loaded only when asked for, so a plain server's start-up does not pay for it.
  if (envFlag(process.env, 'MAILWARDEN_AUTO_SWEEP'))
    (await import('./sweep.js')).startAutoSweep(built.runtime);
  // policy.json's sender rules, at start and every sweepRulesEveryMinutes. The first sweep waits
  // a moment, so loading its code and reading the policy do not hold up a client's first
  // exchange (cold start to tools/list is a benchmarked target: docs/benchmarks.md).
  let ruleSweeps: Promise<{ stop(): Promise<void> } | undefined> | undefined;
  const sweepsStart = setTimeout(() => {
    ruleSweeps = import('./sweep-rules.js').then(
      (m) => m.startRuleSweeps(built.runtime),
      (e: unknown) => {
        stderrLogger.warn('sender rules: cannot start the sweeps', { error: String(e) });
        return undefined;
      },
    );
  }, RULE_SWEEPS_DELAY_MS);
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    clearTimeout(sweepsStart);
    // A rule sweep under way ends first, so its moves get their outcome lines in the log.
    void (ruleSweeps ?? Promise.resolve(undefined))
      .then((s) => s?.stop())
      .then(() => built.close())
      .finally(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  serveOverStdio(built.runtime, shutdown);
}

/** How long after start a serving server's first sender-rule sweep begins. */
const RULE_SWEEPS_DELAY_MS = 1000;

async function call(p: Parsed): Promise<number> {
  const [tool, json] = p.positionals;
  if (!tool) {
    console.error("usage: mailwarden call TOOL '{json}' [--demo]");
    return 2;
  }
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as Record<string, unknown>;
    } catch {
      console.error('call: the arguments must be one JSON object');
      return 2;
    }
  }
  const account = flagString(p, 'account');
  const built = await buildRuntime({
    demo: has(p, 'demo'),
    env: process.env,
    ...(account ? { account } : {}),
  });
  // The MCP client is only needed here and in the demo; serving never loads it.
  const { connectLocal } = await import('../mcp/local-client.js');
  const client = await connectLocal(built.runtime);
  try {
    const r = await client.call(tool, args);
    console.log(JSON.stringify(r.structured ?? r.text, null, 2));
    return r.isError ? 1 : 0;
  } finally {
    await client.close();
    await built.close();
  }
}

async function sandbox(p: Parsed): Promise<void> {
  const port = Number(flagString(p, 'port') ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0..65535');
  const sb = await startDemoSandbox(port);
  // Everything another program needs to point a Gmail client at it (sandbox secrets only).
  console.log(
    JSON.stringify({
      url: sb.url,
      address: DEMO_ACCOUNT_ADDRESS,
      clientId: sb.oauthClient.clientId,
      clientSecret: sb.oauthClient.clientSecret,
      refreshToken: sb.refreshTokenFor(DEMO_ACCOUNT_ADDRESS),
    }),
  );
  process.on('SIGINT', () => void sb.close().finally(() => process.exit(0)));
  process.on('SIGTERM', () => void sb.close().finally(() => process.exit(0)));
}

async function main(): Promise<number | undefined> {
  let p: Parsed;
  try {
    p = parseCommand(process.argv.slice(2));
    if (p.help) return void console.log(p.explicit ? commandUsage(p.spec) : USAGE);
    if (p.version) return void console.log(VERSION);
    await checkAccount(p);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // Never a silently started server: a cron line with a typo must fail where someone sees it.
    console.error(`mailwarden: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  // MAILWARDEN_DEMO=1 is --demo for every command that takes it (the desktop bundle's switch).
  if (p.spec.options['demo'] !== undefined && demoFromEnv(process.env)) p.values['demo'] = true;
  switch (p.spec.words.join(' ')) {
    case 'serve':
      await serve(p);
      return undefined;
    case 'demo':
      if (has(p, 'imap'))
        return (await import('../demo/imap.js')).runImapDemo(
          flagString(p, 'profile') === 'full' ? 'full' : 'bridge',
        );
      return (await import('../demo/tour.js')).runDemo();
    case 'call':
      return call(p);
    case 'sandbox':
      await sandbox(p);
      return undefined;
    case 'http': {
      const account = flagString(p, 'account');
      const port = flagString(p, 'port');
      const { runHttp, tokenConfigured } = await import('./http.js');
      // Over stdio only the local client can reach the file-writing tools; over HTTP every
      // client holding the token can, so say at start where they may write, or that they can't.
      // Said once the server can start: without a token runHttp refuses first, and says why.
      const tokenSet = tokenConfigured(process.env);
      const downloadDir = process.env['MAILWARDEN_DOWNLOAD_DIR'];
      if (tokenSet && tiersFromEnv(process.env).has('manage'))
        stderrLogger.warn(
          downloadDir
            ? 'MAILWARDEN_DOWNLOAD_DIR is set: every HTTP client with the token can write files there (download_attachment, export_thread)'
            : 'the manage tier is on but MAILWARDEN_DOWNLOAD_DIR is unset: download_attachment and export_thread will refuse until it names a directory',
          downloadDir ? { downloadDir } : {},
        );
      await runHttp({
        demo: has(p, 'demo'),
        env: process.env,
        ...(port === undefined ? {} : { port }),
        ...(account ? { account } : {}),
      });
      return undefined;
    }
    case 'policy show': {
      const argv = process.argv.slice(2);
      return (await import('./policy.js')).policyCommand(argv.slice(argv.indexOf('policy') + 1), process.env);
    }
    case 'log':
    case 'undo':
    case 'review': {
      // The person's side loads only when asked for; it reads the same table (src/cli/review.ts).
      const command = p.spec.words[0] as 'log' | 'undo' | 'review';
      const argv = process.argv.slice(2);
      const rest = argv.slice(argv.indexOf(command) + 1);
      const m = await import('./review.js');
      const run = { log: m.logCommand, undo: m.undoCommand, review: m.reviewCommand }[command];
      return run(rest, process.env);
    }
    case 'accounts list':
    case 'accounts default':
    case 'accounts remove':
    case 'accounts add': {
      const argv = process.argv.slice(2);
      return (await import('./accounts.js')).accountsCommand(
        argv.slice(argv.indexOf('accounts') + 1),
        process.env,
      );
    }
    case 'state migrate':
      return (await import('./state-migrate.js')).stateCommand(p, process.env);
    case 'clients list':
    case 'clients add':
    case 'clients remove':
      return (await import('./clients.js')).clientsCommand(p, process.env);
    case 'auth': {
      const account = flagString(p, 'account');
      return (await import('./auth.js')).runAuth({
        env: process.env,
        force: has(p, 'force'),
        openBrowser: !has(p, 'no-browser'),
        print: (line) => console.log(line),
        ...(account ? { account } : {}),
      });
    }
    case 'check': {
      const account = flagString(p, 'account');
      return (await import('./check.js')).runCheck({
        env: process.env,
        json: has(p, 'json'),
        print: (line) => console.log(line),
        ...(account ? { account } : {}),
      });
    }
    case 'sweep-rules': {
      const account = flagString(p, 'account');
      return (await import('./sweep-rules.js')).sweepRulesCommand({
        demo: has(p, 'demo'),
        dryRun: has(p, 'dry-run'),
        ...(account ? { account } : {}),
      });
    }
    case 'sweep': {
      const account = flagString(p, 'account');
      return (await import('./sweep.js')).sweepCommand({
        demo: has(p, 'demo'),
        dryRun: has(p, 'dry-run'),
        ...(account ? { account } : {}),
      });
    }
    case 'check-new-mail': {
      const account = flagString(p, 'account');
      const sinceTopic = flagString(p, 'since-topic');
      const topicFile = flagString(p, 'topic-file');
      return (await import('./check-new-mail.js')).checkNewMailCommand({
        demo: has(p, 'demo'),
        ...(account ? { account } : {}),
        ...(sinceTopic ? { sinceTopic } : {}),
        ...(topicFile ? { topicFile } : {}),
      });
    }
    case 'import-reference': {
      const { importReference } = await import('./import-reference.js');
      return importReference({
        env: process.env,
        force: has(p, 'force'),
        print: (line) => console.log(line),
        ...(p.positionals[0] === undefined ? {} : { dir: p.positionals[0] }),
      });
    }
    default:
      console.error(`mailwarden: unknown command "${p.spec.words.join(' ')}"\n\n${USAGE}`);
      return 2;
  }
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (e: unknown) => {
    console.error(isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));
    if (debugOn(process.env)) console.error(fullError(e));
    // Something may already hold the event loop (the demo's sandbox, a listening socket): a
    // failed start must end the process, not leave it waiting for nothing.
    process.exit(1);
  },
);
