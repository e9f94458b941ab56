import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect, it } from 'vitest';
import { toolsListSnapshot } from '../../src/mcp/snapshot.js';
import { TIERS } from '../../src/policy/tiers.js';
import { MAIN } from '../helpers/stack.js';

interface Listed {
  name: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}

// The bundle serves schemas computed when it was built (src/mcp/prebuilt-schemas.ts); a client
// must get exactly what the live conversion of the current definitions gives.
it('the built server lists the same schemas the definitions produce live', async () => {
  const client = new Client({ name: 'prebuilt-check', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, '--demo'],
      env: { PATH: process.env['PATH'] ?? '', MAILWARDEN_TOOLS: TIERS.join(',') },
      stderr: 'ignore',
    }),
  );
  try {
    const served = (await client.listTools()).tools as Listed[];
    const live = new Map(((await toolsListSnapshot()) as Listed[]).map((t) => [t.name, t]));
    expect(served.length).toBeGreaterThan(30);
    for (const t of served) {
      const expected = live.get(t.name);
      expect(expected, t.name).toBeDefined();
      expect(t.inputSchema, t.name).toEqual(expected?.inputSchema);
      expect(t.outputSchema, t.name).toEqual(expected?.outputSchema);
    }
  } finally {
    await client.close();
  }
});
