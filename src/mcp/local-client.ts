import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { createMcpServer } from './server.js';
import type { ServerRuntime } from './server.js';

/**
 * An MCP client wired to an in-process server: `mailwarden call` and `mailwarden demo` go
 * through the same tools/call path (validation, fencing, error envelope) a real client does.
 */
export interface LocalClient {
  /** tools/list exactly as a client receives it. */
  listTools(): Promise<unknown[]>;
  call(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; structured: unknown; text: string }>;
  close(): Promise<void>;
}

function envelopeOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { code: 'internal_error', message: text, retryable: false };
  }
}

export async function connectLocal(runtime: ServerRuntime): Promise<LocalClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(runtime);
  await server.connect(serverSide);
  const client = new Client({ name: 'mailwarden-cli', version: runtime.version });
  await client.connect(clientSide);
  return {
    async listTools() {
      const r = await client.listTools();
      return r.tools;
    },
    async call(name, args) {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      // An error result carries its envelope as text only (src/mcp/server.ts errorResult); the
      // CLI shows it as {error: envelope}, as it always has.
      const structured = r.isError === true ? { error: envelopeOf(text) } : r.structuredContent;
      return { isError: r.isError === true, structured, text };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}
