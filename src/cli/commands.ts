import { parseArgs } from 'node:util';
import { CLIENT_TIERS } from '../policy/clients.js';
import { TIERS } from '../policy/tiers.js';
import { redactUrl } from '../store/state.js';

/*
 * Every command of the `mailwarden` CLI, in one table: the parser (Node's util.parseArgs, strict),
 * `--help` and the README's command list (scripts/gen-docs.mjs) are all made from it, so they
 * cannot drift. An unknown option, a value that is not allowed, two options that exclude each
 * other, an option without the one it needs, or a missing or extra argument is a usage error:
 * the command says which, prints the usage and exits 2. Nothing starts.
 */

export class UsageError extends Error {}

interface BaseOption {
  /** One line for --help. */
  help: string;
}
export interface FlagOption extends BaseOption {
  type: 'boolean';
}
export interface ValueOption extends BaseOption {
  type: 'string';
  /** What the value is, in the usage: NAME, N, FILE… */
  value: string;
  /** The values allowed, when they are a fixed set. */
  choices?: readonly string[];
  /** A check of the value: undefined when it is allowed, else what is allowed. */
  check?: (v: string) => string | undefined;
  /** The option may be given more than once, or take several values (`--item A B C`). */
  multiple?: boolean;
  /** The command cannot run without it (shown without brackets in the usage). */
  required?: boolean;
  /** How a refused value is quoted back (a URL without its password); default: as given. */
  show?: (v: string) => string;
}
export type OptionSpec = FlagOption | ValueOption;

export interface CommandSpec {
  /** The words that name it: ['accounts', 'add']. */
  words: readonly string[];
  /** Its positional arguments, in the usage (NAME, TOOL '{json}'…), required ones first. */
  args?: readonly string[];
  /** How many positional arguments are required (the rest of `args` are optional). */
  required?: number;
  summary: string;
  options: Readonly<Record<string, OptionSpec>>;
  /** Groups of options of which at most one may be given. */
  exclusive?: ReadonlyArray<readonly string[]>;
  /** option → the option it needs (`--profile` needs `--imap`). */
  needs?: Readonly<Record<string, string>>;
  /** The --account value must name an account the registry holds (or its alias). */
  existingAccount?: boolean;
  /** Left out of --help and the README (the reference server's spellings). */
  hidden?: boolean;
}

const port: ValueOption = {
  type: 'string',
  value: 'N',
  help: 'TCP port on 127.0.0.1 (0: any free port)',
  check: (v) => (/^\d{1,5}$/.test(v) && Number(v) <= 65535 ? undefined : 'a port number from 0 to 65535'),
};
const account: ValueOption = { type: 'string', value: 'NAME', help: 'the account (name or alias)' };
const demo: FlagOption = { type: 'boolean', help: 'the embedded sandbox mailbox (state in a temp dir)' };
const json: FlagOption = { type: 'boolean', help: 'JSON out' };
const dryRun: FlagOption = { type: 'boolean', help: 'say what would change, change nothing' };
const day = (what: string): ValueOption => ({
  type: 'string',
  value: 'DAY',
  help: what,
  check: (v) => (/^\d{4}-\d{2}-\d{2}$/.test(v) ? undefined : 'a day as YYYY-MM-DD'),
});
const tiers: ValueOption = {
  type: 'string',
  value: 'T',
  help: `tool tiers, comma-separated (${TIERS.join(', ')})`,
  check: (v) => {
    const bad = v.split(',').filter((t) => !(TIERS as readonly string[]).includes(t.trim()));
    return bad.length === 0 && v.trim() !== '' ? undefined : `a comma-separated list of ${TIERS.join(', ')}`;
  },
};

