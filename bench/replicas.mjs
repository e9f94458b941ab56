// node bench/replicas.mjs (after npm run build): calls per second for many clients at once, served
// by one `mailwarden http` process directly and by three replicas behind a real HAProxy
// (src/sandbox/balancer.ts, round robin; docs/deployment.md), against the sandbox Gmail
// simulator with BENCH_LATENCY_MS (default 20) per request. Each of BENCH_CLIENTS (default 32)
// SDK v2 clients speaks 2026-07-28 and makes BENCH_CALLS (default 12) read calls in a row
// (search, get_thread, list_labels, get_profile in turn); the clients run at once, after one
// untimed call each (so every replica has signed in and loaded its tools). Prints JSON. A failed
// call's first three answers go to stderr.
import { spawn } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { demoCorpus, DEMO_ADDRESS } from '../dist/sandbox/corpus/index.js';
import { sandboxConfigDir } from '../dist/sandbox/client-config.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { startBalancer } from '../dist/sandbox/balancer.js';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, machine, round } from './lib.mjs';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const CALLS = Number(process.env.BENCH_CALLS ?? 12);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 20);
const TOKEN = 'bench-replicas-token-0123456789abcdef0123456789';

// Gmail's per-user quota (15,000 units a minute, which the sandbox enforces) is lifted here: with
// it, one mailbox's quota rather than the servers limits 32 clients (rate_limited answers).
const sandbox = await Sandbox.start({ users: [demoCorpus()], latencyMs: LATENCY, quotaUnitsPerMinute: 1e9 });
const dir = sandboxConfigDir(sandbox, DEMO_ADDRESS, 'mailwarden-bench-replicas-');
writeFileSync(join(dir, 'policy.json'), JSON.stringify({ default: { dailyMoveCap: 0 } }));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: dir,
  MAILWARDEN_CONFIG_DIR: dir,
  MAILWARDEN_SANDBOX_URL: sandbox.url,
  MAILWARDEN_TOKEN: TOKEN,
  MAILWARDEN_TOOLS: 'read',
};

function startReplica() {
  const proc = spawn(process.execPath, [MAIN, 'http', '--port', '0'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (d) => {
      err += d.toString();
      const m = /MCP over Streamable HTTP at (http:\/\/\S+)/.exec(err);
      if (m)
        resolve({ url: m[1], stop: () => new Promise((r) => (proc.once('exit', r), proc.kill('SIGTERM'))) });
    });
    proc.once('exit', (code) => reject(new Error(`replica exited ${code}: ${err}`)));
  });
}

async function connect(url) {
  const client = new Client(
    { name: 'bench-replicas', version: '0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return client;
}

/** CLIENTS clients at once, CALLS calls each: calls per second over the whole run. */
async function load(url) {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(url)));
  const first = await clients[0].callTool({
    name: 'search',
    arguments: { query: 'in:inbox', maxResults: 5 },
  });
  const threadId = first.structuredContent.threads[0].threadId;
  const mix = [
    ['search', { query: 'in:inbox', maxResults: 5 }],
    ['get_thread', { threadId, bodies: 'none' }],
    ['list_labels', {}],
    ['get_profile', {}],
  ];
  // Warm-up, not timed: round robin takes every replica through a sign-in and its first calls.
  await Promise.all(clients.map((c) => c.callTool({ name: 'get_profile', arguments: {} })));
  await Promise.all(
    clients.map((c) => c.callTool({ name: 'search', arguments: { query: 'in:inbox', maxResults: 5 } })),
  );
  let failed = 0;
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c, k) => {
      for (let i = 0; i < CALLS; i++) {
        const [name, args] = mix[(i + k) % mix.length];
        const t = performance.now();
        const r = await c.callTool({ name, arguments: args }, { timeout: 120_000 });
        latencies.push(performance.now() - t);
        if (r.isError) {
          failed++;
          if (failed <= 3) console.error(name, JSON.stringify(r.content).slice(0, 300));
        }
      }
    }),
  );
  const wall = performance.now() - t0;
  await Promise.all(clients.map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  const calls = CLIENTS * CALLS;
  return {
    calls,
    failed,
    wallMs: round(wall),
    callsPerSecond: round((calls / wall) * 1000, 2),
    medianMs: round(latencies[Math.floor(latencies.length / 2)]),
    p95Ms: round(latencies[Math.floor(latencies.length * 0.95)]),
  };
}

const out = {
  date: new Date().toISOString(),
  machine: machine(),
  clients: CLIENTS,
  callsEach: CALLS,
  latencyMs: LATENCY,
};
try {
  const one = await startReplica();
  out.oneProcess = await load(one.url);
  const more = [await startReplica(), await startReplica()];
  const lb = await startBalancer([one.url, ...more.map((r) => r.url)]);
  try {
    out.threeReplicasBehindHaproxy = await load(lb.plainUrl);
  } finally {
    await lb.close();
  }
  out.ratio = round(out.threeReplicasBehindHaproxy.callsPerSecond / out.oneProcess.callsPerSecond, 2);
  await Promise.all([one, ...more].map((r) => r.stop()));
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
