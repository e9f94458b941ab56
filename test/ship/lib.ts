import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** Shared by the packaging tests: what a user installs, started the way a client starts it. */

export const ROOT = resolve(import.meta.dirname, '../..');
export const run = promisify(execFile);

export const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  mcpName: string;
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
};

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `mailwarden-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** An environment with nothing of this machine's mailwarden setup in it: no account exists. */
export function cleanEnv(configDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: configDir,
    MAILWARDEN_CONFIG_DIR: configDir,
    MAILWARDEN_KEYSTORE: 'off',
    ...extra,
  };
}

export interface Served {
  tools: string[];
  /** get_profile's structured result, or the error text when it failed. */
  profile: { isError: boolean; structured?: Record<string, unknown>; text: string };
  serverVersion: string | undefined;
}

/** Starts a stdio server with the real MCP client, lists its tools and calls get_profile. */
export async function serveAndList(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<Served> {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'mailwarden-ship-test', version: '0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const r = await client.callTool({ name: 'get_profile', arguments: {} });
    const content = (Array.isArray(r.content) ? r.content : []) as Array<{ text?: string }>;
    return {
      tools: tools.map((t) => t.name).sort(),
      profile: {
        isError: r.isError === true,
        ...(r.structuredContent ? { structured: r.structuredContent as Record<string, unknown> } : {}),
        text: content.map((c) => c.text ?? '').join('\n'),
      },
      serverVersion: client.getServerVersion()?.version,
    };
  } catch (e) {
    throw new Error(`${String(e)}\nserver stderr:\n${stderr}`, { cause: e });
  } finally {
    await client.close();
  }
}

/** Bytes of every file under dir (what `du -sb` counts, less the directory entries). */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}
