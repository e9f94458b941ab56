import type * as Summary from '../../mail/summary.js';
import type { AnyTool } from './define.js';

/**
 * The MIME, charset and HTML stack (iconv-lite, html-to-text, htmlparser2, the CSS engine) takes about
 * 70 ms to load, a quarter of a cold start. Tools load it on their first call, so a client's
 * tools/list never waits for it (cold start is a benchmarked target: docs/benchmarks.md).
 */
export const mailReaders = (): Promise<typeof Summary> => import('../../mail/summary.js');

/*
 * The tool list a server starts with. Every definition builds its zod schemas when its module is
 * imported, which took ~35 ms of a cold start before tools/list (docs/benchmarks.md), and
 * tools/list needs none of it: it is served from the schemas precomputed at build time
 * (src/mcp/prebuilt-schemas.ts). So the bundle (scripts/bundle.mjs bakes in each tool's name,
 * title, tier, access and description as __MAILWARDEN_TOOLS__) starts with stand-ins carrying just
 * that, and imports the definitions when a call first needs them (`load`). The tsc build, which
 * tests and the bundle script run, has no table and imports the definitions at once.
 */

declare const __MAILWARDEN_TOOLS__: string | undefined;

type ToolMeta = Pick<AnyTool, 'name' | 'title' | 'tier' | 'access' | 'description' | 'registry'> & {
  /** The definition has a fanOut. */
  fanOut?: true;
};

export interface StartTools {
  /** In tools/list order; a stand-in's schemas, handler and fanOut are usable once `load` resolved. */
  tools: readonly AnyTool[];
  /** Imports the definitions (once); every tool call awaits it before touching its tool. */
  load: () => Promise<void>;
}

/** The tools for a server, each passed through `wrap` (the call budget) once it is defined. */
export async function startTools(wrap: (tools: readonly AnyTool[]) => AnyTool[]): Promise<StartTools> {
  const definitions = async () => wrap((await import('../index.js')).ALL_TOOLS);
  if (typeof __MAILWARDEN_TOOLS__ !== 'string') {
    const tools = await definitions();
    return { tools, load: () => Promise.resolve() };
  }
  const metas = JSON.parse(__MAILWARDEN_TOOLS__) as ToolMeta[];
  const real = new Map<string, AnyTool>();
  let loading: Promise<void> | undefined;
  const load = (): Promise<void> =>
    (loading ??= definitions().then((defined) => {
      // The table was made from these very definitions; a mismatch is a broken build.
      const shape = (t: { name: string; fanOut?: unknown }) => `${t.name}${t.fanOut ? '*' : ''}`;
      if (defined.map(shape).join() !== metas.map(shape).join())
        throw new Error('the bundled tool table does not match the tool definitions: rebuild');
      for (const t of defined) real.set(t.name, t);
    })).catch((e: unknown) => {
      loading = undefined;
      throw e;
    });
  return { tools: metas.map((m) => standIn(m, real)), load };
}

function fanOutMissing(name: string): never {
  throw new Error(`the bundled tool table gives ${name} a fanOut its definition lacks: rebuild`);
}

function standIn(meta: ToolMeta, real: ReadonlyMap<string, AnyTool>): AnyTool {
  const tool = (): AnyTool => {
    const t = real.get(meta.name);
    if (t === undefined) throw new Error(`${meta.name} was used before its definition was loaded`);
    return t;
  };
  return {
    name: meta.name,
    title: meta.title,
    tier: meta.tier,
    access: meta.access,
    description: meta.description,
    ...(meta.registry ? { registry: true as const } : {}),
    ...(meta.fanOut ? { fanOut: (parts) => (tool().fanOut ?? fanOutMissing(meta.name))(parts) } : {}),
    get input() {
      return tool().input;
    },
    get output() {
      return tool().output;
    },
    handle: (ctx, args) => tool().handle(ctx, args),
  };
}
