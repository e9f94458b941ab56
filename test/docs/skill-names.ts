/**
 * Checks that a skill (markdown an assistant follows) names only tools, parameters, result
 * fields, CLI commands and flags that exist. A skill that tells a model to call `bulk_modify`
 * with `confirm: true` teaches it a call that fails; this makes that a test failure instead.
 *
 * The rules, per paragraph or list item (a "block"):
 * - `mailwarden …` (inline or a line in a code block): the command and every `--flag` must be in
 *   that command's usage; `mailwarden call TOOL '{json}'` must name a tool and its input keys.
 * - `snake_case`: a tool name or an error code (or one of `otherNames`, each with a reason).
 * - `key: value`: key is an input parameter of a tool named in the same block.
 * - `camelCase`, `a.b.c` paths and lowercase words: a property (input, output, nested) or enum
 *   value of a tool named in the same block (of any tool when the block names none), a
 *   policy.json key, or a write-policy rule name.
 * - `MAILWARDEN_*`: an environment variable the code reads.
 * - `--flag` alone: a flag some command takes.
 * Anything else in backticks (queries such as `is:unread`, file names, scopes) is not checked.
 */

export interface ToolInfo {
  name: string;
  /** Top-level input properties: what a call may pass. */
  params: ReadonlySet<string>;
  /** Every property name and string enum value anywhere in the input and output schemas. */
  vocabulary: ReadonlySet<string>;
}

export interface Catalog {
  tools: ReadonlyMap<string, ToolInfo>;
  errorCodes: ReadonlySet<string>;
  /** policy.json keys and the rule names a refusal carries. */
  policyWords: ReadonlySet<string>;
  envVars: ReadonlySet<string>;
  /** CLI command → the flags its usage lists. */
  commands: ReadonlyMap<string, ReadonlySet<string>>;
  /** Lowercase or snake_case words in backticks that are not tool vocabulary, each justified. */
  otherNames: ReadonlySet<string>;
}

export interface Problem {
  line: number;
  text: string;
  problem: string;
}

/** Collects property names and string enum values from a JSON Schema, $defs included. */
export function schemaVocabulary(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const s of schema) schemaVocabulary(s, into);
    return into;
  }
  if (schema === null || typeof schema !== 'object') return into;
  const o = schema as Record<string, unknown>;
  const props = o['properties'];
  if (props !== null && typeof props === 'object') {
    for (const [k, v] of Object.entries(props)) {
      into.add(k);
      schemaVocabulary(v, into);
    }
  }
  for (const key of ['enum', 'const']) {
    const values = key === 'enum' ? o[key] : [o[key]];
    if (Array.isArray(values)) for (const v of values) if (typeof v === 'string') into.add(v);
  }
  for (const [k, v] of Object.entries(o)) {
    if (k !== 'properties' && k !== 'enum' && k !== 'const' && typeof v === 'object')
      schemaVocabulary(v, into);
  }
  return into;
}

/** Usage text → command → flags. An entry starts at a line `mailwarden CMD` and runs to the next. */
export function parseUsage(usage: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const raw of usage.split('\n')) {
    const line = raw.trim();
    const m = /^mailwarden\s+(\[?[a-z][a-z-]*\]?|--?[a-z-]+)/.exec(line);
    if (m) {
      const word = (m[1] as string).replace(/[[\]]/g, '');
      const command = word.startsWith('-') ? 'serve' : word;
      current = out.get(command) ?? new Set<string>();
      out.set(command, current);
    } else if (!/^\[?--/.test(line)) {
      // A description line or a heading: flags in prose are not the command's syntax.
      if (!raw.startsWith(' ')) current = undefined;
      continue;
    }
    if (current === undefined) continue;
    const syntax = line.split(/\s{3,}/)[0] as string;
    for (const f of syntax.matchAll(/--([a-z][a-z0-9-]*)/g)) current.add(f[1] as string);
  }
  return out;
}