export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ['serve'],
    summary: 'the MCP server over stdio (the default command)',
    options: { demo, account },
    existingAccount: true,
  },
  {
    words: ['demo'],
    summary:
      'a guided tour of the real tools on the sandbox mailbox; --imap: the read tools on a throwaway Dovecot',
    options: {
      imap: { type: 'boolean', help: 'a throwaway Dovecot instead of the Gmail sandbox (needs Dovecot)' },
      profile: {
        type: 'string',
        value: 'P',
        choices: ['bridge', 'full'],
        help: 'the Dovecot profile: bridge (like Proton Mail Bridge, the default) or full',
      },
    },
    needs: { profile: 'imap' },
  },
  {
    words: ['call'],
    args: ['TOOL', "'{json}'"],
    required: 1,
    summary: 'call one tool and print its structured result',
    options: { demo, account },
    existingAccount: true,
  },
  {
    words: ['sandbox'],
    summary: 'serve the Gmail simulator on 127.0.0.1 for other programs',
    options: { port },
  },
  {
    words: ['http'],
    summary: 'MCP over Streamable HTTP on 127.0.0.1:8787/mcp (also --http)',
    options: { port, demo, account },
    existingAccount: true,
  },
  {
    words: ['sweep'],
    summary: 'return due snoozed threads to the inbox (for cron); JSON out',
    options: { 'dry-run': dryRun, demo, account },
    existingAccount: true,
  },
  {
    words: ['sweep-rules'],
    summary:
      "apply policy.json's sender rules to the inbox now (for cron); JSON out; exit 0 ok, 1 something failed",
    options: { 'dry-run': dryRun, demo, account },
    existingAccount: true,
  },
  {
    words: ['check-new-mail'],
    summary: 'gate for an agent on a timer: JSON out; exit 0 wake, 1 nothing new, 3 error',
    options: {
      demo,
      account,
      'topic-file': {
        type: 'string',
        value: 'FILE',
        help: 'wake once per new newest message: the topic is read from and written to FILE',
      },
      'since-topic': { type: 'string', value: 'T', help: 'do not wake for the topic T again' },
    },
    exclusive: [['topic-file', 'since-topic']],
    existingAccount: true,
  },
  {
    words: ['auth'],
    summary: 'sign in to Gmail in a browser and store the token (encrypted)',
    options: {
      account: { type: 'string', value: 'NAME', help: 'the account to sign in (new or existing)' },
      force: { type: 'boolean', help: 'sign in again even if a token exists' },
      'no-browser': { type: 'boolean', help: 'print the sign-in link instead of opening a browser' },
    },
  },
  {
    words: ['check'],
    summary:
      'check credentials, token, scopes and one live call; prints fixes (no --account: the default account)',
    options: { account, json },
    existingAccount: true,
  },
  {
    words: ['import-reference'],
    args: ['DIR'],
    required: 0,
    summary:
      "copy the reference server's OAuth client and plaintext tokens (default DIR ~/.mailwarden), encrypted",
    options: { force: { type: 'boolean', help: 'overwrite what this config already has' } },
  },
  {
    words: ['accounts', 'list'],
    summary: 'the registered accounts (accounts.json in the config dir); also plain `accounts`',
    options: { json },
  },
  {
    words: ['accounts', 'default'],
    args: ['NAME'],
    required: 1,
    summary: 'make NAME the account tools use when a call names none',
    options: {},
  },
  {
    words: ['accounts', 'remove'],
    args: ['NAME'],
    required: 1,
    summary: 'forget NAME: its entry and its token file or stored password',
    options: {},
  },
  {
    words: ['accounts', 'add'],
    args: ['NAME'],
    required: 1,
    summary:
      'register a Gmail account signed in with `mailwarden auth --account NAME`, or (--imap) an IMAP mailbox; Proton Mail Bridge: --imap --host 127.0.0.1 --port 1143 --starttls --pin-from-server',
    options: {
      alias: { type: 'string', value: 'A', help: 'another name for it' },
      tiers,
      address: { type: 'string', value: 'X', help: 'its address (Gmail: read from the token when absent)' },
      default: { type: 'boolean', help: 'make it the default account' },
      imap: { type: 'boolean', help: 'an IMAP mailbox' },
      host: { type: 'string', value: 'HOST', help: 'IMAP server host' },
      port: { ...port, help: 'IMAP server port' },
      tls: { type: 'boolean', help: 'implicit TLS (usually port 993)' },
      starttls: { type: 'boolean', help: 'STARTTLS on a plain port (Bridge: 1143)' },
      'insecure-loopback': { type: 'boolean', help: 'plain IMAP, loopback hosts only' },
      user: { type: 'string', value: 'USER', help: 'login name' },
      'password-stdin': { type: 'boolean', help: 'read the password from stdin instead of a prompt' },
      'pin-sha256': { type: 'string', value: 'HEX', help: "the server certificate's SHA-256 fingerprint" },
      'pin-cert': { type: 'string', value: 'FILE', help: 'the server certificate (PEM) to pin' },
      'pin-from-server': {
        type: 'boolean',
        help: 'pin the certificate the server shows now (after a prompt)',
      },
      'authserv-id': {
        type: 'string',
        value: 'ID',
        help: 'the authserv-id whose Authentication-Results to trust',
      },
    },
    exclusive: [
      ['tls', 'starttls', 'insecure-loopback'],
      ['pin-sha256', 'pin-cert', 'pin-from-server'],
      ['imap', 'address'],
    ],
    needs: {
      host: 'imap',
      port: 'imap',
      tls: 'imap',
      starttls: 'imap',
      'insecure-loopback': 'imap',
      user: 'imap',
      'password-stdin': 'imap',
      'pin-sha256': 'imap',
      'pin-cert': 'imap',
      'pin-from-server': 'imap',
      'authserv-id': 'imap',
    },
  },
  {
    words: ['clients', 'list'],
    summary: 'the HTTP clients (clients.json in the config dir), never their tokens; also plain `clients`',
    options: { json },
  },
  {
    words: ['clients', 'add'],
    args: ['NAME'],
    required: 1,
    summary:
      'a new HTTP client with its own bearer token, printed once; it sees only --accounts, with --tiers',
    options: {
      accounts: {
        type: 'string',
        value: 'A,B',
        help: 'the accounts it may use, comma-separated (names or aliases from `accounts list`)',
        required: true,
      },
      tiers: {
        type: 'string',
        value: 'T',
        help: `its tiers on them, comma-separated (${CLIENT_TIERS.join(', ')}; default read), within each account's own`,
        check: (v) => {
          const bad = v.split(',').filter((t) => !(CLIENT_TIERS as readonly string[]).includes(t.trim()));
          return bad.length === 0 && v.trim() !== ''
            ? undefined
            : `a comma-separated list of ${CLIENT_TIERS.join(', ')}`;
        },
      },
    },
  },
  {
    words: ['clients', 'remove'],
    args: ['NAME'],
    required: 1,
    summary: 'forget the HTTP client NAME: its token stops working on the next request',
    options: {},
  },
  {
    words: ['state', 'migrate'],
    summary:
      "move a one-machine install's state (action log, new-mail marks, timer slots) from its files into a PostgreSQL state database, in one transaction, and say what moved",
    options: {
      from: {
        type: 'string',
        value: 'files',
        choices: ['files'],
        required: true,
        help: 'where the state is now: files (the state dir, MAILWARDEN_STATE_DIR or the config dir)',
      },
      to: {
        type: 'string',
        value: 'URL',
        required: true,
        help: 'the state database, postgres://user@host:port/database (MAILWARDEN_STATE of the servers after)',
        check: (v) =>
          /^postgres(ql)?:\/\/./.test(v) ? undefined : 'a PostgreSQL URL, postgres://user@host:port/database',
        show: redactUrl,
      },
      'dry-run': { type: 'boolean', help: 'say what would move, write nothing' },
      json,
    },
  },
  {
    words: ['policy', 'show'],
    summary: 'the effective write policy (policy.json) per account; also plain `policy`',
    options: { account, json },
    existingAccount: true,
  },
  {
    words: ['log'],
    summary: 'the action log as a person reads it (default: the last 7 days)',
    options: { account, since: day('first day shown'), until: day('last day shown'), json },
    existingAccount: true,
  },
  {
    words: ['undo'],
    summary: 'put back what agent or rule moves took out of the inbox (one of --call, --since, --item)',
    options: {
      account,
      call: { type: 'string', value: 'ID', help: 'every move of one tool call (its id from `log`)' },
      since: { type: 'string', value: 'TIME', help: 'every move since TIME (ISO 8601)' },
      item: { type: 'string', value: 'ID…', multiple: true, help: 'these moves (their ids from `log`)' },
      'dry-run': dryRun,
    },
    exclusive: [['call', 'since', 'item']],
    existingAccount: true,
  },
  {
    words: ['review'],
    summary: 'the review page on 127.0.0.1, opened with a one-time link',
    options: {
      account,
      port,
      demo,
      'no-browser': { type: 'boolean', help: 'print the link instead of opening a browser' },
    },
    existingAccount: true,
  },
];

