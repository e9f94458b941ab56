#!/usr/bin/env node
import { serveOverStdio } from '../mcp/stdio.js';
import { tiersFromEnv } from '../policy/tiers.js';
import { isMailError } from '../mail/errors.js';
import { debugOn, fullError } from './debug.js';
import { demoFromEnv } from './demo-env.js';
import { buildRuntime, DEMO_ACCOUNT_ADDRESS, startDemoSandbox, stderrLogger, VERSION } from './runtime.js';

const USAGE = `mailwarden ${VERSION} — an MCP server for your mailbox that never sends mail

Usage:
  mailwarden [serve] [--demo] [--account NAME]   MCP server over stdio (--demo: the embedded sandbox mailbox)
  mailwarden demo                                a guided tour through the real tools on the sandbox mailbox
  mailwarden demo --imap [--profile full]        the read tools on a throwaway Dovecot (needs Dovecot installed)
  mailwarden call TOOL '{json}' [--demo]         call one tool and print its structured result
  mailwarden sandbox [--port N]                  serve the Gmail simulator on 127.0.0.1 for other programs
  mailwarden sweep [--dry-run] [--account NAME]  return due snoozed threads to the inbox (for cron); JSON out
  mailwarden sweep-rules [--dry-run] [--account NAME]
                                                 apply policy.json's sender rules to the inbox now (for cron); JSON
                                                 out; exit 0 ok, 1 something failed, 2 usage
  mailwarden check-new-mail [--account NAME] [--topic-file FILE | --since-topic T]
                                      gate for an agent on a timer: JSON out; exit 0 wake, 1 nothing new, 2 usage, 3 error
  mailwarden auth [--account NAME] [--force] [--no-browser]
                                                 sign in to Gmail in a browser and store the token (encrypted)
  mailwarden check [--account NAME] [--json]     check credentials, token, scopes and one live call; prints fixes
                                                 (no --account: the registry's default account)
  mailwarden import-reference [DIR] [--force]    copy the reference server's OAuth client and plaintext tokens
                                                 (default DIR ~/.mailwarden) into this config, encrypted
  --auth, --check, --sweep, --http               the same as the subcommands (the reference server's spelling)
  mailwarden http [--port N] [--demo] [--account NAME]
                                                 MCP over Streamable HTTP on 127.0.0.1:8787/mcp (also --http)
  mailwarden accounts [list | default NAME | remove NAME | add NAME [--alias A] [--tiers T]]
                                                 the accounts one server serves (accounts.json)
  mailwarden policy show [--account NAME] [--json]
                                                 the effective write policy (policy.json) per account
  mailwarden log [--account NAME] [--since DAY] [--until DAY] [--json]
                                                 the action log as a person reads it (default: the last 7 days)
  mailwarden undo [--account NAME] (--call ID | --since TIME | --item ID…) [--dry-run]
                                                 put back what agent or rule moves took out of the inbox
  mailwarden review [--account NAME] [--port N] [--demo] [--no-browser]
                                                 the review page on 127.0.0.1, opened with a one-time link
  mailwarden accounts add NAME --imap --host HOST [--port N] [--tls | --starttls] --user USER
      [--password-stdin] [--pin-sha256 HEX | --pin-cert FILE | --pin-from-server] [--authserv-id ID]
                                                 an IMAP account (Proton Mail Bridge, Fastmail, Dovecot…)
  mailwarden --version | --help

Environment: MAILWARDEN_TOOLS (tiers: read,manage,filters), MAILWARDEN_READONLY=1,
MAILWARDEN_ACCOUNT, MAILWARDEN_CONFIG_DIR (or MAILWARDEN_DIR), MAILWARDEN_CREDENTIALS (OAuth client JSON),
MAILWARDEN_TOKEN_PASSPHRASE (encrypt tokens with a passphrase), MAILWARDEN_KEYSTORE=auto|off,
MAILWARDEN_AUTH_TIMEOUT_MS, MAILWARDEN_AUTO_SWEEP=1 (sweep snoozed threads at
start and hourly while serving), MAILWARDEN_NOW (testing aid: the clock starts at this ISO instant),
MAILWARDEN_DEBUG=1 (full errors with stacks on stderr),
MAILWARDEN_DEMO=1 (the same as --demo).
Waits: MAILWARDEN_REQUEST_TIMEOUT_MS (per Gmail request, default 20000), MAILWARDEN_WRITE_TIMEOUT_MS
(per write, default 30000), MAILWARDEN_RATE_LIMIT_MAX_WAIT_MS (the one wait a rate limit gets, default
20000), MAILWARDEN_CALL_BUDGET_MS (per tool call, default 120000).
HTTP: MAILWARDEN_TOKEN (required bearer), PORT, MAILWARDEN_HOST (default 127.0.0.1),
MAILWARDEN_ALLOWED_HOSTS, MAILWARDEN_ALLOWED_CLIENTS (CIDRs), MAILWARDEN_ALLOW_NO_TOKEN=1.`;

interface Parsed {
  command: string;
  /** Named on the command line (not the implied `serve`). */
  explicit: boolean;
  positional: string[];
  flags: Map<string, string | true>;
}