/** Splits markdown into blocks (paragraphs and list items) with their starting line numbers. */
function blocks(markdown: string): Array<{ line: number; text: string; code: boolean }> {
  const out: Array<{ line: number; text: string; code: boolean }> = [];
  const lines = markdown.split('\n');
  let start = 0;
  let buf: string[] = [];
  let code = false;
  const flush = (): void => {
    if (buf.length > 0) out.push({ line: start + 1, text: buf.join('\n'), code });
    buf = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    if (/^\s*```/.test(l)) {
      flush();
      code = !code;
      start = i + 1;
      continue;
    }
    const item = !code && /^\s*(?:[-*]|\d+\.)\s/.test(l);
    if (l.trim() === '' || item) {
      flush();
      start = i;
      if (l.trim() === '') continue;
    }
    if (buf.length === 0) start = i;
    buf.push(l);
  }
  flush();
  return out;
}

function stripFrontMatter(markdown: string): { body: string; offset: number } {
  const m = /^---\n[\s\S]*?\n---\n/.exec(markdown);
  if (!m) return { body: markdown, offset: 0 };
  return { body: markdown.slice(m[0].length), offset: m[0].split('\n').length - 1 };
}

const FILE_OR_HOST = /\.(json|jsonl|md|ts|js|mjs|pem|com|org|net|me|example)$/;

function checkCommand(cmd: string, catalog: Catalog, report: (problem: string) => void): void {
  const words = cmd.trim().split(/\s+/);
  if (words[0] !== 'mailwarden') return;
  const first = words[1] ?? '';
  const command = first === '' || first.startsWith('-') ? 'serve' : first;
  const flags = catalog.commands.get(command);
  if (flags === undefined) {
    report(`"mailwarden ${command}" is not a mailwarden command`);
    return;
  }
  for (const f of cmd.matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)) {
    const flag = f[1] as string;
    if (flag === 'help' || flag === 'version') continue;
    if (!flags.has(flag)) report(`"mailwarden ${command}" takes no --${flag}`);
  }
  if (command === 'call') {
    const tool = catalog.tools.get(words[2] ?? '');
    if (tool === undefined) {
      report(`"mailwarden call ${words[2] ?? ''}": no such tool`);
      return;
    }
    const json = /'(\{.*\})'/.exec(cmd)?.[1];
    if (json === undefined) return;
    let args: unknown;
    try {
      args = JSON.parse(json);
    } catch {
      report(`"mailwarden call ${tool.name}": the arguments are not JSON`);
      return;
    }
    for (const k of Object.keys(args as object))
      if (!tool.params.has(k)) report(`${tool.name} has no parameter "${k}"`);
  }
}

export function checkSkill(markdown: string, catalog: Catalog): Problem[] {
  const problems: Problem[] = [];
  const { body, offset } = stripFrontMatter(markdown);
  const allVocabulary = new Set<string>();
  for (const t of catalog.tools.values()) for (const w of t.vocabulary) allVocabulary.add(w);

  for (const block of blocks(body)) {
    const line = block.line + offset;
    const report = (text: string) => (problem: string) => problems.push({ line, text, problem });
    if (block.code) {
      // Shell lines, with backslash continuations joined.
      for (const cmd of block.text.replace(/\\\n\s*/g, ' ').split('\n'))
        if (/^\s*mailwarden\s/.test(cmd)) checkCommand(cmd, catalog, report(cmd.trim()));
      continue;
    }
    const spans = [...block.text.replace(/\n\s*/g, ' ').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const named = spans.map((s) => catalog.tools.get(s)).filter((t) => t !== undefined);
    const vocabulary = named.length > 0 ? new Set(named.flatMap((t) => [...t.vocabulary])) : allVocabulary;
    const known = (w: string): boolean =>
      vocabulary.has(w) || catalog.policyWords.has(w) || catalog.otherNames.has(w);

    for (const span of spans) {
      const say = report(span);
      if (/^mailwarden(\s|$)/.test(span)) {
        checkCommand(span, catalog, say);
        continue;
      }
      if (catalog.tools.has(span)) continue;
      const env = /^(MAILWARDEN_[A-Z0-9_]+)(=.*)?$/.exec(span);
      if (env) {
        if (!catalog.envVars.has(env[1] as string))
          say(`${env[1]} is not an environment variable mailwarden reads`);
        continue;
      }
      const flag = /^--([a-z][a-z0-9-]*)(\s.*)?$/.exec(span);
      if (flag) {
        const f = flag[1] as string;
        if (![...catalog.commands.values()].some((s) => s.has(f))) say(`no mailwarden command takes --${f}`);
        continue;
      }
      const param = /^([a-zA-Z]+): \S/.exec(span);
      if (param) {
        const key = param[1] as string;
        if (named.length === 0) say(`parameter "${key}" with no tool named in the same paragraph`);
        else if (!named.some((t) => t.params.has(key)))
          say(`${named.map((t) => t.name).join(', ')} take no parameter "${key}"`);
        continue;
      }
      if (/^[a-z]+(_[a-z]+)+$/.test(span)) {
        if (!catalog.errorCodes.has(span) && !catalog.otherNames.has(span))
          say(`"${span}" is not a tool (nor an error code)`);
        continue;
      }
      if (/^[a-z][a-z]*(-[a-z]+)+$/.test(span)) {
        if (!catalog.policyWords.has(span) && !catalog.otherNames.has(span))
          say(`"${span}" is not a write-policy rule`);
        continue;
      }
      if (/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*$/.test(span) && !FILE_OR_HOST.test(span)) {
        if (span.startsWith('gmail.')) continue; // an OAuth scope
        const unknown = span.split('.').filter((seg) => !known(seg));
        if (unknown.length > 0)
          say(
            named.length > 0
              ? `"${unknown.join('.')}" is not a field of ${named.map((t) => t.name).join(', ')}`
              : `"${unknown.join('.')}" is not a field of any tool`,
          );
      }
    }
  }
  return problems;
}
