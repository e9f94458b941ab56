// Shared pieces for the benchmarks: a sandbox + spawned server + real MCP client, and stats.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
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
