/*
 * The advertised JSON Schemas, computed when the bundle is built instead of at every start.
 * Converting ~45 zod schemas and compacting them took 60–100 ms of a cold start on the
 * benchmark machine (docs/benchmarks.md), paid before a client saw tools/list.
 *
 * scripts/bundle.mjs lists every tool through the real SDK from the tsc build (where this table
 * is absent and the schemas are computed live) and hands the result to esbuild as
 * __MAILWARDEN_SCHEMAS__, so the bundle serves exactly what the live path would. This holds
 * because an advertised schema is a function of the tool definition alone (never of tiers,
 * accounts or the environment). Tests and the tsc build always compute live.
 */

declare const __MAILWARDEN_SCHEMAS__: string | undefined;

type Json = Record<string, unknown>;
type Table = Record<string, { input?: Json; output?: Json }>;

/** The only target the SDK asks for (its JSON_SCHEMA_CONVERSION_TARGET); the table holds that. */
const TARGET = 'draft-2020-12';

let table: Table | null | undefined;

function load(): Table | null {
  if (table === undefined)
    table = typeof __MAILWARDEN_SCHEMAS__ === 'string' ? (JSON.parse(__MAILWARDEN_SCHEMAS__) as Table) : null;
  return table;
}

/** The prebuilt advertised schema of one tool, or undefined: compute it live. */
export function prebuiltSchema(tool: string, side: 'input' | 'output', target: unknown): Json | undefined {
  if (target !== TARGET) return undefined;
  return load()?.[tool]?.[side];
}
