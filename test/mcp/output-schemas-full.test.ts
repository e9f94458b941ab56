import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectClient } from '../helpers/interop.js';
import { MAIN, startStack } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * tools/list advertises each output schema's outline by default (src/mcp/schema-compact.ts);
 * MAILWARDEN_OUTPUT_SCHEMAS=full advertises the whole shapes, the ones docs/output-schemas.json
 * holds, for a client that generates types from them. Through the bundle a user runs, whose tools
 * start as stand-ins (src/tools/common/lazy.ts).
 */

type Obj = Record<string, unknown>;
const full = JSON.parse(readFileSync('docs/output-schemas.json', 'utf8')) as Record<string, Obj>;

describe('MAILWARDEN_OUTPUT_SCHEMAS', () => {
  it('full: every listed output schema is the whole shape, and results still validate', async () => {
    const s = await startStack({ env: { MAILWARDEN_OUTPUT_SCHEMAS: 'full' } });
    try {
      const { tools } = await s.client.listTools();
      expect(tools.length).toBeGreaterThan(30);
      for (const t of tools) expect(t.outputSchema, t.name).toEqual(full[t.name]);
      const thread = tools.find((t) => t.name === 'get_thread')?.outputSchema as { properties: Obj };
      expect(JSON.stringify(thread.properties['messages'])).toContain('"properties"');
      // The SDK v2 client checks structuredContent against the listed schema on every call.
      const r = await s.client.callTool({ name: 'search', arguments: { query: 'in:inbox', maxResults: 3 } });
      expect(r.isError).toBeFalsy();
    } finally {
      await s.close();
    }
  }, 60_000);

  it('unset: outlines, which the SDK v1 client compiles and checks results against', async () => {
    const s = await startStack({});
    try {
      const { tools } = await s.client.listTools();
      const thread = tools.find((t) => t.name === 'get_thread')?.outputSchema as { properties: Obj };
      expect(thread.properties['messages']).toEqual({ type: 'array' });
      const v1 = await connectClient('v1', 'stdio', {
        env: { HOME: s.configDir, MAILWARDEN_CONFIG_DIR: s.configDir, MAILWARDEN_SANDBOX_URL: s.sandbox.url },
      });
      try {
        expect((await v1.listTools()).length).toBe(tools.length);
        // SDK v1 throws -32602 when structuredContent does not match the listed schema.
        const r = await v1.call('search', { query: 'in:inbox', maxResults: 3 });
        expect(r.isError, r.text).toBe(false);
        expect((r.structured?.['threads'] as unknown[]).length).toBe(3);
      } finally {
        await v1.close();
      }
    } finally {
      await s.close();
    }
  }, 60_000);

  it('a bad value stops the server at start, naming the variable', () => {
    const r = spawnSync(process.execPath, [MAIN], {
      env: {
        PATH: process.env['PATH'] ?? '',
        MAILWARDEN_OUTPUT_SCHEMAS: 'deep',
        MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-output-schemas-env-'),
      },
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/MAILWARDEN_OUTPUT_SCHEMAS: must be "outline" or "full" \(got "deep"\)/);
  });
});
