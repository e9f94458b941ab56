import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDirUntilExit } from '../store/temp-dir.js';

/*
 * A real HAProxy (Debian's; .ci/run installs it) in front of several `mailwarden http` replicas,
 * started from a temp config like the sandbox's Dovecot servers, for the replica tests
 * (test/mcp/replicas.test.ts) and bench/replicas.mjs. Never used by a serving server. Two front doors to the same
 * replicas: `url` balances round robin and keeps a 2025-11-25 session on the replica that opened
 * it (a stick table keyed by the Mcp-Session-Id the replica answered with: the routing
 * docs/deployment.md describes); `plainUrl` balances every request round robin with no
 * stickiness, which is all a 2026-07-28 client needs.
 */

export const HAPROXY = '/usr/sbin/haproxy';

export interface Balancer {
  /** Sticky for sessions, round robin otherwise. */
  url: string;
  /** Round robin for every request. */
  plainUrl: string;
  /** HTTP answers (any status) each replica has given so far, through either door (stats socket). */
  served(): Promise<number[]>;
  /** Requests each replica is serving right now (HAProxy's current sessions per server). */
  inFlight(): Promise<number[]>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `replicas`: each replica's MCP URL (http://127.0.0.1:PORT/mcp). */
export async function startBalancer(replicas: readonly string[]): Promise<Balancer> {
  const temp = tempDirUntilExit('mailwarden-haproxy-');
  const dir = temp.path;
  const [sticky, plain] = [await freePort(), await freePort()];
  const sock = join(dir, 'admin.sock');
  const servers = (prefix: string) =>
    replicas.map((u, i) => {
      const { hostname, port } = new URL(u);
      return `  server ${prefix}${i} ${hostname}:${port}`;
    });
  const config = [
    'global',
    `  stats socket ${sock} mode 600 level admin`,
    '  log stderr format raw local0 err',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 120s',
    '  timeout server 120s',
    'frontend sticky',
    `  bind 127.0.0.1:${sticky}`,
    '  default_backend sticky',
    'frontend plain',
    `  bind 127.0.0.1:${plain}`,
    '  default_backend plain',
    'backend sticky',
    '  balance roundrobin',
    '  stick-table type string len 128 size 100k expire 30m',
    '  stick match req.hdr(mcp-session-id)',
    '  stick store-response res.hdr(mcp-session-id)',
    ...servers('s'),
    'backend plain',
    '  balance roundrobin',
    ...servers('p'),
    '',
  ].join('\n');
  const path = join(dir, 'haproxy.cfg');
  writeFileSync(path, config);
  const proc: ChildProcess = spawn(HAPROXY, ['-db', '-f', path], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  // Ready when both doors accept connections.
  const deadline = Date.now() + 15_000;
  for (const port of [sticky, plain]) {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`haproxy exited: ${err}`);
      if (await accepts(port)) break;
      if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${port}: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** The sum of `columns` of `show stat` for each replica, over both doors. */
  async function perReplica(columns: readonly string[]): Promise<number[]> {
    const csv = await adminCommand(sock, 'show stat\n');
    const [header, ...rows] = csv.split('\n').filter((l) => l.trim() !== '');
    const cols = (header ?? '').replace(/^# /, '').split(',');
    const [px, sv] = ['pxname', 'svname'].map((c) => cols.indexOf(c));
    const wanted = columns.map((c) => cols.indexOf(c));
    const counts = replicas.map(() => 0);
    for (const row of rows) {
      const f = row.split(',');
      const m = /^[sp](\d+)$/.exec(f[sv as number] ?? '');
      if (m === null || (f[px as number] !== 'sticky' && f[px as number] !== 'plain')) continue;
      const i = Number(m[1]);
      for (const a of wanted) counts[i] = (counts[i] ?? 0) + Number(f[a] ?? 0);
    }
    return counts;
  }
  return {
    url: `http://127.0.0.1:${sticky}/mcp`,
    plainUrl: `http://127.0.0.1:${plain}/mcp`,
    served: () => perReplica(['hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx', 'hrsp_5xx', 'hrsp_other']),
    inFlight: () => perReplica(['scur']),
    async close() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
      temp.remove();
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function adminCommand(sock: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(sock);
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.once('error', reject);
    s.once('end', () => resolve(out));
    s.write(command);
  });
}
