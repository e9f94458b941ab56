import { z } from 'zod';
import { invalidInput } from '../mail/errors.js';
import type { AnyTool } from '../tools/common/define.js';
import { FORMAT_DESCRIPTION, TEXT_RENDERERS } from '../tools/common/text-format.js';

/*
 * `format: "json" | "text"` on the read tools that have a text renderer (src/tools/common/text-format.ts).
 * Like `account`, it is taken off the arguments here and never reaches a tool's handler: it
 * changes only what the text content holds, never the result.
 */

export type OutputFormat = 'json' | 'text';
const FORMATS: readonly OutputFormat[] = ['json', 'text'];

/** MAILWARDEN_FORMAT, read at start: a bad value stops the server naming the variable. */
export function formatFromEnv(env: Readonly<Record<string, string | undefined>>): OutputFormat {
  const raw = env['MAILWARDEN_FORMAT']?.trim() ?? '';
  if (raw === '') return 'json';
  if ((FORMATS as readonly string[]).includes(raw)) return raw as OutputFormat;
  throw invalidInput('MAILWARDEN_FORMAT', `must be "json" or "text" (got "${raw.slice(0, 40)}")`);
}

/** MAILWARDEN_OUTPUT_SCHEMAS: "outline" (unset) or "full". */
export function fullOutputSchemasFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  const raw = env['MAILWARDEN_OUTPUT_SCHEMAS']?.trim() ?? '';
  if (raw === '' || raw === 'outline') return false;
  if (raw === 'full') return true;
  throw invalidInput('MAILWARDEN_OUTPUT_SCHEMAS', `must be "outline" or "full" (got "${raw.slice(0, 40)}")`);
}

/** The advertised input with `format` added, for the tools that have a text copy. */
export function withFormatInput(tool: AnyTool, schema: z.ZodObject): z.ZodObject {
  if (!TEXT_RENDERERS.has(tool.name) || 'format' in schema.shape) return schema;
  return schema.extend({ format: z.enum(FORMATS).optional().describe(FORMAT_DESCRIPTION) });
}

/** Splits `format` from the tool's own arguments; the server's default when it is not given. */
export function takeFormat(
  tool: AnyTool,
  raw: unknown,
  fallback: OutputFormat,
): { render: ((out: Record<string, unknown>) => string) | undefined; args: unknown } {
  const renderer = TEXT_RENDERERS.get(tool.name);
  if (renderer === undefined || raw === null || typeof raw !== 'object' || 'format' in tool.input.shape)
    return { render: undefined, args: raw };
  const { format, ...args } = raw as Record<string, unknown>;
  if (format !== undefined && !(FORMATS as readonly unknown[]).includes(format))
    throw invalidInput('format', 'must be "json" or "text"');
  const chosen = (format as OutputFormat | undefined) ?? fallback;
  return { render: chosen === 'text' ? renderer : undefined, args };
}
