// What a user downloads and installs: the npm package installed from its packed tarball into an
// empty prefix with production dependencies only (npm pack + npm install --omit=dev; this one
// reaches the npm registry for the dependencies), and the desktop bundle (scripts/mcpb.mjs).
// Needs a build (npm run bench builds first). Prints one JSON object.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { machine } from './lib.mjs';

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function treeBytes(dir) {
  let total = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  }
  return total;
}

const tmp = mkdtempSync(join(tmpdir(), 'mailwarden-install-size-'));
try {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root, encoding: 'utf8' }),
  );
  const prefix = join(tmp, 'prefix');
  execFileSync(
    'npm',
    ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefix', prefix, join(tmp, packed.filename)],
    { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const modules = join(prefix, 'node_modules');
  const packages = readdirSync(modules)
    .filter((n) => !n.startsWith('.'))
    .flatMap((n) => (n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n]));
  const byPackage = Object.fromEntries(
    packages.map((n) => [n, treeBytes(join(modules, n))]).sort((a, b) => b[1] - a[1]),
  );
  const mcpb = JSON.parse(
    execFileSync(process.execPath, [join(root, 'scripts/mcpb.mjs'), join(tmp, 'mcpb')], { encoding: 'utf8' }),
  );
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: machine(),
        version: pkg.version,
        tarballBytes: packed.size,
        packageUnpackedBytes: packed.unpackedSize,
        installedBytes: treeBytes(modules),
        installedPackages: packages.length,
        byPackage,
        mcpbBytes: mcpb.bytes,
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
