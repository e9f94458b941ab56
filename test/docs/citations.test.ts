import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * A document or comment that cites a file cites one that exists: every path of the repository's
 * own (src/…, test/…, docs/…, bench/…, scripts/…) named in a tracked source or document, and
 * every relative link in a Markdown file. The design notes kept outside the repository
 * (DESIGN.md, FACTS.md) are never cited: docs/architecture.md and docs/facts.md are the
 * project's own.
 */

const tracked = execFileSync('git', ['ls-files'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|mjs|js|md)$/.test(f) && !f.startsWith('node_modules/') && existsSync(f));

/** Paths named in prose or comments: a repository folder, then a file with an extension. */
const NAMED =
  /(?<![\w./-])((?:src|test|docs|bench|scripts|skills|mcpb)\/[\w./-]*\.(?:ts|mjs|md|json|png))(?![\w*])/g;
/** Markdown links to something local: [text](path) without a scheme or anchor-only target. */
const LINK = /\]\(([^)\s#]+)(?:#[^)]*)?\)/g;

function cited(file: string): Array<{ path: string; from: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ path: string; from: string }> = [];
  for (const m of text.matchAll(NAMED)) out.push({ path: m[1] as string, from: file });
  if (file.endsWith('.md'))
    for (const m of text.matchAll(LINK)) {
      const target = m[1] as string;
      if (/^[a-z]+:/i.test(target) || target.startsWith('/')) continue;
      out.push({ path: normalize(join(dirname(file), target)), from: file });
    }
  return out;
}

describe('citations', () => {
  it('every cited repository file exists', () => {
    const missing = tracked
      .flatMap(cited)
      // A path with a wildcard or a placeholder names a family of files, not one.
      .filter((c) => !/[*…<>]|\bN\b|XXXX/.test(c.path))
      .filter((c) => !existsSync(c.path) && !existsSync(c.path.replace(/\.js$/, '.ts')))
      .map((c) => `${c.from}: ${c.path}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('nothing cites the design notes kept outside the repository', () => {
    const outside = tracked
      .filter((f) => f !== 'test/docs/citations.test.ts')
      .filter((f) => /\b(DESIGN|FACTS)\.md\b|\bDESIGN (promise|")/.test(readFileSync(f, 'utf8')));
    expect(outside).toEqual([]);
  });
});
