// Regenerates the README tool table and command list, docs/tools-list.json and docs/output-schemas.json from the built tool definitions.
// Run with `npm run gen:docs`; test/docs-drift.test.ts fails when either is stale.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { replaceTable, toolTable } from '../dist/mcp/catalog.js';
import { replaceCommandList } from '../dist/cli/commands.js';
import { ALL_TOOLS } from '../dist/tools/index.js';
import { fullOutputSchemas, toolsListSnapshot } from '../dist/mcp/snapshot.js';

const readme = readFileSync('README.md', 'utf8');
writeFileSync('README.md', replaceCommandList(replaceTable(readme, toolTable(ALL_TOOLS))));
writeFileSync('docs/tools-list.json', JSON.stringify(await toolsListSnapshot(), null, 2) + '\n');
writeFileSync('docs/output-schemas.json', JSON.stringify(fullOutputSchemas(), null, 2) + '\n');
// In the repository's own format, so `npm run lint` (prettier --check) agrees with what is written.
execFileSync(
  'npx',
  ['prettier', '--write', 'README.md', 'docs/tools-list.json', 'docs/output-schemas.json'],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
console.log(
  'README.md tool table and command list, docs/tools-list.json and docs/output-schemas.json regenerated',
);
