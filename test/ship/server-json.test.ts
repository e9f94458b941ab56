import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PKG, ROOT } from './lib.js';

/**
 * server.json (the MCP registry entry) describes the npm package over stdio with every
 * environment variable the stdio server reads, and names none that the code does not read.
 */

interface EnvVar {
  name: string;
  description: string;
  isSecret?: boolean;
}
const server = JSON.parse(readFileSync(join(ROOT, 'server.json'), 'utf8')) as {
  $schema: string;
  name: string;
  description: string;
  version: string;
  packages: Array<{
    registryType: string;
    identifier: string;
    version: string;
    transport: { type: string };
    environmentVariables: EnvVar[];
  }>;
};

/**
 * Names in src/ read from the environment. Every read in src/ goes through a quoted literal
 * (env['NAME'], or a constant or table entry holding 'NAME'), so those are what is collected,
 * with the files each appears in.
 */
function variablesInSource(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const src = join(ROOT, 'src');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, 'utf8');
    for (const m of text.matchAll(/['"`](MAILWARDEN_[A-Z0-9_]+)['"`]/g)) {
      const name = m[1] as string;
      if (!found.has(name)) found.set(name, new Set());
      found.get(name)?.add(relative(ROOT, path));
    }
  }
  return found;
}

/**
 * The files the stdio server can run: every module reachable from its entry (the serve command's
 * runtime and the stdio transport) through static imports and dynamic `import()`s, so a variable
 * a tool reads on first use (add_account's sign-in) counts as much as one read at start.
 */
function servingFiles(): Set<string> {
  const seen = new Set<string>();
  const queue = ['src/cli/runtime.ts', 'src/mcp/stdio.ts'];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
      const target = relative(ROOT, join(ROOT, dirname(file), `${m[1] as string}.ts`));
      if (existsSync(join(ROOT, target))) queue.push(target);
    }
  }
  return seen;
}

/** Left out of server.json on purpose, each with the only files allowed to name it. */
const NOT_LISTED: Record<string, { why: string; files: string[] }> = {
  MAILWARDEN_PIN_MISMATCH: { why: 'an error code, not a variable', files: ['src/providers/imap/tls.ts'] },
  ...Object.fromEntries(
    [
      'MAILWARDEN_TOKEN',
      'MAILWARDEN_HOST',
      'MAILWARDEN_ALLOWED_HOSTS',
      'MAILWARDEN_ALLOWED_CLIENTS',
      'MAILWARDEN_ALLOW_NO_TOKEN',
      'MAILWARDEN_SESSION_IDLE_SECONDS',
      'MAILWARDEN_MAX_SESSIONS',
    ].map((n) => [
      n,
      { why: 'read by `mailwarden http` only, not the stdio server', files: ['src/cli/http.ts'] },
    ]),
  ),
};

describe('server.json', () => {
  const [pkg] = server.packages;

  it('is the 2025-12-11 registry entry for this npm package and version over stdio', () => {
    expect(server.$schema).toBe(
      'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
    );
    expect(server.name).toBe(PKG.mcpName);
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.version).toBe(PKG.version);
    expect(server.packages).toHaveLength(1);
    expect(pkg).toMatchObject({
      registryType: 'npm',
      identifier: PKG.name,
      version: PKG.version,
      transport: { type: 'stdio' },
    });
  });

  it('names only variables the code reads, each once and described', () => {
    const inSource = variablesInSource();
    const names = pkg?.environmentVariables.map((v) => v.name) ?? [];
    expect(names.filter((n) => !inSource.has(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    for (const v of pkg?.environmentVariables ?? []) expect(v.description.length).toBeGreaterThan(10);
    expect(pkg?.environmentVariables.find((v) => v.name === 'MAILWARDEN_TOKEN_PASSPHRASE')?.isSecret).toBe(
      true,
    );
  });

  it('lists every variable the stdio server reads', () => {
    const listed = new Set(pkg?.environmentVariables.map((v) => v.name));
    const missing = [...variablesInSource().keys()].filter((n) => !listed.has(n) && !(n in NOT_LISTED));
    expect(missing).toEqual([]);
  });

  it('leaves out only what the stdio server does not read', () => {
    const inSource = variablesInSource();
    for (const [name, { files }] of Object.entries(NOT_LISTED)) {
      expect([...(inSource.get(name) ?? [])].sort(), name).toEqual(files);
    }
  });

  it('every variable a file the stdio server can run reads is listed, found by walking its imports', () => {
    const serving = servingFiles();
    // The walk reaches the tools and the providers, not only the entry files.
    expect(serving.has('src/cli/account-sign-in.ts')).toBe(true);
    expect(serving.has('src/providers/imap/connection.ts')).toBe(true);
    const listed = new Set(pkg?.environmentVariables.map((v) => v.name));
    const unlisted = [...variablesInSource()]
      .filter(([name, files]) => !listed.has(name) && [...files].some((f) => serving.has(f)))
      .filter(([name]) => name !== 'MAILWARDEN_PIN_MISMATCH')
      .map(([name, files]) => `${name} (${[...files].filter((f) => serving.has(f)).join(', ')})`);
    expect(unlisted).toEqual([]);
  });
});