/** The reference server's spellings (`mailwarden --sweep`), each exactly its subcommand. */
const COMMAND_FLAGS: ReadonlySet<string> = new Set(['auth', 'check', 'sweep', 'http']);
/** The command a bare first word means when its own second word is left out. */
const DEFAULT_SUB: Readonly<Record<string, string>> = { accounts: 'list', clients: 'list', policy: 'show' };

export interface ParsedCommand {
  spec: CommandSpec;
  /** Named on the command line (not the implied `serve`). */
  explicit: boolean;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  help: boolean;
  version: boolean;
}

const name = (spec: CommandSpec): string => spec.words.join(' ');

function findSpec(words: readonly string[]): { spec: CommandSpec; used: number } | undefined {
  const [first, second] = words;
  if (first === undefined) return undefined;
  const two = COMMANDS.find((c) => c.words.length === 2 && c.words[0] === first && c.words[1] === second);
  if (two !== undefined) return { spec: two, used: 2 };
  const one = COMMANDS.find((c) => c.words.length === 1 && c.words[0] === first);
  if (one !== undefined) return { spec: one, used: 1 };
  const sub = DEFAULT_SUB[first];
  if (sub === undefined) {
    // `state` alone names no command of its own (migrating is never a default): say which do.
    const subs = COMMANDS.filter((c) => c.words.length === 2 && c.words[0] === first);
    if (subs.length > 0)
      throw new UsageError(
        `unknown command "${second !== undefined && !second.startsWith('-') ? `${first} ${second}` : first}": ${subs.map((c) => `"${name(c)}"`).join(', ')}`,
      );
    return undefined;
  }
  if (second !== undefined && !second.startsWith('-'))
    throw new UsageError(
      `unknown command "${first} ${second}": ${COMMANDS.filter((c) => c.words[0] === first)
        .map((c) => `"${name(c)}"`)
        .join(', ')}`,
    );
  const spec = COMMANDS.find((c) => c.words[0] === first && c.words[1] === sub) as CommandSpec;
  return { spec, used: 1 };
}

