import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';
import { cleanEnv, PKG, ROOT, run, serveAndList, tempDir, treeBytes } from './lib.js';

/**
 * The npm package as a user gets it: `npm pack`, then an install of that tarball into an empty
 * prefix with production dependencies only (from the registry), then the installed bin — no
 * file of this checkout is used. The tarball holds the esbuild bundle, so the runtime
 * dependency is the one the bundle leaves external, the native keyring (the PostgreSQL driver is
 * bundled into a chunk loaded only with MAILWARDEN_STATE=postgres://…).
 */

const INSTALL_MS = 300_000;
const tmp = tempDir('pack');
const prefix = join(tmp.path, 'prefix');
const bin = join(prefix, 'node_modules', '.bin', PKG.name);
let packed: { filename: string; size: number; unpackedSize: number; files: Array<{ path: string }> };

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp.path], {
    cwd: ROOT,
    maxBuffer: 64 * 2 ** 20,
  });
  [packed] = JSON.parse(stdout) as [typeof packed];
  await run(
    'npm',
    ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefix', prefix, join(tmp.path, packed.filename)],
    { cwd: tmp.path, maxBuffer: 64 * 2 ** 20 },
  );
}, INSTALL_MS);

afterAll(() => tmp.remove());

describe('the packed npm package', () => {
  it('holds the bundled bin, server.json, the README and the LICENSE, and none of the sources or tests', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'server.json', PKG.bin[PKG.name]]),
    );
    expect(
      paths.filter(
        (p) =>
          !p.startsWith('dist/bundle/') &&
          !['package.json', 'README.md', 'LICENSE', 'server.json'].includes(p),
      ),
    ).toEqual([]);
  });

  it('installs with production dependencies only and prints its version', async () => {
    expect(existsSync(bin)).toBe(true);
    const installed = JSON.parse(
      readFileSync(join(prefix, 'node_modules', PKG.name, 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    expect(installed.version).toBe(PKG.version);
    const { stdout } = await run(bin, ['--version'], { env: cleanEnv(tmp.path) });
    expect(stdout.trim()).toBe(PKG.version);
  });

  it('answers `call get_profile {} --demo` from the sandbox mailbox', async () => {
    const { stdout } = await run(bin, ['call', 'get_profile', '{}', '--demo'], { env: cleanEnv(tmp.path) });
    expect((JSON.parse(stdout) as { emailAddress: string }).emailAddress).toBe(DEMO_ADDRESS);
  });

  it('runs the guided tour, which calls the tools end to end, from the installed package alone', async () => {
    // Tool calls load what tools/list does not (the public suffix list, the confusables table,
    // charset tables, the MCP client): a library left outside the bundle would fail here.
    const { stdout } = await run(bin, ['demo'], { env: cleanEnv(tmp.path), maxBuffer: 16 * 2 ** 20 });
    expect(stdout).toContain('[quoted history removed]');
    expect(stdout).toContain('restored 3 of 3 with 0 moves left');
  }, 120_000);

  it('serves tools/list over stdio with --demo: the same tools as this checkout', async () => {
    const installed = await serveAndList(bin, ['--demo'], cleanEnv(tmp.path));
    const here = await serveAndList(process.execPath, [MAIN, '--demo'], cleanEnv(tmp.path));
    expect(installed.serverVersion).toBe(PKG.version);
    expect(installed.tools).toEqual(here.tools);
    expect(installed.tools).toEqual(expect.arrayContaining(['search', 'get_thread', 'archive']));
    expect(installed.profile.structured?.['emailAddress']).toBe(DEMO_ADDRESS);
  });

  it('installs in at most 40 MB with its production dependencies', () => {
    const bytes = treeBytes(join(prefix, 'node_modules'));
    console.log(
      `installed size: ${bytes} bytes (tarball ${packed.size} bytes, unpacked ${packed.unpackedSize})`,
    );
    expect(bytes).toBeLessThanOrEqual(40 * 1e6);
  });
});