/** Flags that take a value (`--port 8787` or `--port=8787`). */
const VALUE_FLAGS: ReadonlySet<string> = new Set(['port', 'account', 'profile', 'topic-file', 'since-topic']);

/**
 * The reference server's spellings of the subcommands, found in users' cron lines and client
 * configs (`mailwarden --sweep`). Each means exactly its subcommand.
 */
const COMMAND_FLAGS: ReadonlySet<string> = new Set(['auth', 'check', 'sweep', 'http']);

/** Per command: the flags it takes and how many positional arguments. */
const COMMANDS: Readonly<Record<string, { flags: readonly string[]; positional: number }>> = {
  serve: { flags: ['demo', 'account'], positional: 0 },
  http: { flags: ['demo', 'account', 'port'], positional: 0 },
  demo: { flags: ['imap', 'profile'], positional: 0 },
  call: { flags: ['demo', 'account'], positional: 2 },
  sandbox: { flags: ['port'], positional: 0 },
  sweep: { flags: ['demo', 'dry-run', 'account'], positional: 0 },
  'sweep-rules': { flags: ['demo', 'dry-run', 'account'], positional: 0 },
  auth: { flags: ['account', 'force', 'no-browser'], positional: 0 },
  check: { flags: ['account', 'json'], positional: 0 },
  'check-new-mail': { flags: ['demo', 'account', 'topic-file', 'since-topic'], positional: 0 },
  'import-reference': { flags: ['force'], positional: 1 },
};
/** Commands that parse their own argv (their flags take values of their own). */
const OWN_PARSER: ReadonlySet<string> = new Set(['accounts', 'policy', 'log', 'undo', 'review']);

class UsageError extends Error {}

function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  let aliased: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const k = eq === -1 ? a.slice(2) : a.slice(2, eq);
      const v = eq === -1 ? undefined : a.slice(eq + 1);
      if (COMMAND_FLAGS.has(k) && v === undefined && positional.length === 0) {
        if (aliased !== undefined && aliased !== k)
          throw new UsageError(`--${aliased} and --${k} are two commands`);
        aliased = k;
        continue;
      }
      if (v !== undefined) flags.set(k, v);
      else if (VALUE_FLAGS.has(k)) {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith('--')) throw new UsageError(`--${k} needs a value`);
        flags.set(k, next);
        i++;
      } else flags.set(k, true);
    } else if (a.startsWith('-') && a !== '-' && positional.length === 0 && !/^-\d/.test(a)) {
      if (a === '-h') flags.set('help', true);
      else if (a === '-v' || a === '-V') flags.set('version', true);
      else throw new UsageError(`unknown option "${a}"`);
    } else positional.push(a);
  }
  if (aliased !== undefined) {
    // `mailwarden --http serve` or `mailwarden --sweep auth` would be two commands at once.
    if (
      positional.length > 0 &&
      positional[0] !== aliased &&
      !(aliased === 'http' && positional[0] === 'serve')
    )
      throw new UsageError(`--${aliased} and "${positional[0]}" are two commands`);
    if (positional[0] === aliased || positional[0] === 'serve') positional.shift();
    return { command: aliased, explicit: true, positional, flags };
  }
  const named = positional.shift();
  return { command: named ?? 'serve', explicit: named !== undefined, positional, flags };
}

/** Unknown flags, or arguments a command does not take, are a usage error: nothing starts. */
function checkArgs(p: Parsed): void {
  if (OWN_PARSER.has(p.command)) return;
  const spec = COMMANDS[p.command];
  if (spec === undefined) throw new UsageError(`unknown command "${p.command}"`);
  for (const [k] of p.flags) {
    if (k === 'help' || k === 'version') continue;
    if (!spec.flags.includes(k))
      throw new UsageError(p.explicit ? `"${p.command}" does not take --${k}` : `unknown option --${k}`);
    if (VALUE_FLAGS.has(k) && p.flags.get(k) === true) throw new UsageError(`--${k} needs a value`);
    if (!VALUE_FLAGS.has(k) && p.flags.get(k) !== true) throw new UsageError(`--${k} takes no value`);
  }
  if (p.positional.length > spec.positional) {
    throw new UsageError(`"${p.command}" does not take "${p.positional[spec.positional] ?? ''}"`);
  }
}

