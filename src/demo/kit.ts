import { stripFences } from '../mail/fence-format.js';
import type { LocalClient } from '../mcp/local-client.js';

/* Shared by the steps of `mailwarden demo`, which print for a person: console output is the point. */

/** For display only: fenced mail text without the nonce markers. */
export function show(s: unknown): string {
  return stripFences(String(s ?? ''));
}

/** Prints the call as a person could type it, runs it through the MCP client, returns its result. */
export async function call<T>(
  client: LocalClient,
  tool: string,
  args: Record<string, unknown>,
  /** What to print instead of args, e.g. with a long undo plan abbreviated. */
  shown: Record<string, unknown> = args,
): Promise<T> {
  console.log(`\n$ mailwarden call ${tool} '${JSON.stringify(shown)}' --demo`);
  const r = await client.call(tool, args);
  if (r.isError) throw new Error(`${tool} failed: ${r.text}`);
  return r.structured as T;
}
