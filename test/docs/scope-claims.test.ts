import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dishonestScopeClaims, scopeClaim, sentences } from './scope-claims.js';

/** The prose people and models read: README, SECURITY, CONTRIBUTING, the skills, docs/. */
function proseFiles(): string[] {
  const files = ['README.md', 'SECURITY.md', 'CONTRIBUTING.md'].filter((f) => existsSync(f));
  for (const dir of ['skills', 'docs']) {
    if (!existsSync(dir)) continue;
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
      if (e.isFile() && e.name.endsWith('.md')) files.push(join(e.parentPath, e.name));
  }
  return files;
}

describe('no doc claims that a scope other than gmail.readonly cannot send', () => {
  it('reads README.md, SECURITY.md, CONTRIBUTING.md and the skills', () => {
    const files = proseFiles();
    for (const f of ['README.md', 'SECURITY.md', 'CONTRIBUTING.md', 'skills/triage/SKILL.md'])
      expect(files).toContain(f);
  });

  it.each(proseFiles())('%s', (file) => {
    expect(dishonestScopeClaims(readFileSync(file, 'utf8')).map((c) => c.sentence)).toEqual([]);
  });

  it('the tool descriptions a model reads (docs/tools-list.json, kept equal to tools/list)', () => {
    const tools = JSON.parse(readFileSync('docs/tools-list.json', 'utf8')) as Array<{ description?: string }>;
    expect(tools.length).toBeGreaterThan(0);
    const text = tools.map((t) => t.description ?? '').join('\n\n');
    expect(dishonestScopeClaims(text).map((c) => c.sentence)).toEqual([]);
  });
});

describe('the scope-claim matcher', () => {
  const flagged = (text: string): string[] => dishonestScopeClaims(text).map((c) => c.sentence);

  it('flags a no-send claim about a scope that can send', () => {
    expect(flagged('gmail.modify cannot send mail.')).toEqual(['gmail.modify cannot send mail.']);
    expect(flagged('With `gmail.compose` the server can’t send anything.')).toHaveLength(1);
    expect(flagged('A gmail.modify token is a no-send token.')).toHaveLength(1);
    expect(flagged('The manage tier (gmail.modify) never sends.')).toHaveLength(1);
    expect(
      flagged('- https://www.googleapis.com/auth/gmail.settings.basic: no way to send mail'),
    ).toHaveLength(1);
    expect(flagged('| manage | `gmail.modify` | does not send |')).toHaveLength(1);
    expect(flagged('The full scope https://mail.google.com/ will not send.')).toHaveLength(1);
  });

  it('flags a mixed claim: every scope the sentence names must qualify', () => {
    const claims = dishonestScopeClaims('gmail.readonly and gmail.modify cannot send.');
    expect(claims.map((c) => c.disallowed)).toEqual([['gmail.modify']]);
  });

  it('allows the one scope Google enforces as no-send', () => {
    expect(flagged('Only gmail.readonly is a no-send that Google enforces.')).toEqual([]);
    expect(flagged('A token with only `gmail.readonly` cannot send mail.')).toEqual([]);
  });

  it('leaves alone sentences that are not scope claims', () => {
    // About the server, not a scope.
    expect(scopeClaim('It never sends mail.')).toBeUndefined();
    // A scope named, but no claim about sending.
    expect(scopeClaim('manage → gmail.modify; filters → + gmail.settings.basic.')).toBeUndefined();
    // Saying a scope can send is what the docs should say.
    expect(scopeClaim('A gmail.modify token can send mail from anywhere it is copied to.')).toBeUndefined();
    // A host is not a scope.
    expect(
      scopeClaim('Requests go to gmail.googleapis.com and never send a token elsewhere.'),
    ).toBeUndefined();
  });

  it('judges each sentence on its own', () => {
    const text = 'A gmail.modify token can send. mailwarden never asks Google to send with it.';
    expect(sentences(text)).toEqual([
      'A gmail.modify token can send.',
      'mailwarden never asks Google to send with it.',
    ]);
    expect(flagged(text)).toEqual([]);
    // Joined into one sentence, it reads as a claim about the scope and is flagged.
    expect(flagged('A gmail.modify token is one mailwarden never uses to send.')).toHaveLength(1);
  });

  it('reads a paragraph wrapped over several lines as one text', () => {
    expect(
      flagged('The manage tier asks for\n`gmail.modify`, which cannot\nsend mail.\n\nNext paragraph.'),
    ).toHaveLength(1);
  });
});