function flagString(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

async function serve(p: Parsed): Promise<void> {
  const account = flagString(p, 'account');
  const built = await buildRuntime({
    demo: p.flags.has('demo'),
    env: process.env,
    ...(account ? { account } : {}),
  });
  if (built.sandbox) stderrLogger.info('serving the sandbox mailbox', { sandbox: built.sandbox.url });
  // Loaded only when asked for, so a plain server's start-up does not pay for it.
  if (process.env['MAILWARDEN_AUTO_SWEEP'] === '1')
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
  const [tool, json] = p.positional;
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
    demo: p.flags.has('demo'),
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
    p = parseArgs(process.argv.slice(2));
    if (p.command === 'help') return void console.log(USAGE);
    if (!OWN_PARSER.has(p.command) && p.flags.has('version')) return void console.log(VERSION);
    if (!OWN_PARSER.has(p.command) && p.flags.has('help')) return void console.log(USAGE);
    checkArgs(p);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // Never a silently started server: a cron line with a typo must fail where someone sees it.
    console.error(`mailwarden: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  // MAILWARDEN_DEMO=1 is --demo for every command that takes it (the desktop bundle's switch).
  if (COMMANDS[p.command]?.flags.includes('demo') && demoFromEnv(process.env)) p.flags.set('demo', true);
  switch (p.command) {
    case 'serve':
      await serve(p);
      return undefined;
    case 'demo':
      if (p.flags.has('imap'))
        return (await import('./demo-imap.js')).runImapDemo(
          flagString(p, 'profile') === 'full' ? 'full' : 'bridge',
        );
      return (await import('./demo.js')).runDemo();
    case 'call':
      return call(p);
    case 'sandbox':
      await sandbox(p);
      return undefined;
    case 'http': {
      const account = flagString(p, 'account');
      const port = flagString(p, 'port');
      const { runHttp } = await import('./http.js');
      // Over stdio only the local client can reach the file-writing tools; over HTTP every
      // client holding the token can, so say at start where they may write, or that they can't.
      const downloadDir = process.env['MAILWARDEN_DOWNLOAD_DIR'];
      if (tiersFromEnv(process.env).has('manage'))
        stderrLogger.warn(
          downloadDir
            ? 'MAILWARDEN_DOWNLOAD_DIR is set: every HTTP client with the token can write files there (download_attachment, export_thread)'
            : 'the manage tier is on but MAILWARDEN_DOWNLOAD_DIR is unset: download_attachment and export_thread will refuse until it names a directory',
          downloadDir ? { downloadDir } : {},
        );
      await runHttp({
        demo: p.flags.has('demo'),
        env: process.env,
        ...(port === undefined ? {} : { port }),
        ...(account ? { account } : {}),
      });
      return undefined;
    }
    case 'policy': {
      const argv = process.argv.slice(2);
      return (await import('./policy.js')).policyCommand(argv.slice(argv.indexOf('policy') + 1), process.env);
    }
    case 'log':
    case 'undo':
    case 'review': {
      // Each parses its own argv (src/cli/review.ts); the person's side loads only when asked for.
      const argv = process.argv.slice(2);
      const rest = argv.slice(argv.indexOf(p.command) + 1);
      if (rest.includes('--help') || rest.includes('-h')) return void console.log(USAGE);
      const m = await import('./review.js');
      const run = { log: m.logCommand, undo: m.undoCommand, review: m.reviewCommand }[p.command];
      return run(rest, process.env).catch((e: unknown) => {
        if (!String((e as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')) throw e;
        console.error(`mailwarden ${p.command}: ${(e as Error).message}\n\n${USAGE}`);
        return 2;
      });
    }
    case 'accounts': {
      // Its own flags (--alias, --tiers…) take values, so it parses its own argv.
      const argv = process.argv.slice(2);
      return (await import('./accounts.js')).accountsCommand(
        argv.slice(argv.indexOf('accounts') + 1),
        process.env,
      );
    }
    case 'auth': {
      const account = flagString(p, 'account');
      return (await import('./auth.js')).runAuth({
        env: process.env,
        force: p.flags.has('force'),
        openBrowser: !p.flags.has('no-browser'),
        print: (line) => console.log(line),
        ...(account ? { account } : {}),
      });
    }
    case 'check': {
      const account = flagString(p, 'account');
      return (await import('./check.js')).runCheck({
        env: process.env,
        json: p.flags.has('json'),
        print: (line) => console.log(line),
        ...(account ? { account } : {}),
      });
    }
    case 'sweep-rules': {
      const account = flagString(p, 'account');
      return (await import('./sweep-rules.js')).sweepRulesCommand({
        demo: p.flags.has('demo'),
        dryRun: p.flags.has('dry-run'),
        ...(account ? { account } : {}),
      });
    }
    case 'sweep': {
      const account = flagString(p, 'account');
      return (await import('./sweep.js')).sweepCommand({
        demo: p.flags.has('demo'),
        dryRun: p.flags.has('dry-run'),
        ...(account ? { account } : {}),
      });
    }
    case 'check-new-mail': {
      const account = flagString(p, 'account');
      const sinceTopic = flagString(p, 'since-topic');
      const topicFile = flagString(p, 'topic-file');
      return (await import('./check-new-mail.js')).checkNewMailCommand({
        demo: p.flags.has('demo'),
        ...(account ? { account } : {}),
        ...(sinceTopic ? { sinceTopic } : {}),
        ...(topicFile ? { topicFile } : {}),
      });
    }
    case 'import-reference': {
      const { importReference } = await import('./import-reference.js');
      return importReference({
        env: process.env,
        force: p.flags.has('force'),
        print: (line) => console.log(line),
        ...(p.positional[0] === undefined ? {} : { dir: p.positional[0] }),
      });
    }
    default:
      console.error(`mailwarden: unknown command "${p.command}"\n\n${USAGE}`);
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
