// `npm run lint`: the same three checks as `eslint . && prettier --check . && tsc --noEmit`, in
// under half the wall time (docs/benchmarks.md, "Lint time"), no rule dropped. The three are
// independent, so they run at once, each where it costs least:
//  - `tsc --noEmit` itself, in a child process (its own program, its own core);
//  - eslint in this process, its one type-aware rule reading types from a program built here and
//    handed over (parserOptions.programs);
//  - `prettier --check` in a child process, parsing TypeScript with the oxc parser
//    (@prettier/plugin-oxc in .prettierrc: the same formatting, a third less time) and keeping a
//    content-keyed cache of files it already found formatted, so a second run re-reads only what
//    changed. eslint keeps no cache: its type-aware rule can change its verdict on a file that did
//    not change (a callee made async elsewhere), which a per-file cache would miss.
// Usage: node scripts/lint.mjs [dir]   (dir: the project root, default the current directory)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const require = createRequire(resolve(root, 'package.json'));
const ts = require('typescript');
const { ESLint } = require('eslint');

/** Runs a node script in the project; resolves with its exit status and everything it printed. */
function child(script, args) {
  return new Promise((done) => {
    const c = spawn(process.execPath, [script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (b) => (out += b));
    c.stderr.on('data', (b) => (out += b));
    c.on('close', (code) => done({ ok: code === 0, out }));
    c.on('error', (e) => done({ ok: false, out: `${script} did not start: ${e.message}\n` }));
  });
}

function prettierCheck() {
  // Its cache (in .tmp/, git-ignored) skips files whose content it already found formatted.
  const cache = [
    '--cache',
    '--cache-strategy',
    'content',
    '--cache-location',
    resolve(root, '.tmp/prettier-cache'),
  ];
  return child(require.resolve('prettier/bin/prettier.cjs'), ['--check', '--no-color', ...cache, '.']);
}

function typeCheck() {
  return child(require.resolve('typescript/bin/tsc'), ['--noEmit', '--pretty', 'false', '-p', root]);
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
const tsc = typeCheck();
let failed = false;

const program = typeProgram();
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

const t = await tsc;
const tsErrors = (t.out.match(/error TS\d+:/g) ?? []).length;
process.stdout.write(`== tsc --noEmit: ${t.ok ? 'clean' : `${tsErrors} error(s)`}\n${t.ok ? '' : t.out}`);
if (!t.ok) failed = true;

const p = await prettier;
process.stdout.write(`== prettier --check: ${p.ok ? 'clean' : 'problems'}\n${p.ok ? '' : p.out}`);
if (!p.ok) failed = true;

process.exitCode = failed ? 1 : 0;
