import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';
import { cleanEnv, PKG, ROOT, run, serveAndList, tempDir } from './lib.js';

/**
 * The repository root is a Claude Code plugin: .claude-plugin/plugin.json, and .mcp.json that
 * starts the published package at exactly this version, on the demo mailbox unless the user
 * set MAILWARDEN_DEMO=0 (so a working demo comes before any account exists).
 */

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

const plugin = JSON.parse(readFileSync(join(ROOT, '.claude-plugin', 'plugin.json'), 'utf8')) as Record<
  string,
  unknown
>;
const mcp = JSON.parse(readFileSync(join(ROOT, '.mcp.json'), 'utf8')) as {
  mcpServers: Record<string, Entry>;
};
const entry = mcp.mcpServers[PKG.name] as Entry;
const tmp = tempDir('plugin');
afterAll(() => tmp.remove());

/** Claude Code's expansion in .mcp.json: ${VAR} and ${VAR:-default}; unset ${VAR} stays as written. */
function expand(s: string, env: Record<string, string | undefined>): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, name: string, dflt?: string) => {
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    return dflt ?? whole;
  });
}

/** The server as .mcp.json starts it, with this checkout's bin in place of `npx -y mailwarden@V`. */
function asLaunched(userEnv: Record<string, string>) {
  const env = Object.fromEntries(Object.entries(entry.env ?? {}).map(([k, v]) => [k, expand(v, userEnv)]));
  return {
    args: [MAIN, ...entry.args.slice(2).map((a) => expand(a, userEnv))],
    env: { ...cleanEnv(tmp.path), ...env },
  };
}

describe('the Claude Code plugin', () => {
  it('has a plugin.json of this version whose skills and servers are the root defaults', () => {
    expect(plugin['name']).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    expect(plugin['version']).toBe(PKG.version);
    expect(typeof plugin['description']).toBe('string');
    // No custom component paths: Claude Code then reads skills/ and .mcp.json at the plugin root.
    for (const key of ['skills', 'commands', 'agents', 'hooks', 'mcpServers'])
      expect(plugin).not.toHaveProperty(key);
  });

  it("is listed by the repository's own marketplace at this version, from the repository root", () => {
    const market = JSON.parse(readFileSync(join(ROOT, '.claude-plugin', 'marketplace.json'), 'utf8')) as {
      plugins: Array<{ name: string; source: string; version: string }>;
    };
    expect(market.plugins).toEqual([
      expect.objectContaining({ name: plugin['name'], source: './', version: PKG.version }),
    ]);
  });

  it('starts the published package at exactly this version with npx', () => {
    expect(Object.keys(mcp.mcpServers)).toEqual([PKG.name]);
    expect(entry.command).toBe('npx');
    expect(entry.args.slice(0, 2)).toEqual(['-y', `${PKG.name}@${PKG.version}`]);
  });

  it('serves the demo mailbox when the user has set nothing', async () => {
    const l = asLaunched({});
    expect(l.env['MAILWARDEN_DEMO']).toBe('1');
    const served = await serveAndList(process.execPath, l.args, l.env);
    expect(served.profile.structured?.['emailAddress']).toBe(DEMO_ADDRESS);
  });

  it('serves the configured account instead once MAILWARDEN_DEMO=0 is set', async () => {
    const l = asLaunched({ MAILWARDEN_DEMO: '0' });
    const served = await serveAndList(process.execPath, l.args, l.env);
    // An empty config dir: no account, so get_profile says how to connect one.
    expect(served.profile.isError).toBe(true);
    expect(served.profile.text).toContain('not_authorized');
  });

  it('refuses to start on a MAILWARDEN_DEMO it cannot read, naming the variable', async () => {
    const failed = await run(process.execPath, [MAIN, 'call', 'get_profile', '{}'], {
      env: cleanEnv(tmp.path, { MAILWARDEN_DEMO: 'maybe' }),
    }).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(
      'invalid_input: MAILWARDEN_DEMO: "maybe" is not a switch; use 1/true/yes/on or 0/false/no/off',
    );
  });
});
