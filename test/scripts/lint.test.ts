import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * scripts/lint.mjs builds one TypeScript program for both eslint's type-aware rule and the type
 * check, and runs prettier beside them. Run on a small project of its own: each check still
 * catches what it caught as a separate command, and the exit code says so. A second run re-checks
 * only what a change can reach (.tmp/lint-cache.json): what it keeps must never hide a problem.
 */

const ROOT = join(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-lint-'));
  dirs.push(dir);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const base: Record<string, string> = {
    'package.json': '{ "name": "lint-probe", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        types: [],
      },
      include: ['code'],
    }),
    '.prettierignore': 'node_modules\neslint.config.js\npackage.json\ntsconfig.json\n',
    'eslint.config.js': [
      "import tseslint from 'typescript-eslint';",
      'export default tseslint.config(',
      "  { ignores: ['node_modules/**', 'eslint.config.js'] },",
      '  ...tseslint.configs.recommended,',
      '  {',
      "    files: ['**/*.ts'],",
      "    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },",
      "    rules: { '@typescript-eslint/no-floating-promises': 'error' },",
      '  },',
      ');',
      '',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries({ ...base, ...files })) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function lint(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/lint.mjs'), dir], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

const CLEAN =
  'export async function work(): Promise<number> {\n  return 1;\n}\n\nexport async function run(): Promise<void> {\n  await work();\n}\n';

describe('npm run lint (scripts/lint.mjs)', () => {
  it('passes a clean project and reports each check clean', () => {
    const r = lint(project({ 'code/a.ts': CLEAN }));
    expect(r.out).toContain('== eslint: clean');
    expect(r.out).toContain('== tsc --noEmit: clean');
    expect(r.out).toContain('== prettier --check: clean');
    expect(r.status).toBe(0);
  }, 60_000);

  it('fails on a floating promise (a type-aware rule), a type error and unformatted code, naming each', () => {
    const dir = project({
      'code/a.ts': CLEAN.replace('  await work();', '  work();'),
      'code/b.ts': "export const n: number = 'not a number';\n",
      'code/c.ts': 'export const  spaced  =  [1,2,3]\n',
    });
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.out).toContain('@typescript-eslint/no-floating-promises');
    expect(r.out).toMatch(/code\/b\.ts\(1,14\): error TS2322/);
    expect(r.out).toMatch(/\[warn\] code\/c\.ts/);
  }, 60_000);

  it("prettier's cache never hides a file that changed since it was found formatted", () => {
    const dir = project({ 'code/a.ts': CLEAN });
    expect(lint(dir).status).toBe(0);
    writeFileSync(join(dir, 'code/a.ts'), CLEAN.replace('return 1;', 'return    1;'));
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/\[warn\] code\/a\.ts/);
  }, 60_000);

  it('a second run re-lints only the changed file, and still reports the problems it kept', () => {
    const dir = project({
      'code/a.ts': CLEAN,
      'code/b.ts': "export const n: number = 'not a number';\n",
      'code/c.ts':
        'export async function go(): Promise<void> {}\n\nexport function start(): void {\n  go();\n}\n',
    });
    const first = lint(dir);
    expect(first.status).toBe(1);
    expect(first.out).toContain('(3 files linted)');
    expect(first.out).toContain('(3 files checked)');
    writeFileSync(join(dir, 'code/a.ts'), `${CLEAN}// a comment\n`);
    const second = lint(dir);
    expect(second.status).toBe(1);
    expect(second.out).toContain('(1 of 3 files linted');
    expect(second.out).toContain('(1 of 3 files checked');
    expect(second.out).toMatch(/code\/b\.ts\(1,14\): error TS2322/);
    expect(second.out).toMatch(/code\/c\.ts\n\s+4:3\s+error .*@typescript-eslint\/no-floating-promises/);
  }, 90_000);

  it('a callee made async in one file flags the unchanged file that calls it without await', () => {
    const callee = (body: string) => `export ${body}\n`;
    const dir = project({
      'code/work.ts': callee('function work(): number {\n  return 1;\n}'),
      'code/caller.ts': 'import { work } from "./work.js";\n\nexport function run(): void {\n  work();\n}\n',
    });
    expect(lint(dir).status).toBe(0);
    writeFileSync(
      join(dir, 'code/work.ts'),
      callee('async function work(): Promise<number> {\n  return 1;\n}'),
    );
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/code\/caller\.ts\n\s+4:3\s+error .*@typescript-eslint\/no-floating-promises/);
    expect(r.out).toContain('(2 files linted)');
  }, 90_000);

  it('package.json turned to ESM flags the unchanged file whose import now needs an extension', () => {
    const dir = project({
      'package.json': '{ "name": "lint-probe", "private": true }\n',
      'code/a.ts': 'export const one = 1;\n',
      'code/b.ts': 'import { one } from "./a";\n\nexport const two = one + 1;\n',
    });
    expect(lint(dir).status).toBe(0);
    writeFileSync(join(dir, 'package.json'), '{ "name": "lint-probe", "private": true, "type": "module" }\n');
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/code\/b\.ts\(1,21\): error TS2835/);
  }, 90_000);

  it('a damaged cache is a full run, not a pass', () => {
    const dir = project({ 'code/a.ts': CLEAN.replace('  await work();', '  work();') });
    expect(lint(dir).status).toBe(1);
    writeFileSync(join(dir, '.tmp/lint-cache.json'), '{"key": 1, "eslint": {');
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.out).toContain('(1 file linted)');
    expect(r.out).toContain('@typescript-eslint/no-floating-promises');
  }, 90_000);

  it('lints exactly the files `eslint .` lints', async () => {
    const dir = project({
      'code/a.ts': CLEAN,
      'code/deep/b.ts': CLEAN,
      'tools/run.mjs': 'export const x = 1;\n',
      'notes.md': '# notes\n',
    });
    const r = lint(dir);
    expect(r.out).toContain('(3 files linted)');
    const { ESLint } = await import('eslint');
    const all = await new ESLint({ cwd: dir, ruleFilter: () => false }).lintFiles(['.']);
    expect(all.map((x) => x.filePath.slice(dir.length + 1)).sort()).toEqual([
      'code/a.ts',
      'code/deep/b.ts',
      'tools/run.mjs',
    ]);
  }, 90_000);
});
