import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDirUntilExit } from '../../src/store/temp-dir.js';

// The built module, as `mailwarden demo` runs it (npm test builds first).
const MODULE = pathToFileURL(resolve(import.meta.dirname, '../../dist/store/temp-dir.js')).href;

/** A child that makes a temp dir, prints it, then does `then` (exit, or wait to be signalled). */
function child(then: 'exit' | 'wait'): Promise<{
  dir: string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(sig: NodeJS.Signals): void;
}> {
  const script = `
    const { tempDirUntilExit } = await import(${JSON.stringify(MODULE)});
    const d = tempDirUntilExit('mailwarden-exit-test-');
    console.log(d.path);
    ${then === 'exit' ? 'process.exitCode = 0;' : 'setInterval(() => {}, 1000);'}
  `;
  const p = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((ok) =>
    p.once('exit', (code, signal) => ok({ code, signal })),
  );
  return new Promise((ok, fail) => {
    let out = '';
    p.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) ok({ dir: out.trim(), exited, kill: (s) => p.kill(s) });
    });
    p.once('error', fail);
  });
}

describe('temp dirs for a throwaway run', () => {
  it('remove() deletes the dir at once', () => {
    const d = tempDirUntilExit('mailwarden-exit-test-');
    expect(existsSync(d.path)).toBe(true);
    d.remove();
    expect(existsSync(d.path)).toBe(false);
  });

  it('are gone when the process ends without removing them', async () => {
    const c = await child('exit');
    expect(await c.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(c.dir)).toBe(false);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'are gone after %s, and the signal still ends the process',
    async (sig) => {
      const c = await child('wait');
      expect(existsSync(c.dir)).toBe(true);
      c.kill(sig);
      expect(await c.exited).toEqual({ code: null, signal: sig });
      expect(existsSync(c.dir)).toBe(false);
    },
  );
});
