// `npm run lint`: the same three checks as `eslint . && prettier --check . && tsc --noEmit`, in
// about half the wall time (docs/benchmarks.md, "Lint time"). No rule dropped; the savings:
//  - the TypeScript program is built once: its diagnostics are what `tsc --noEmit` reports, and
//    eslint's one type-aware rule reads types from that same program (parserOptions.programs)
//    instead of building a second one from tsconfig.json (running tsc beside eslint instead, each
//    with its own program, was measured slower on two cores: the checking is done twice);
//  - prettier, which needs no types, runs at the same time in a child process at a lower
//    priority, parses TypeScript with the oxc parser (@prettier/plugin-oxc in .prettierrc.json:
//    the same formatting, a third less time), and keeps a cache of files it already found
//    formatted (by content), so a second run re-reads only what changed. eslint keeps no cache: its type-aware rule can change its
//    verdict on a file that did not change (a callee made async elsewhere), which a per-file
//    cache would miss.
// V8 is told to wait eight times longer than its default before optimising a function
// (`--interrupt-budget=540672` in package.json, passed on to prettier's process too): in a run this
// short, V8's background compiler threads spent about 18 s of CPU optimising TypeScript's and
// eslint's code, on the core prettier needs; with the flag about 10 s, and prettier 2 s less
// (docs/benchmarks.md, "Lint time", eighth pass). No check changes: only when code gets compiled.
// The diagnostics are taken before eslint runs: a checker that eslint has queried out of order can
// report an evolving `[]` as implicitly any where a full check in order does not.
// Usage: node scripts/lint.mjs [dir]   (dir: the project root, default the current directory)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const require = createRequire(resolve(root, 'package.json'));
const ts = require('typescript');
const { ESLint } = require('eslint');

function prettierCheck() {
  return new Promise((done) => {
    const bin = require.resolve('prettier/bin/prettier.cjs');
    // Its cache (in .tmp/, git-ignored) skips files whose content it already found formatted.
    const cache = [
      '--cache',
      '--cache-strategy',
      'content',
      '--cache-location',
      resolve(root, '.tmp/prettier-cache'),
    ];
    // The same tier-up budget as this process (package.json), not its young-generation size.
    const v8 = process.execArgv.filter((a) => a.startsWith('--interrupt-budget'));
    const child = spawn(process.execPath, [...v8, bin, '--check', '--no-color', ...cache, '.'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Below this process's priority: the program and eslint here are the longer path, and two
    // cores are shared with their garbage collectors (docs/benchmarks.md, "Lint time").
    try {
      setPriority(child.pid, 10);
    } catch {
      // Not allowed here (some containers): prettier runs at the same priority, only slower.
    }
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    child.on('close', (code) => done({ ok: code === 0, out }));
    child.on('error', (e) => done({ ok: false, out: `prettier did not start: ${e.message}\n` }));
  });
}

function typeProgram() {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const path = ts.findConfigFile(root, ts.sys.fileExists, 'tsconfig.json');
  if (path === undefined) throw new Error(`no tsconfig.json in ${root}`);
  const cfg = ts.getParsedCommandLineOfConfigFile(path, {}, host);
  return ts.createProgram({
    rootNames: cfg.fileNames,
    options: { ...cfg.options, noEmit: true },
    projectReferences: cfg.projectReferences,
    configFileParsingDiagnostics: cfg.errors,
  });
}

const prettier = prettierCheck();
let failed = false;

const program = typeProgram();
const diagnostics = ts.getPreEmitDiagnostics(program);

const eslint = new ESLint({
  cwd: root,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parserOptions: { project: null, programs: [program] } } },
  ],
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const eslintText = await formatter.format(results);
const eslintProblems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
process.stdout.write(
  `== eslint: ${eslintProblems === 0 ? 'clean' : `${eslintProblems} problem(s)`}\n${eslintText}`,
);
// As `eslint .`: warnings are shown, errors fail.
if (results.some((r) => r.errorCount > 0)) failed = true;

const tsText = ts.formatDiagnostics(diagnostics, {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
});
process.stdout.write(
  `== tsc --noEmit: ${diagnostics.length === 0 ? 'clean' : `${diagnostics.length} error(s)`}\n${tsText}`,
);
if (diagnostics.length > 0) failed = true;

const p = await prettier;
process.stdout.write(`== prettier --check: ${p.ok ? 'clean' : 'problems'}\n${p.ok ? '' : p.out}`);
if (!p.ok) failed = true;

process.exitCode = failed ? 1 : 0;