/** Parses a whole command line (without `node` and the script). Throws UsageError. */
export function parseCommand(argv: readonly string[]): ParsedCommand {
  let args = [...argv];
  let explicit = true;
  let found: { spec: CommandSpec; used: number } | undefined;
  const alias = args[0]?.startsWith('--') ? args[0].slice(2) : undefined;
  if (alias !== undefined && COMMAND_FLAGS.has(alias)) {
    args = args.slice(1);
    // `mailwarden --http serve` is `http`; `--sweep auth` would be two commands.
    if (args[0] !== undefined && !args[0].startsWith('-')) {
      if (!(args[0] === alias || (alias === 'http' && args[0] === 'serve')))
        throw new UsageError(`--${alias} and "${args[0]}" are two commands`);
      args = args.slice(1);
    }
    const again = args.find((a) => COMMAND_FLAGS.has(a.slice(2)) && a.startsWith('--') && a !== `--${alias}`);
    if (again !== undefined) throw new UsageError(`--${alias} and ${again} are two commands`);
    found = { spec: COMMANDS.find((c) => c.words[0] === alias) as CommandSpec, used: 0 };
  } else {
    const words = args[0] !== undefined && !args[0].startsWith('-') ? args : [];
    found = findSpec(words);
    if (found === undefined && words.length > 0) throw new UsageError(`unknown command "${words[0]}"`);
    if (found === undefined) {
      explicit = false;
      found = { spec: COMMANDS[0] as CommandSpec, used: 0 };
    }
  }
  const { spec } = found;
  const rest = args.slice(found.used);
  if (rest.includes('--help') || rest.includes('-h'))
    return { spec, explicit, positionals: [], values: {}, help: true, version: false };
  if (rest.includes('--version') || rest.includes('-v') || rest.includes('-V'))
    return { spec, explicit, positionals: [], values: {}, help: false, version: true };
  const options: Record<string, { type: 'boolean' | 'string'; multiple?: boolean }> = {};
  for (const [k, o] of Object.entries(spec.options))
    options[k] = o.type === 'string' && o.multiple ? { type: 'string', multiple: true } : { type: o.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  } catch (e) {
    // Node's message, without its advice about '--' (no command here takes such an argument),
    // and with the options the command does take.
    const said = (e as Error).message.split('. To specify a positional')[0] as string;
    const takes = Object.keys(spec.options).map((k) => `--${k}`);
    const known =
      (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? takes.length > 0
          ? `; it takes ${takes.join(', ')}`
          : '; it takes no options'
        : '';
    throw new UsageError(`${explicit ? `${name(spec)}: ` : ''}${said}${known}`);
  }
  const values = parsed.values as ParsedCommand['values'];
  const positionals = [...parsed.positionals];
  // `--item A B C`: the words after a repeatable option are its values too.
  const many = Object.entries(spec.options).find(([, o]) => o.type === 'string' && o.multiple)?.[0];
  if (many !== undefined && values[many] !== undefined && positionals.length > 0) {
    values[many] = [...(values[many] as string[]), ...positionals.splice(0)];
  }
  const where = explicit ? `${name(spec)}: ` : '';
  const max = spec.args?.length ?? 0;
  const min = spec.required ?? max;
  if (positionals.length > max)
    throw new UsageError(`${where}unexpected argument "${positionals[max] ?? ''}"`);
  if (positionals.length < min)
    throw new UsageError(`${where}${spec.args?.[positionals.length]} is required`);
  for (const [k, v] of Object.entries(values)) {
    const o = spec.options[k];
    if (o === undefined || o.type !== 'string' || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v as string]) {
      const shown = o.show?.(one) ?? one;
      if (o.choices !== undefined && !o.choices.includes(one))
        throw new UsageError(`${where}--${k} must be one of ${o.choices.join(', ')} (got "${shown}")`);
      const why = o.check?.(one);
      if (why !== undefined) throw new UsageError(`${where}--${k} must be ${why} (got "${shown}")`);
    }
  }
  for (const group of spec.exclusive ?? []) {
    const given = group.filter((k) => values[k] !== undefined);
    if (given.length > 1)
      throw new UsageError(`${where}${given.map((k) => `--${k}`).join(' and ')} exclude each other`);
  }
  for (const [k, needed] of Object.entries(spec.needs ?? {}))
    if (values[k] !== undefined && values[needed] === undefined)
      throw new UsageError(`${where}--${k} needs --${needed}`);
  for (const [k, o] of Object.entries(spec.options))
    if (o.type === 'string' && o.required === true && values[k] === undefined)
      throw new UsageError(`${where}--${k} is required`);
  return { spec, explicit, positionals, values, help: false, version: false };
}

