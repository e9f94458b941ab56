import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * Tests mirror src/: the tests of a file in a src/ folder are in the same folder under test/ (a
 * tool's end-to-end calls under test/tools/, an IMAP provider's under test/providers/imap/, a
 * command's under test/cli/), so a maintainer finds them by the source file's path. The folders that have no src/ counterpart,
 * each for a reason:
 * - test/integration: suites that run one table across every tool and provider at once (the
 *   corpus's known answers, hostile mail, files and URLs) and belong to no single source folder;
 * - test/helpers, test/fixtures: what the tests share (stacks, backends, .eml files), no tests;
 * - test/docs: the documents (README, docs/, citations, this layout) checked against the code;
 * - test/ship: the artefacts users install (npm package, MCPB bundle, plugin, server.json);
 * - test/bench: the benchmarks' short form, so `npm run bench` cannot rot;
 * - test/browser: the pages a person uses (consent, review, add-account) in a real Chromium;
 * - test/scripts: the repository's own tools in scripts/ (the lint runner), which ship nowhere.
 */

const ROOT = join(import.meta.dirname, '../..');
const OWN_FOLDERS = new Set([
  'integration',
  'helpers',
  'fixtures',
  'docs',
  'ship',
  'bench',
  'browser',
  'scripts',
]);

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return testFiles(p);
    return name.endsWith('.test.ts') ? [relative(join(ROOT, 'test'), p)] : [];
  });
}

describe('the test layout', () => {
  it('puts every test file in a folder that mirrors a src/ folder, or in one of the named own folders', () => {
    const files = testFiles(join(ROOT, 'test'));
    expect(files.length).toBeGreaterThan(100);
    const astray = files.filter((f) => {
      const parts = f.split('/');
      if (parts.length === 1) return false; // test/docs-drift.test.ts: the generated docs, at the top
      if (OWN_FOLDERS.has(parts[0] as string)) return false;
      return !existsSync(join(ROOT, 'src', ...parts.slice(0, -1)));
    });
    expect(astray).toEqual([]);
  });

  it('keeps test/integration for suites across tools and providers, not for one tool', () => {
    const here = readdirSync(join(ROOT, 'test/integration')).filter((n) => n.endsWith('.test.ts'));
    expect(here.length).toBeLessThanOrEqual(8);
  });
});
