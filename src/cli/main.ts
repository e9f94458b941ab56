#!/usr/bin/env node
import { serveOverStdio } from '../mcp/stdio.js';
import { isMailError } from '../mail/errors.js';
import { buildRuntime, DEMO_ACCOUNT_ADDRESS, startDemoSandbox, stderrLogger, VERSION } from './runtime.js';

const USAGE = `mailwarden ${VERSION} — an MCP server for your mailbox that never sends mail

Usage:
  mailwarden [serve] [--demo] [--account NAME]   MCP server over stdio (--demo: the embedded sandbox mailbox)
  mailwarden demo                                a guided tour through the real tools on the sandbox mailbox
  mailwarden call TOOL '{json}' [--demo]         call one tool and print its structured result
  mailwarden sandbox [--port N]                  serve the Gmail simulator on 127.0.0.1 for other programs
  mailwarden --version | --help

Environment: MAILWARDEN_TOOLS (tiers: read,manage,filters), MAILWARDEN_READONLY=1,
MAILWARDEN_ACCOUNT, MAILWARDEN_CONFIG_DIR.`;

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
  switch (p.command) {
    case 'serve':
      await serve(p);
      return undefined;
    case 'demo':
      return (await import('./demo.js')).runDemo();
    case 'call':
      return call(p);
    case 'sandbox':
      await sandbox(p);
      return undefined;
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