function synopsis(spec: CommandSpec): string {
  const inGroup = new Map<string, readonly string[]>();
  for (const g of spec.exclusive ?? []) for (const k of g) inGroup.set(k, g);
  const shown = new Set<string>();
  const parts: string[] = [];
  const one = (k: string) => {
    const o = spec.options[k] as OptionSpec;
    return o.type === 'boolean' ? `--${k}` : `--${k} ${o.choices ? o.choices.join('|') : o.value}`;
  };
  for (const k of Object.keys(spec.options)) {
    if (shown.has(k)) continue;
    const g = inGroup.get(k);
    if (g !== undefined) {
      for (const x of g) shown.add(x);
      parts.push(`[${g.map(one).join(' | ')}]`);
    } else {
      shown.add(k);
      const o = spec.options[k] as OptionSpec;
      parts.push(o.type === 'string' && o.required === true ? one(k) : `[${one(k)}]`);
    }
  }
  const args = (spec.args ?? []).map((a, i) =>
    i < (spec.required ?? spec.args?.length ?? 0) ? a : `[${a}]`,
  );
  return ['mailwarden', ...spec.words, ...args, ...parts].join(' ');
}

const ENVIRONMENT = `Environment: MAILWARDEN_TOOLS (tiers: read,manage,filters), MAILWARDEN_READONLY=1,
MAILWARDEN_ACCOUNT, MAILWARDEN_CONFIG_DIR (or MAILWARDEN_DIR), MAILWARDEN_STATE_DIR (action log, marks, locks,
preview tokens; default: the config dir), MAILWARDEN_STATE=files|postgres://… (where the action log,
the write lock, the marks, preview tokens, the unsubscribe ledger and the accounts with their
encrypted secrets live; default: files), MAILWARDEN_CREDENTIALS (OAuth client JSON),
MAILWARDEN_TOKEN_PASSPHRASE (encrypt tokens with a passphrase), MAILWARDEN_KEYSTORE=auto|off,
MAILWARDEN_AUTH_TIMEOUT_MS, MAILWARDEN_AUTO_SWEEP=1 (sweep snoozed threads at
start and hourly while serving), MAILWARDEN_NOW (testing aid: the clock starts at this ISO instant),
MAILWARDEN_DEBUG=1 (full errors with stacks on stderr),
MAILWARDEN_DEMO=1 (the same as --demo). Switches take 1/0, true/false, yes/no, on/off.
Waits: MAILWARDEN_REQUEST_TIMEOUT_MS (per Gmail request, default 20000), MAILWARDEN_WRITE_TIMEOUT_MS
(per write, default 30000), MAILWARDEN_RATE_LIMIT_MAX_WAIT_MS (the one wait a rate limit gets, default
20000), MAILWARDEN_CALL_BUDGET_MS (per tool call, default 120000).
HTTP: MAILWARDEN_TOKEN (required bearer), PORT, MAILWARDEN_HOST (default 127.0.0.1),
MAILWARDEN_ALLOWED_HOSTS, MAILWARDEN_ALLOWED_CLIENTS (CIDRs), MAILWARDEN_ALLOW_NO_TOKEN=1.`;

