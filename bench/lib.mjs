// Shared pieces for the benchmarks: a sandbox + spawned server + real MCP client, and stats.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { sandboxConfigDir } from '../dist/sandbox/client-config.js';

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

/** A config dir holding the sandbox's OAuth client and a refresh token for `address`. */
export function configFor(sandbox, address) {
  return sandboxConfigDir(sandbox, address, 'mailwarden-bench-');
}

export async function connect(env) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'mailwarden-bench', version: '0' });
  await client.connect(transport);
  return client;
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
