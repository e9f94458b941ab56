// `npm run lint`: the same three checks as `eslint . && prettier --check . && tsc --noEmit`, in
// about half the wall time (docs/benchmarks.md, "Lint time"). No rule dropped; the savings:
//  - the TypeScript program is built once: its diagnostics are what `tsc --noEmit` reports, and
//    eslint's one type-aware rule reads types from that same program (parserOptions.programs)
//    instead of building a second one from tsconfig.json (running tsc beside eslint instead, each
//    with its own program, was measured slower on two cores: the checking is done twice);
//  - prettier, which needs no types, runs at the same time in a child process at a lower
//    priority, parses TypeScript with the oxc parser (@prettier/plugin-oxc in .prettierrc.json:
//    the same formatting, a third less time), and keeps a cache of files it already found
//    formatted (by content), so a second run re-reads only what changed;
//  - a second run re-checks and re-lints only what a change can reach (.tmp/lint-cache.json,
//    git-ignored). TypeScript's own incremental state (what `tsc --incremental` keeps) decides
//    which files' types must be checked again: a file that changed, and every file whose view of
//    another file's exported types changed (a callee made async elsewhere). eslint lints again
//    those files and every file whose text changed; every other file's result is the one it got
//    when its text and the types it sees were the same. eslint's rules other than the type-aware
//    one look at one file at a time, so its text decides their verdict. The cache is dropped
//    whole when this script, the eslint config, tsconfig.json, package-lock.json or Node change.
// V8 is told to wait eight times longer than its default before optimising a function
// (`--interrupt-budget=540672` in package.json, passed on to prettier's process too): in a run this
// short, V8's background compiler threads spent about 18 s of CPU optimising TypeScript's and
// eslint's code, on the core prettier needs; with the flag about 10 s, and prettier 2 s less
// (docs/benchmarks.md, "Lint time", eighth pass). No check changes: only when code gets compiled.
// The diagnostics are taken before eslint runs: a checker that eslint has queried out of order can
// report an evolving `[]` as implicitly any where a full check in order does not.
// Usage: node scripts/lint.mjs [dir]   (dir: the project root, default the current directory)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const CACHE = resolve(root, '.tmp/lint-cache.json');
const sha = (text) => createHash('sha256').update(text).digest('hex');
const readOr = (path, fallback) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
};

// What every cached verdict depends on besides the files themselves.
function cacheKey(eslintConfig, tsconfig) {
  return sha(
    JSON.stringify([
      process.version,
      ts.version,
      ESLint.version,
      readFileSync(fileURLToPath(import.meta.url), 'utf8'),
      eslintConfig === undefined ? null : readFileSync(eslintConfig, 'utf8'),
      readFileSync(tsconfig, 'utf8'),
      readOr(resolve(root, 'package-lock.json'), null),
    ]),
  );
}

// { key, tsBuildInfo: TypeScript's incremental state (text), eslint: { [path]: { sha, result } } }.
// One file written whole (temp file, then rename): the TypeScript state and eslint's results in it
// always come from the same run, so neither can claim a check the other did not see.
function readCache(key) {
  try {
    const cache = JSON.parse(readFileSync(CACHE, 'utf8'));
    if (cache.key === key && typeof cache.eslint === 'object') return cache;
  } catch {
    // None yet, or unreadable: start over.
  }
  return { key, tsBuildInfo: undefined, eslint: {} };
}

