import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { getMcpConfigForManifest } from '@anthropic-ai/mcpb';
import type { McpbManifestAny } from '@anthropic-ai/mcpb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';
import { cleanEnv, PKG, ROOT, run, serveAndList, tempDir } from './lib.js';

/**
 * The desktop bundle: `npm run mcpb`'s script builds mailwarden-<version>.mcpb (it installs the
 * keyring's native builds per platform from the npm registry, as CI can), the mcpb CLI
 * validates the manifest and unpacks the bundle into an empty directory, and the server is
 * started from that directory alone, with the command, arguments and environment that
 * @anthropic-ai/mcpb (the loader MCPB hosts use) derives from the manifest and a user's settings.
 */

const MCPB = join(ROOT, 'node_modules', '.bin', 'mcpb');
const tmp = tempDir('mcpb');
const unpacked = join(tmp.path, 'unpacked');
const file = join(tmp.path, `${PKG.name}-${PKG.version}.mcpb`);
const manifestPath = join(ROOT, 'mcpb', 'manifest.json');

beforeAll(async () => {
  await run(process.execPath, [join(ROOT, 'scripts', 'mcpb.mjs'), tmp.path], { cwd: ROOT });
  await run(MCPB, ['unpack', file, unpacked]);
}, 120_000);

afterAll(() => tmp.remove());

/** What a host launches for this bundle with these settings (the host's own node for "node"). */
async function launch(userConfig: Record<string, string | boolean>, configDir: string) {
  const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8')) as McpbManifestAny;
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: unpacked,
    systemDirs: {},
    userConfig,
    pathSeparator: '/',
  });
  if (config === undefined) throw new Error('the manifest gave no mcp_config');
  expect(config.command).toBe('node');
  return {
    command: process.execPath,
    args: config.args ?? [],
    env: { ...cleanEnv(configDir), ...(config.env ?? {}) },
  };
}

describe('the desktop bundle (mcpb)', () => {
  it('passes `mcpb validate` and carries the package version', async () => {
    const { stdout } = await run(MCPB, ['validate', manifestPath]);
    expect(stdout).toContain('Manifest schema validation passes');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      version: string;
      manifest_version: string;
    };
    expect(manifest.manifest_version).toBe('0.4');
    expect(manifest.version).toBe(PKG.version);
  });

  it('is a file named after the version holding the bundled server and its one native dependency', () => {
    expect(statSync(file).size).toBeGreaterThan(0);
    expect(existsSync(join(unpacked, 'server', 'main.js'))).toBe(true);
    const pkg = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toBe(PKG.version);
    // The keyring's native builds for the desktop platforms, not only the one that built it.
    const builds = readdirSync(join(unpacked, 'node_modules', '@napi-rs')).sort();
    expect(builds).toEqual(
      expect.arrayContaining([
        'keyring',
        'keyring-darwin-arm64',
        'keyring-darwin-x64',
        'keyring-linux-x64-gnu',
        'keyring-win32-x64-msvc',
      ]),
    );
  });

  it("loads the keyring's native build for this platform from the unpacked bundle", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('@napi-rs/keyring'); console.log(typeof m.Entry)",
      ],
      { cwd: unpacked },
    );
    expect(stdout.trim()).toBe('function');
  });

  it('serves the demo mailbox from the unpacked bundle alone with the default settings', async () => {
    const l = await launch({}, tmp.path);
    expect(l.env['MAILWARDEN_DEMO']).toBe('true');
    const bundled = await serveAndList(l.command, l.args, l.env);
    const here = await serveAndList(process.execPath, [MAIN, '--demo'], cleanEnv(tmp.path));
    expect(bundled.serverVersion).toBe(PKG.version);
    expect(bundled.tools).toEqual(here.tools);
    expect(bundled.profile.structured?.['emailAddress']).toBe(DEMO_ADDRESS);
  });

  it('maps the settings onto the server: demo off and the read tier serve no account and no write tool', async () => {
    const l = await launch({ demo: false, tiers: 'read', confirm: 'require' }, tmp.path);
    expect(l.env).toMatchObject({
      MAILWARDEN_DEMO: 'false',
      MAILWARDEN_TOOLS: 'read',
      MAILWARDEN_CONFIRM: 'require',
      MAILWARDEN_ACCOUNT: '',
      MAILWARDEN_DOWNLOAD_DIR: '',
      MAILWARDEN_TOKEN_PASSPHRASE: '',
    });
    const served = await serveAndList(l.command, l.args, l.env);
    const demo = await serveAndList(process.execPath, [MAIN, '--demo'], cleanEnv(tmp.path));
    expect(served.tools).toContain('search');
    expect(served.tools).not.toContain('archive');
    expect(served.tools.length).toBeLessThan(demo.tools.length);
    // No account is configured in this empty config dir, and the demo is off: nothing to serve.
    expect(served.profile.isError).toBe(true);
    expect(served.profile.text).toContain('not_authorized');
  });
});
