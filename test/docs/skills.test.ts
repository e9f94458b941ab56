import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/mail/errors.js';
import { fullOutputSchemas, toolsListSnapshot } from '../../src/mcp/snapshot.js';
import { RULE_KEYS } from '../../src/policy/write-policy.js';
import { checkSkill, parseUsage, schemaVocabulary } from './skill-names.js';
import type { Catalog, ToolInfo } from './skill-names.js';

const MAIN = 'dist/bundle/main.js';
const SKILLS = readdirSync('skills').filter((d) => !d.startsWith('.'));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Environment variables the code reads: the names it spells as strings or `env.NAME`. */
function envVarsRead(): Set<string> {
  const out = new Set<string>();
  for (const f of sourceFiles('src'))
    for (const m of readFileSync(f, 'utf8').matchAll(/(?:['"`]|env\.)(MAILWARDEN_[A-Z0-9_]+)/g))
      out.add(m[1] as string);
  return out;
}

/** The rule names a refusal carries (the PolicyRule union in src/policy/gate.ts). */
function policyRuleNames(): string[] {
  const src = readFileSync('src/policy/gate.ts', 'utf8');
  const union = /export type PolicyRule =([^;]+);/.exec(src)?.[1] ?? '';
  return [...union.matchAll(/'([a-z-]+)'/g)].map((m) => m[1] as string);
}

/** Every command's usage: the top-level --help and the accounts command's own (printed on a usage error). */
function usageText(): string {
  const help = execFileSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
  const accounts = spawnSync(process.execPath, [MAIN, 'accounts', 'add'], { encoding: 'utf8' });
  return `${help}\n${accounts.stderr}`;
}

// Words in backticks that are neither tool vocabulary nor policy words, each with its reason.
const OTHER_NAMES = [
  'invalid_grant', // Google's OAuth error for an expired or revoked refresh token
  'ok', // the statuses `mailwarden check` prints per item (ok, warn, FAIL, skip)
  'warn',
  'skip',
];

let catalog: Catalog;

beforeAll(async () => {
  const listed = (await toolsListSnapshot()) as Array<{
    name: string;
    inputSchema: { properties?: Record<string, unknown> };
  }>;
  const tools = new Map<string, ToolInfo>();
  // Field names come from the full output shapes: tools/list advertises only their outline.
  const outputs = fullOutputSchemas();
  for (const t of listed) {
    const vocabulary = schemaVocabulary(t.inputSchema);
    schemaVocabulary(outputs[t.name], vocabulary);
    tools.set(t.name, {
      name: t.name,
      params: new Set(Object.keys(t.inputSchema.properties ?? {})),
      vocabulary,
    });
  }
  catalog = {
    tools,
    errorCodes: new Set(ERROR_CODES),
    policyWords: new Set<string>([...RULE_KEYS, ...policyRuleNames()]),
    envVars: envVarsRead(),
    commands: parseUsage(usageText()),
    otherNames: new Set(OTHER_NAMES),
  };
});

describe('skills', () => {
  it('there are the setup and triage skills', () => {
    expect(SKILLS).toEqual(expect.arrayContaining(['setup', 'triage']));
  });

  it.each(SKILLS)('skills/%s/SKILL.md has front matter with its name and a description', (dir) => {
    const text = readFileSync(join('skills', dir, 'SKILL.md'), 'utf8');
    const front = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1];
    expect(front, 'YAML front matter between --- lines at the top').toBeDefined();
    const fields = new Map(
      (front ?? '').split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
    );
    expect(fields.get('name')).toBe(dir);
    expect(fields.get('description')?.length ?? 0).toBeGreaterThan(40);
  });

  it.each(SKILLS)('skills/%s/SKILL.md names only tools, parameters, fields and flags that exist', (dir) => {
    const text = readFileSync(join('skills', dir, 'SKILL.md'), 'utf8');
    expect(checkSkill(text, catalog)).toEqual([]);
  });

  it('the triage skill names the fields its rules depend on', () => {
    // If one of these is renamed, the rule that mentions it must be rewritten, not dropped.
    const text = readFileSync('skills/triage/SKILL.md', 'utf8');
    for (const name of ['unverifiedPredicates', 'previewToken', 'dryRun: true', 'notAttempted', 'refused'])
      expect(text).toContain(`\`${name}\``);
  });
});

describe('the skill checker', () => {
  const problems = (md: string): string[] => checkSkill(md, catalog).map((p) => p.problem);

  it('accepts real tools, parameters, fields and commands', () => {
    expect(
      problems(
        [
          'Call `bulk_modify` with `dryRun: true`, read `unverifiedPredicates`, then pass `previewToken`.',
          '',
          '- `search` reports `verification.checkedBy`; `account: "all"` asks every account.',
          '',
          "Run `mailwarden check --account NAME --json` or `mailwarden call get_profile '{}' --demo`.",
          '',
          '```sh',
          'mailwarden accounts add proton --imap --host 127.0.0.1 --port 1143 --starttls \\',
          '  --user you@proton.me --pin-from-server',
          '```',
          '',
          'Set `MAILWARDEN_TOKEN_PASSPHRASE`; a refusal names `daily-cap`; see `dailyMoveCap`.',
        ].join('\n'),
      ),
    ).toEqual([]);
  });

  it('catches a renamed or made-up tool', () => {
    expect(problems('Use `bulk_change` to relabel.')).toEqual([
      '"bulk_change" is not a tool (nor an error code)',
    ]);
    expect(problems("Run `mailwarden call send_mail '{}'`.")).toEqual([
      '"mailwarden call send_mail": no such tool',
    ]);
  });

  it('catches a made-up parameter, judged against the tool in the same paragraph', () => {
    expect(problems('Call `bulk_modify` with `confirm: true`.')).toEqual([
      'bulk_modify take no parameter "confirm"',
    ]);
    // dryRun is real, but archive does not take it.
    expect(problems('Call `archive` with `dryRun: true`.')).toEqual(['archive take no parameter "dryRun"']);
    expect(problems('Pass `dryRun: true` first.')).toEqual([
      'parameter "dryRun" with no tool named in the same paragraph',
    ]);
    expect(problems('Run `mailwarden call search \'{"q":"is:unread"}\'`.')).toEqual([
      'search has no parameter "q"',
    ]);
  });

  it('catches a made-up result field and a made-up policy rule', () => {
    expect(problems('`bulk_modify` returns `unverifiedPredicate`.')).toEqual([
      '"unverifiedPredicate" is not a field of bulk_modify',
    ]);
    expect(problems('`search` fills `verification.checkedVia`.')).toEqual([
      '"checkedVia" is not a field of search',
    ]);
    expect(problems('A refusal names `weekly-cap`.')).toEqual(['"weekly-cap" is not a write-policy rule']);
  });

  it('catches a made-up CLI command, flag or environment variable', () => {
    expect(problems('Run `mailwarden doctor`.')).toEqual(['"mailwarden doctor" is not a mailwarden command']);
    expect(problems('Run `mailwarden check --verbose`.')).toEqual(['"mailwarden check" takes no --verbose']);
    expect(problems('```sh\nmailwarden accounts add x --imap \\\n  --pin-fingerprint AB\n```')).toEqual([
      '"mailwarden accounts" takes no --pin-fingerprint',
    ]);
    expect(problems('Pass `--insecure`.')).toEqual(['no mailwarden command takes --insecure']);
    expect(problems('Set `MAILWARDEN_PASSWORD`.')).toEqual([
      'MAILWARDEN_PASSWORD is not an environment variable mailwarden reads',
    ]);
  });
});
