import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { withWriteLock, writeLockPath } from '../../src/policy/write-lock.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Real processes, as in production: the lock module bundled the way the bin is (esbuild, ESM,
 * proper-lockfile inlined), so the children run exactly the code a second server would.
 */
let work: string;
let worker: string;
let bundleDir: string | undefined;
const children: ChildProcess[] = [];

beforeAll(async () => {
  work = tempDir('mailwarden-lock-');
  // Inside the repo (.tmp is ignored), so the one external package resolves from node_modules.
  const repo = join(import.meta.dirname, '../..');
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  bundleDir = mkdtempSync(join(repo, '.tmp', 'write-lock-'));
  const bundle = join(bundleDir, 'write-lock.mjs');
  await build({
    entryPoints: [join(repo, 'src/policy/write-lock.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundle,
    // As in scripts/bundle.mjs: the keyring loads a native binary of its own.
    external: ['@napi-rs/keyring'],
    banner: {
      js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);",
    },
    logLevel: 'warning',
  });
  worker = join(work, 'worker.mjs');
  writeFileSync(
    worker,
    `import { appendFileSync } from 'node:fs';
import { withWriteLock } from ${JSON.stringify(pathToFileURL(bundle).href)};
const [mode, dir, out, n, extra] = process.argv.slice(2);
const env = { MAILWARDEN_CONFIG_DIR: dir };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (mode === 'loop') {
  // Both start at the same instant, so without the lock their lines would interleave.
  await sleep(Number(extra) - Date.now());
  for (let i = 0; i < Number(n); i++) {
    await withWriteLock(env, 'work', async () => {
      appendFileSync(out, process.pid + ' start ' + i + '\\n');
      await sleep(1 + Math.random() * 4);
      appendFileSync(out, process.pid + ' end ' + i + '\\n');
    }, { timeoutMs: 20000 });
  }
} else {
  await withWriteLock(env, 'work', async () => {
    process.stdout.write('locked\\n');
    await sleep(Number(n));
    process.stdout.write('releasing\\n');
  }, { staleMs: Number(extra) });
}
`,
  );
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true });
});

