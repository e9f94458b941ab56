#!/usr/bin/env node
import { serveOverStdio } from '../mcp/stdio.js';
import { tiersFromEnv } from '../policy/tiers.js';
import { isMailError } from '../mail/errors.js';
import { buildRuntime, DEMO_ACCOUNT_ADDRESS, startDemoSandbox, stderrLogger, VERSION } from './runtime.js';

const USAGE = `mailwarden ${VERSION} — an MCP server for your mailbox that never sends mail

Usage:
  mailwarden [serve] [--demo] [--account NAME]   MCP server over stdio (--demo: the embedded sandbox mailbox)
  mailwarden demo                                a guided tour through the real tools on the sandbox mailbox
  mailwarden demo --imap [--profile full]        the read tools on a throwaway Dovecot (needs Dovecot installed)
  mailwarden call TOOL '{json}' [--demo]         call one tool and print its structured result
  mailwarden sandbox [--port N]                  serve the Gmail simulator on 127.0.0.1 for other programs
  mailwarden sweep [--dry-run] [--account NAME]  return due snoozed threads to the inbox (for cron); JSON out
  mailwarden auth [--account NAME] [--force] [--no-browser]
                                                 sign in to Gmail in a browser and store the token (encrypted)
  mailwarden check [--account NAME] [--json]     check credentials, token, scopes and one live call; prints fixes
  mailwarden http [--port N] [--demo] [--account NAME]
                                                 MCP over Streamable HTTP on 127.0.0.1:8787/mcp (also --http)
  mailwarden accounts [list | default NAME | remove NAME | add NAME [--alias A] [--tiers T]]
                                                 the accounts one server serves (accounts.json)
  mailwarden policy show [--account NAME] [--json]
                                                 the effective write policy (policy.json) per account
  mailwarden accounts add NAME --imap --host HOST [--port N] [--tls | --starttls] --user USER
      [--password-stdin] [--pin-sha256 HEX | --pin-cert FILE | --pin-from-server] [--authserv-id ID]
                                                 an IMAP account (Proton Mail Bridge, Fastmail, Dovecot…)
  mailwarden --version | --help

Environment: MAILWARDEN_TOOLS (tiers: read,manage,filters), MAILWARDEN_READONLY=1,
MAILWARDEN_ACCOUNT, MAILWARDEN_CONFIG_DIR, MAILWARDEN_CREDENTIALS (OAuth client JSON),
MAILWARDEN_TOKEN_PASSPHRASE (encrypt tokens with a passphrase), MAILWARDEN_KEYSTORE=auto|off,
MAILWARDEN_AUTH_TIMEOUT_MS, MAILWARDEN_AUTO_SWEEP=1 (sweep snoozed threads at
start and hourly while serving), MAILWARDEN_NOW (testing aid: the clock starts at this ISO instant).
HTTP: MAILWARDEN_TOKEN (required bearer), PORT, MAILWARDEN_HOST (default 127.0.0.1),
MAILWARDEN_ALLOWED_HOSTS, MAILWARDEN_ALLOWED_CLIENTS (CIDRs), MAILWARDEN_ALLOW_NO_TOKEN=1.`;

interface Parsed {
  command: string;
  positional: string[];
  flags: Map<string, string | true>;
}

function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a.startsWith('--')) {
      const [k, v] = a.slice(2).split('=', 2) as [string, string | undefined];
      const next = argv[i + 1];
      if (v !== undefined) flags.set(k, v);
      else if ((k === 'port' || k === 'account') && next !== undefined) {
        flags.set(k, next);
        i++;
      } else flags.set(k, true);
    } else positional.push(a);
  }
  const command = positional.shift() ?? 'serve';
  return { command, positional, flags };
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
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    void built.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  serveOverStdio(built.runtime, shutdown);
}

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
  const p = parseArgs(process.argv.slice(2));
  if (p.flags.has('version')) return void console.log(VERSION);
  if (p.flags.has('help') || p.command === 'help') return void console.log(USAGE);
  if (p.flags.has('http') && p.command === 'serve') p.command = 'http';
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
    case 'sweep': {
      const account = flagString(p, 'account');
      return (await import('./sweep.js')).sweepCommand({
        demo: p.flags.has('demo'),
        dryRun: p.flags.has('dry-run'),
        ...(account ? { account } : {}),
      });
    }
    default:
      console.error(`unknown command "${p.command}"\n\n${USAGE}`);
      return 2;
  }
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (e: unknown) => {
    console.error(isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  },
);
