// npm run mcpb: the desktop bundle (MCPB, manifest 0.4) mailwarden-<version>.mcpb, for Claude
// Desktop and other MCPB hosts. Run after `npm run build` (the npm script does both).
//
// The bundle is mcpb/manifest.json, the esbuild bundle (dist/bundle) as server/, a package.json
// (name, version: the server reports its version from it) and node_modules with the one package
// the bundle leaves external, @napi-rs/keyring, at the version this checkout installed, with its
// native builds for macOS (arm64, x64), Windows (x64, arm64) and Linux (x64, arm64; glibc), each
// installed from the npm registry with `npm install --os --cpu`. A host on a platform without a
// build still runs the server: the keyring fails to load, and tokens are sealed with the
// passphrase setting or kept in plaintext, as `mailwarden check` says.
//
//   node scripts/mcpb.mjs [OUTDIR] [--local]
//     writes OUTDIR/mailwarden-<version>.mcpb (default OUTDIR: the repo root); --local copies the
//     runtime dependencies from this checkout's node_modules instead (no registry; this
//     platform's native build only).
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(root, 'mcpb/manifest.json'), 'utf8'));
if (manifest.version !== pkg.version) {
  throw new Error(`mcpb/manifest.json version ${manifest.version} differs from package.json ${pkg.version}`);
}
const bundle = join(root, 'dist/bundle/main.js');
if (!existsSync(bundle)) throw new Error('dist/bundle/main.js is missing: run `npm run build` first');

const args = process.argv.slice(2);
const local = args.includes('--local');
const outDir = resolve(args.find((a) => !a.startsWith('--')) ?? root);
/** The platforms whose native builds go into the bundle (npm's --os / --cpu values). */
const PLATFORMS = [
  ['darwin', 'arm64'],
  ['darwin', 'x64'],
  ['win32', 'x64'],
  ['win32', 'arm64'],
  ['linux', 'x64'],
  ['linux', 'arm64'],
];
const out = join(outDir, `${pkg.name}-${pkg.version}.mcpb`);
const stage = mkdtempSync(join(tmpdir(), 'mailwarden-mcpb-'));
try {
  writeFileSync(join(stage, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  cpSync(join(root, 'dist/bundle'), join(stage, 'server'), { recursive: true });
  cpSync(join(root, 'README.md'), join(stage, 'README.md'));
  writeFileSync(
    join(stage, 'package.json'),
    JSON.stringify(
      {
        name: pkg.name,
        version: pkg.version,
        type: 'module',
        license: pkg.license,
        private: true,
        dependencies: pkg.dependencies,
      },
      null,
      2,
    ) + '\n',
  );
  const copied = new Set();
  const copyTree = (modules, name) => {
    const from = join(modules, name);
    if (!existsSync(from)) return false;
    const to = join(stage, 'node_modules', name);
    mkdirSync(dirname(to), { recursive: true });
    cpSync(from, to, { recursive: true, dereference: true });
    copied.add(name);
    return true;
  };
  /** Every package directory under a node_modules (scoped ones as @scope/name). */
  const packagesIn = (modules) =>
    readdirSync(modules)
      .filter((n) => !n.startsWith('.'))
      .flatMap((n) => (n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n]));
  const installedVersion = (name) =>
    JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    if (!existsSync(join(root, 'node_modules', name)))
      throw new Error(`${name} is not installed: run npm ci first`);
  }
  if (local) {
    // Each runtime dependency, and the optional (per-platform native) packages npm installed here.
    for (const name of Object.keys(pkg.dependencies ?? {})) {
      copyTree(join(root, 'node_modules'), name);
      const dep = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
      for (const optional of Object.keys(dep.optionalDependencies ?? {}))
        copyTree(join(root, 'node_modules'), optional);
    }
  } else {
    const specs = Object.keys(pkg.dependencies ?? {}).map((name) => `${name}@${installedVersion(name)}`);
    for (const [os, cpu] of PLATFORMS) {
      const dir = mkdtempSync(join(tmpdir(), 'mailwarden-mcpb-deps-'));
      try {
        writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
        execFileSync(
          'npm',
          [
            'install',
            '--omit=dev',
            '--no-audit',
            '--no-fund',
            '--no-package-lock',
            `--os=${os}`,
            `--cpu=${cpu}`,
            ...specs,
          ],
          { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
        );
        const modules = join(dir, 'node_modules');
        for (const name of packagesIn(modules)) if (!copied.has(name)) copyTree(modules, name);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  mkdirSync(outDir, { recursive: true });
  rmSync(out, { force: true });
  // The mcpb CLI validates the manifest before it packs and fails when it does not pass.
  execFileSync(join(root, 'node_modules/.bin/mcpb'), ['pack', stage, out], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!existsSync(out)) throw new Error(`mcpb pack wrote no ${out}`);
  console.log(JSON.stringify({ file: out, bytes: readFileSync(out).length, packages: [...copied].sort() }));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
