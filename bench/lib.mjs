// Shared pieces for the benchmarks: a sandbox + spawned server + real MCP client, and stats.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { sandboxConfigDir } from '../dist/sandbox/client-config.js';
import { readAccounts, writeAccounts } from '../dist/store/accounts.js';

export const MAIN = resolve(import.meta.dirname, '../dist/bundle/main.js');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function round(x, d = 1) {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

// The dirs a bench made (config dirs with a token and an action log): removed when it exits.
const made = [];
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A temp dir of this bench's, removed when the bench exits. */
export function benchDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A config dir holding the sandbox's OAuth client and a refresh token for `address`. */
export function configFor(sandbox, address) {
  const dir = sandboxConfigDir(sandbox, address, 'mailwarden-bench-');
  made.push(dir);
  return dir;
}

export async function connect(env) {
  return (await connectServer(env)).client;
}

/**
 * The built server over stdio with `env`, and its process id (for its CPU or its instruction
 * counts). `wrapper`: a program and its arguments that run node (e.g. valgrind); `nodeFlags`:
 * node's own; `timeout`: for the connection's first exchange.
 */
export async function connectServer(env, { wrapper = [], nodeFlags = [], timeout } = {}) {
  const node = [process.execPath, ...nodeFlags, MAIN];
  const [command, ...args] = [...wrapper, ...node];
  const transport = new StdioClientTransport({
    command,
    args,
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'mailwarden-bench', version: '0' });
  await client.connect(transport, timeout === undefined ? undefined : { timeout });
  return { client, pid: transport.pid };
}

/** SDK v1 (`@modelcontextprotocol/sdk` 1.32, what most clients embed) over stdio. */
export async function connectV1(env) {
  const { Client: ClientV1 } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport: StdioV1 } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioV1({
    command: process.execPath,
    args: [MAIN],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'ignore',
  });
  const client = new ClientV1({ name: 'mailwarden-bench-v1', version: '0' });
  await client.connect(transport);
  return client;
}

/**
 * Spawn → tools/list answered with no client library at all: newline-delimited JSON-RPC over the
 * child's stdio (initialize, initialized, tools/list). Resolves with the milliseconds taken.
 * `main`: another build's entry (bench/startup-compare.mjs); default this one's.
 */
export function rawListToolsMs(env, main = MAIN) {
  const t = performance.now();
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  return new Promise((resolve, reject) => {
    let buf = '';
    child.on('error', reject);
    child.stdout.on('data', (d) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (msg.id === 1) {
          send({ method: 'notifications/initialized' });
          send({ id: 2, method: 'tools/list' });
        } else if (msg.id === 2) {
          const ms = performance.now() - t;
          if (!Array.isArray(msg.result?.tools))
            reject(new Error(`tools/list failed: ${JSON.stringify(msg)}`));
          child.once('exit', () => resolve(ms));
          child.stdin.end();
        }
      }
    });
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
  });
}

export function nodeBaselineMs(runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(performance.now() - t);
  }
  return times;
}

/** The machine a run was measured on, for the JSON every benchmark prints. */
export function machine() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memGiB: round(totalmem() / 2 ** 30),
    node: process.version,
  };
}

/** Points a throwaway IMAP demo account at another port (and security) in its accounts.json. */
export async function repointImap(demo, port, security) {
  const list = await readAccounts(demo.env);
  await writeAccounts(
    demo.env,
    list.map((e) => {
      if (e.name !== demo.account) return e;
      const imap = { ...e.imap, port, security };
      // Plain IMAP has no certificate to pin.
      if (security === 'insecure-loopback') {
        delete imap.pinSha256;
        delete imap.pinCertPem;
      }
      return { ...e, imap };
    }),
  );
}
