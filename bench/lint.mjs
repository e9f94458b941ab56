// node bench/lint.mjs: `npm run lint` against the chain it replaced (issue 24), on a clone of this
// repository's HEAD (its node_modules linked in), printed as JSON.
//
// The chain is `eslint . && prettier --check . && tsc --noEmit` as the issue timed it: eslint with
// the config of that day (typed linting through `projectService`, read from git at CHAIN_CONFIG),
// prettier without the oxc plugin and without a cache. Each round times, in order: the chain; lint
// from scratch (`.tmp` removed, as in a fresh clone); lint again with nothing changed; lint after a
// comment is added to one test file; lint after a comment is added to src/mail/errors.ts, which
// most of the code imports, and after a second comment there (the first change to a file after a
// run from scratch counts, for TypeScript, as a change to its exported types). This machine is
// noisy: ratios are taken within a round, and rounds alternate (BENCH_RUNS, default 3).
// BENCH_LINT_SMALL=1 (the short form of `npm run bench`) keeps only src/mail (and the declarations
// in src/types it needs) in the clone.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { benchDir, machine, round } from './lib.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const CHAIN_CONFIG = '8fae626^'; // the last commit whose eslint config built its own program
const CORE = 'src/mail/errors.ts';
const runs = Number(process.env.BENCH_RUNS ?? 3);
const small = process.env.BENCH_LINT_SMALL === '1';

const dir = benchDir('mailwarden-bench-lint-');
execFileSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir]);
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
if (small) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const keep = ['node_modules', 'scripts', 'src', '.git'].includes(e.name) || !e.isDirectory();
    if (!keep) rmSync(join(dir, e.name), { recursive: true, force: true });
  }
  for (const e of readdirSync(join(dir, 'src'))) {
    if (e !== 'mail' && e !== 'types') rmSync(join(dir, 'src', e), { recursive: true, force: true });
  }
  for (const e of readdirSync(join(dir, 'scripts'))) {
    if (e !== 'lint.mjs') rmSync(join(dir, 'scripts', e), { recursive: true, force: true });
  }
  // Markdown and JSON at the top stay for prettier; the tsconfig's other folders are gone.
}

// The chain's configs, beside the clone's own: eslint's from git, prettier's without the plugin.
let chainConfig = 'eslint.chain.config.js';
try {
  const text = execFileSync('git', ['-C', ROOT, 'show', `${CHAIN_CONFIG}:eslint.config.js`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  writeFileSync(join(dir, chainConfig), text);
} catch {
  chainConfig = 'eslint.config.js'; // a shallow clone: today's config (it builds a program too)
}
const { plugins: _plugins, ...prettierNoPlugin } = JSON.parse(
  readFileSync(join(dir, '.prettierrc.json'), 'utf8'),
);
writeFileSync(join(dir, '.tmp-chain-prettierrc.json'), JSON.stringify(prettierNoPlugin));
writeFileSync(
  join(dir, '.prettierignore'),
  `${readFileSync(join(dir, '.prettierignore'), 'utf8')}\n.tmp-chain-prettierrc.json\neslint.chain.config.js\n`,
);

const require = createRequire(join(dir, 'package.json'));
const bin = (pkg, path) => join(require.resolve(`${pkg}/package.json`), '..', path);
const chain = [
  [bin('eslint', 'bin/eslint.js'), '--config', chainConfig, '.'],
  [
    bin('prettier', 'bin/prettier.cjs'),
    '--check',
    '--no-cache',
    '--config',
    '.tmp-chain-prettierrc.json',
    '.',
  ],
  [bin('typescript', 'bin/tsc'), '--noEmit'],
];

function timed(cmd, args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { seconds, status: r.status, out: `${r.stdout}${r.stderr}` };
}

function lint() {
  const r = timed('npm', ['run', '-s', 'lint']);
  if (r.status !== 0) throw new Error(`npm run lint failed in the clone:\n${r.out.slice(-3000)}`);
  // "(538 files linted)" or "(1 of 538 files linted, ...)": how much of the tree this run did.
  const count = (verb) => {
    const m = new RegExp(`\\((?:(\\d+) of )?(\\d+) files? ${verb}`).exec(r.out);
    return m === null ? null : Number(m[1] ?? m[2]);
  };
  return { seconds: round(r.seconds, 2), linted: count('linted'), checked: count('checked') };
}

const files = (sub) =>
  readdirSync(join(dir, sub), { recursive: true })
    .filter((f) => f.endsWith('.ts'))
    .sort();
const leaf = small
  ? join('src/mail', files('src/mail')[0])
  : join(
      'test',
      files('test').find((f) => f.endsWith('.test.ts')),
    );
const edit = (file, n) => appendFileSync(join(dir, file), `// bench edit ${n}\n`);
const restore = (file) => execFileSync('git', ['checkout', '--quiet', '--', file], { cwd: dir });

const rounds = [];
for (let i = 0; i < runs; i++) {
  let chainSeconds = 0;
  const chainStatus = [];
  for (const args of chain) {
    const r = timed(process.execPath, args);
    chainSeconds += r.seconds;
    chainStatus.push(r.status);
  }
  rmSync(join(dir, '.tmp'), { recursive: true, force: true });
  const fromScratch = lint();
  const unchanged = lint();
  edit(leaf, 1);
  const leafEdited = lint();
  restore(leaf);
  edit(CORE, 1);
  const coreFirstEdit = lint();
  edit(CORE, 2);
  const coreSecondEdit = lint();
  restore(CORE);
  const ratio = (x) => round(x.seconds / chainSeconds, 3);
  rounds.push({
    chainSeconds: round(chainSeconds, 2),
    chainExitCodes: chainStatus,
    fromScratch: { ...fromScratch, ratio: ratio(fromScratch) },
    unchanged: { ...unchanged, ratio: ratio(unchanged) },
    leafEdited: { ...leafEdited, ratio: ratio(leafEdited) },
    coreFirstEdit: { ...coreFirstEdit, ratio: ratio(coreFirstEdit) },
    coreSecondEdit: { ...coreSecondEdit, ratio: ratio(coreSecondEdit) },
  });
}

const mean = (key) => round(rounds.reduce((s, r) => s + r[key].ratio, 0) / rounds.length, 3);
console.log(
  JSON.stringify(
    {
      machine: machine(),
      tree: small ? 'src/mail and src/types only' : 'whole repository',
      chainEslintConfig:
        chainConfig === 'eslint.config.js' ? "today's" : `eslint.config.js at ${CHAIN_CONFIG}`,
      leaf,
      core: CORE,
      meanRatio: Object.fromEntries(
        ['fromScratch', 'unchanged', 'leafEdited', 'coreFirstEdit', 'coreSecondEdit'].map((k) => [
          k,
          mean(k),
        ]),
      ),
      rounds,
    },
    null,
    2,
  ),
);