function writeCache(cache) {
  mkdirSync(dirname(CACHE), { recursive: true });
  const tmp = `${CACHE}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(cache));
  renameSync(tmp, CACHE);
}

// The TypeScript program, built on the last run's incremental state when there is one. Returns the
// builder and the set of files whose types get checked in this run (every file on a first run).
function typeProgram(tsBuildInfo) {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const cfg = ts.getParsedCommandLineOfConfigFile(tsconfigPath, {}, host);
  // A name only: TypeScript reads and writes its state through the host below, kept in CACHE.
  const buildInfoPath = resolve(root, '.tmp/lint.tsbuildinfo');
  const options = { ...cfg.options, noEmit: true, incremental: true, tsBuildInfoFile: buildInfoPath };
  const compilerHost = ts.createIncrementalCompilerHost(options, ts.sys);
  const readFile = compilerHost.readFile.bind(compilerHost);
  compilerHost.readFile = (f) => (resolve(f) === buildInfoPath ? tsBuildInfo : readFile(f));
  const builder = ts.createIncrementalProgram({
    rootNames: cfg.fileNames,
    options,
    projectReferences: cfg.projectReferences,
    configFileParsingDiagnostics: cfg.errors,
    host: compilerHost,
  });
  // The builder asks the program for a file's bind-and-check diagnostics exactly when it has none
  // kept for that file: the files this run checks. Without that hook, count every file as checked.
  const program = builder.getProgram();
  const checked = new Set();
  const check = program.getBindAndCheckDiagnostics;
  if (typeof check !== 'function' || tsBuildInfo === undefined) {
    checked.all = true;
  } else {
    program.getBindAndCheckDiagnostics = (file, token) => {
      checked.add(resolve(file.fileName));
      return check.call(program, file, token);
    };
  }
  return { builder, program, checked, buildInfoPath };
}

// The files `eslint .` lints: every file under the root that its config gives a configuration
// (as eslint's own walk decides), skipping node_modules and .git as eslint does.
async function eslintFiles(eslint) {
  const files = [];
  const walk = async (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.name === 'node_modules' || (dir === root && e.name === '.git')) continue;
      if (e.isDirectory()) await walk(path);
      else if ((e.isFile() || e.isSymbolicLink()) && !(await eslint.isPathIgnored(path))) {
        files.push(path);
      }
    }
  };
  await walk(root);
  return files.sort();
}

// "12 of 538 files linted, the others unchanged since the last run", or "538 files linted".
function share(done, all, verb) {
  if (done === all) return `${all} file${all === 1 ? '' : 's'} ${verb}`;
  return `${done} of ${all} files ${verb}, the others unchanged since the last run`;
}

const prettier = prettierCheck();
let failed = false;

const tsconfigPath = ts.findConfigFile(root, ts.sys.fileExists, 'tsconfig.json');
if (tsconfigPath === undefined) throw new Error(`no tsconfig.json in ${root}`);
const probe = new ESLint({ cwd: root });
const cache = readCache(cacheKey(await probe.findConfigFile(), tsconfigPath));
const { builder, program, checked, buildInfoPath } = typeProgram(cache.tsBuildInfo);
const diagnostics = ts.getPreEmitDiagnostics(builder);
let tsBuildInfo = cache.tsBuildInfo;
builder.emit(undefined, (name, text) => {
  if (resolve(name) === buildInfoPath) tsBuildInfo = text;
});
// Counted over the project's own files (tsconfig.json's), not the declarations they pull in.
const tsFiles = program.getRootFileNames().map((f) => resolve(f));
const tsChecked = checked.all ? tsFiles.length : tsFiles.filter((f) => checked.has(f)).length;

const eslint = new ESLint({
  cwd: root,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parserOptions: { project: null, programs: [program] } } },
  ],
});
const files = await eslintFiles(probe);
const texts = new Map(files.map((f) => [f, sha(readFileSync(f))]));
const stale = files.filter((f) => {
  const kept = cache.eslint[relative(root, f)];
  return checked.all || checked.has(f) || kept === undefined || kept.sha !== texts.get(f);
});
const fresh = new Map();
if (stale.length > 0) for (const r of await eslint.lintFiles(stale)) fresh.set(r.filePath, r);
const results = [];
const kept = {};
for (const f of files) {
  const rel = relative(root, f);
  const cached = cache.eslint[rel]?.result;
  const result = fresh.get(f) ?? (cached === undefined ? undefined : { ...cached, filePath: f });
  if (result === undefined) continue; // not linted: eslint said nothing of it
  const { source: _source, ...stored } = result;
  kept[rel] = { sha: texts.get(f), result: stored };
  results.push(result);
}
writeCache({ key: cache.key, tsBuildInfo, eslint: kept });

const formatter = await eslint.loadFormatter('stylish');
const eslintText = await formatter.format(results);
const eslintProblems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
const eslintSummary = eslintProblems === 0 ? 'clean' : `${eslintProblems} problem(s)`;
process.stdout.write(
  `== eslint: ${eslintSummary} (${share(stale.length, files.length, 'linted')})\n${eslintText}`,
);
// As `eslint .`: warnings are shown, errors fail.
if (results.some((r) => r.errorCount > 0)) failed = true;

const tsText = ts.formatDiagnostics(diagnostics, {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
});
const tsSummary = diagnostics.length === 0 ? 'clean' : `${diagnostics.length} error(s)`;
process.stdout.write(
  `== tsc --noEmit: ${tsSummary} (${share(tsChecked, tsFiles.length, 'checked')})\n${tsText}`,
);
if (diagnostics.length > 0) failed = true;

const p = await prettier;
process.stdout.write(`== prettier --check: ${p.ok ? 'clean' : 'problems'}\n${p.ok ? '' : p.out}`);
if (!p.ok) failed = true;

process.exitCode = failed ? 1 : 0;