function run(args: string[]): { child: ChildProcess; stdout: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [worker, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => text, exited };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const configDir = (): string => mkdtempSync(join(work, 'cfg-'));

describe('withWriteLock across processes', () => {
  it('two processes taking the lock 20 times each never interleave', async () => {
    const dir = configDir();
    const out = join(dir, 'shared.txt');
    writeFileSync(out, '');
    const at = String(Date.now() + 1500);
    const a = run(['loop', dir, out, '20', at]);
    const b = run(['loop', dir, out, '20', at]);
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(80);
    for (let i = 0; i < lines.length; i += 2) {
      const [pid, what, n] = (lines[i] as string).split(' ');
      expect(what).toBe('start');
      expect(lines[i + 1]).toBe(`${pid} end ${n}`);
    }
    expect(new Set(lines.map((l) => l.split(' ')[0])).size).toBe(2);
    // The lock's parent directory is the user's alone.
    expect(statSync(join(dir, 'locks')).mode & 0o777).toBe(0o700);
  }, 60_000);

  it('four waiters finding the same dead lock at once: one takes it over, none run together', async () => {
    const dir = configDir();
    const lock = writeLockPath({ MAILWARDEN_CONFIG_DIR: dir }, 'work');
    mkdirSync(lock, { recursive: true });
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, hourAgo, hourAgo);
    const out = join(dir, 'shared.txt');
    writeFileSync(out, '');
    const at = String(Date.now() + 1500);
    const all = [1, 2, 3, 4].map(() => run(['loop', dir, out, '5', at]));
    for (const c of all) expect(await c.exited).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(40);
    for (let i = 0; i < lines.length; i += 2) {
      const [pid, what, n] = (lines[i] as string).split(' ');
      expect(what).toBe('start');
      expect(lines[i + 1]).toBe(`${pid} end ${n}`);
    }
  }, 60_000);

  it('a SIGKILLed holder does not block forever: its lock is taken over once stale', async () => {
    const dir = configDir();
    const holder = run(['hold', dir, '', '3600000', '3000']);
    await until(() => holder.stdout().includes('locked'));
    holder.child.kill('SIGKILL');
    await holder.exited;
    const start = Date.now();
    const got = await withWriteLock({ MAILWARDEN_CONFIG_DIR: dir }, 'work', async () => Date.now() - start, {
      staleMs: 3000,
      timeoutMs: 15_000,
    });
    expect(got).toBeGreaterThan(1_000);
    expect(got).toBeLessThan(10_000);
  }, 30_000);

  it('a live holder is refreshed, never taken for stale, however long it writes', async () => {
    const dir = configDir();
    // Holds for twice the stale age: only the refreshes keep it.
    const holder = run(['hold', dir, '', '6000', '3000']);
    await until(() => holder.stdout().includes('locked'));
    const seen = await withWriteLock({ MAILWARDEN_CONFIG_DIR: dir }, 'work', async () => holder.stdout(), {
      staleMs: 3000,
      timeoutMs: 20_000,
    });
    expect(seen).toContain('releasing');
    expect(await holder.exited).toBe(0);
  }, 30_000);

  it('gives up after timeoutMs with a clear, retryable error naming the account and the lock', async () => {
    const dir = configDir();
    const holder = run(['hold', dir, '', '10000', '20000']);
    await until(() => holder.stdout().includes('locked'));
    const e = await withWriteLock({ MAILWARDEN_CONFIG_DIR: dir }, 'work', async () => 'ran', {
      timeoutMs: 400,
    }).catch((x: unknown) => x);
    holder.child.kill('SIGKILL');
    expect(e).toBeInstanceOf(MailError);
    const m = e as MailError;
    expect(m.code).toBe('upstream_unavailable');
    expect(m.retryable).toBe(true);
    expect(m.message).toContain('another mailwarden process is writing to account work');
    expect(m.message).toContain(writeLockPath({ MAILWARDEN_CONFIG_DIR: dir }, 'work'));
  }, 30_000);
});

describe('withWriteLock in one process', () => {
  it('concurrent writers of one account run one at a time; other accounts do not wait', async () => {
    const env = { MAILWARDEN_CONFIG_DIR: configDir() };
    const events: string[] = [];
    const job = (account: string, name: string) =>
      withWriteLock(env, account, async () => {
        events.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 30));
        events.push(`${name}-`);
      });
    await Promise.all([job('work', 'a'), job('work', 'b'), job('work', 'c'), job('home', 'h')]);
    const work = events.filter((e) => !e.startsWith('h'));
    expect(work).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    expect(events.indexOf('h+')).toBeLessThan(events.indexOf('a-'));
  });

  it('the lock is released when the work throws, and the error is the work’s own', async () => {
    const env = { MAILWARDEN_CONFIG_DIR: configDir() };
    await expect(
      withWriteLock(env, 'work', async () => {
        throw new TypeError('boom');
      }),
    ).rejects.toThrow(TypeError);
    expect(await withWriteLock(env, 'work', async () => 'again', { timeoutMs: 1000 })).toBe('again');
  });

  it('a locks folder removed between two writes is made again, and the lock is free afterwards', async () => {
    const env = { MAILWARDEN_CONFIG_DIR: configDir() };
    const lockDir = writeLockPath(env, 'work');
    expect(await withWriteLock(env, 'work', async () => statSync(lockDir).isDirectory())).toBe(true);
    rmSync(join(lockDir, '..'), { recursive: true, force: true });
    expect(
      await withWriteLock(env, 'work', async () => statSync(lockDir).isDirectory(), { timeoutMs: 1000 }),
    ).toBe(true);
    expect(() => statSync(lockDir)).toThrow(/ENOENT/);
  });

  it('refuses an account name that is not one', () => {
    expect(() => writeLockPath({}, '../x')).toThrow(MailError);
  });
});
