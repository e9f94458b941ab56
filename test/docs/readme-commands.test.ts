import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/cli/commands.js';

/** The README's prose and examples, without the generated command list (docs-drift checks that). */
const readme = readFileSync('README.md', 'utf8').replace(
  /<!-- commands:start -->[\s\S]*<!-- commands:end -->/,
  '',
);

/** Code the README shows: fenced blocks and `spans`. */
const code = [...readme.matchAll(/```[a-z]*\n([\s\S]*?)```|`([^`\n]+)`/g)].map((m) =>
  (m[1] ?? m[2] ?? '').replace(/\\\n\s*/g, ' '),
);

/** Every `mailwarden …` command line in that code, cut at the first shell operator. */
function invocations(): string[][] {
  const out: string[][] = [];
  for (const block of code)
    for (const m of block.matchAll(/(?:^|[\s(])mailwarden((?: +(?:'[^']*'|[^\s;&|>#`)]+))+)/gm)) {
      if (/(?:mcp add|remove|install|uninstall)\s+$/.test(block.slice(0, m.index + 1))) continue;
      const tokens = [...(m[1] as string).matchAll(/'([^']*)'|(\S+)/g)].map((t) => t[1] ?? (t[2] as string));
      if (tokens[0] === '--' || tokens.length === 0) continue;
      out.push(tokens);
    }
  return out;
}

/** A token a person replaces or picks from: NAME, [--x], a|b, …, <id>. */
const placeholder = (t: string): boolean => /[A-Z]{2}|[[\]|…<>]/.test(t) && !t.startsWith('{');

describe('README commands', () => {
  const all = invocations();

  it('finds the commands the README shows', () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it('names only commands the command table has (src/cli/commands.ts)', () => {
    for (const tokens of all) {
      const words: string[] = [];
      for (const t of tokens) {
        if (t.startsWith('-') || placeholder(t) || t.startsWith('{')) break;
        words.push(t);
      }
      const line = `mailwarden ${tokens.join(' ')}`;
      expect(() => parseCommand([...words.slice(0, 2), '--help']), line).not.toThrow();
    }
  });

  it('parses every example without placeholders as written', () => {
    const concrete = all.filter((tokens) => !tokens.some(placeholder));
    expect(concrete.length).toBeGreaterThan(10);
    for (const tokens of concrete)
      expect(() => parseCommand(tokens), `mailwarden ${tokens.join(' ')}`).not.toThrow();
  });
});
