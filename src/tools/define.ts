import type { z } from 'zod';
import type { Clock } from '../mail/clock.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { Tier } from '../policy/tiers.js';
import type { Fence } from '../mcp/untrusted.js';

/**
 * How a tool touches the world; `src/mcp/` derives the MCP annotations from it:
 * read → readOnly; write → changes mailbox state, reversibly; destructive → may lose state;
 * external → talks to a host that is not the mail provider (open world).
 */
export type Access = 'read' | 'write' | 'destructive' | 'external';

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface ToolContext {
  mailbox: Mailbox;
  clock: Clock;
  /** Fences mail-derived text for this one result (see src/mcp/untrusted.ts). */
  fence: Fence;
  /** Reports progress when the client asked for it; a no-op otherwise. */
  progress(done: number, total?: number, message?: string): Promise<void>;
  signal: AbortSignal;
  log: Logger;
  /** mailwarden's own version, for get_profile. */
  serverVersion: string;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  tier: Tier;
  access: Access;
  description: string;
  input: I;
  output: O;
  handle(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>;
}

export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject>;

/** A tool is a value: defining one registers nothing. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDefinition<I, O>): AnyTool {
  return def as unknown as AnyTool;
}
