import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The bundle users run (dist/bundle/main.js, made by `npm run build`) holds the sandbox too: the
 * Gmail simulator, its demo corpus and the throwaway Dovecot serve `--demo`, `demo` and the
 * review page's demo. None of it is on the serving start-up path: src/cli/runtime.ts and the demo
 * commands import it dynamically, so esbuild puts it in chunks that only those paths load. This
 * walks the static imports from the entry (what Node loads before the first line of main runs)
 * and checks that no chunk on that path holds the sandbox's code.
 */

const BUNDLE = resolve(import.meta.dirname, '../../dist/bundle');

/** Every file the entry loads through static `import … from` (dynamic `import()` left out). */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /(?:^|[;}\s])(?:import|export)\s*(?:[\w*${},\s]*?\bfrom\s*)?"(\.{1,2}\/[^"]+)"/g,
    ))
      walk(join(dirname(file), m[1] as string));
  };
  walk(entry);
  return seen;
}

/** Marks only the sandbox's code carries: the simulator's class and the Dovecot starter. */
const SANDBOX_MARKS = [/\bSandbox=class\b|\bclass Sandbox\b/, /\bstartDovecot\b/];

describe('the serving start-up path', () => {
  it('loads no part of the sandbox: it sits in chunks only --demo and the tours import', () => {
    const onPath = staticClosure(join(BUNDLE, 'main.js'));
    expect(onPath.size).toBeGreaterThan(1);
    const offenders = [...onPath].filter((f) => SANDBOX_MARKS.some((re) => re.test(readFileSync(f, 'utf8'))));
    expect(offenders).toEqual([]);
    // Each mark is found in the bundle's chunks, so an empty list above means something.
    const chunks = readdirSync(join(BUNDLE, 'chunks')).map((f) =>
      readFileSync(join(BUNDLE, 'chunks', f), 'utf8'),
    );
    for (const re of SANDBOX_MARKS)
      expect(
        chunks.some((text) => re.test(text)),
        String(re),
      ).toBe(true);
  });

  it('loads no part of the PostgreSQL state nor its driver: only MAILWARDEN_STATE=postgres://… imports them', () => {
    const onPath = staticClosure(join(BUNDLE, 'main.js'));
    // The driver is bundled into chunks of its own; its SASL code names the mechanism it speaks.
    const PG = /SCRAM-SHA-256/;
    const STATE = /\bmailwarden_action_log\b/;
    const offenders = [...onPath].filter((f) => {
      const text = readFileSync(f, 'utf8');
      return PG.test(text) || STATE.test(text);
    });
    expect(offenders).toEqual([]);
    const chunks = readdirSync(join(BUNDLE, 'chunks')).map((f) =>
      readFileSync(join(BUNDLE, 'chunks', f), 'utf8'),
    );
    // Both are in the bundle, so an empty list above means something.
    expect(chunks.some((text) => PG.test(text))).toBe(true);
    expect(chunks.some((text) => STATE.test(text))).toBe(true);
  });
});
