import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * src/tools/ is one folder per concern: each tool family's files, helpers every family may use in
 * src/tools/common/, and the lists that gather the tools (index.ts, bulk/organise-tools.ts). A
 * family imports only common/ (and the layers below), never another family, and common/ imports
 * no family: there is no import circle between families. (common/lazy.ts loads the gathered list
 * on first use; that is the one way down into the families.)
 */

const TOOLS = 'src/tools';
/** Files of a family that share its code (a family is also any other single file). */
const FAMILIES: Record<string, string[]> = {
  thread: ['thread.ts', 'export.ts'],
  filters: ['filters.ts', 'filters-write.ts'],
  snooze: ['snooze.ts', 'snooze-sweep.ts'],
  organise: ['modify.ts', 'bulk/'],
};
const GATHERERS = new Set(['index.ts', 'bulk/organise-tools.ts']);

function familyOf(file: string): string {
  if (file.startsWith('common/')) return 'common';
  for (const [name, members] of Object.entries(FAMILIES))
    if (members.some((m) => (m.endsWith('/') ? file.startsWith(m) : file === m))) return name;
  return file.replace(/\.ts$/, '');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(TOOLS, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(TOOLS, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)\.js'/g)) {
    const target = normalize(join(dirname(file), `${m[1] as string}.ts`));
    if (!target.startsWith('..')) out.push(target);
  }
  return out;
}

describe('src/tools layout', () => {
  const files = filesUnder(TOOLS);

  it('has the shared helpers in common/', () => {
    for (const f of ['common/define.ts', 'common/schemas.ts', 'common/label-changes.ts'])
      expect(files).toContain(f);
  });

  it('no family imports another, and common/ imports no family', () => {
    const crossings = files
      .filter((f) => !GATHERERS.has(f))
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => !GATHERERS.has(t) && familyOf(t) !== 'common' && familyOf(t) !== familyOf(f))
          .map((t) => `${f} → ${t}`),
      );
    expect(crossings).toEqual([]);
  });
});