/** The command list: one synopsis and one summary per command (--help and the README). */
export function commandList(): string {
  return COMMANDS.filter((c) => !c.hidden)
    .map((c) => `  ${synopsis(c)}\n      ${c.summary}`)
    .join('\n');
}

/** The whole --help text. */
export function usage(version: string): string {
  return `mailwarden ${version} — an MCP server for your mailbox that never sends mail

Usage:
${commandList()}
  mailwarden --version | --help
  --auth, --check, --sweep, --http: the same as the subcommands (the reference server's spelling)

${ENVIRONMENT}`;
}

/** One command's --help. */
export function commandUsage(spec: CommandSpec): string {
  const lines = Object.entries(spec.options).map(([k, o]) => {
    const left = o.type === 'boolean' ? `--${k}` : `--${k} ${o.choices ? o.choices.join('|') : o.value}`;
    return `  ${left.padEnd(28)} ${o.help}`;
  });
  return `Usage: ${synopsis(spec)}\n${spec.summary}\n${lines.length > 0 ? `\n${lines.join('\n')}\n` : ''}`;
}

export const COMMANDS_START = '<!-- commands:start -->';
export const COMMANDS_END = '<!-- commands:end -->';

/** The README with its command list made again from the table (scripts/gen-docs.mjs). */
export function replaceCommandList(readme: string): string {
  const start = readme.indexOf(COMMANDS_START);
  const end = readme.indexOf(COMMANDS_END);
  if (start < 0 || end < 0) throw new Error('README has no generated command list markers');
  const block = `${COMMANDS_START}\n\n\`\`\`\n${commandList().replace(/^ {2}/gm, '')}\n\`\`\`\n\n`;
  return readme.slice(0, start) + block + readme.slice(end);
}
