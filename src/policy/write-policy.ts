import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getPublicSuffix } from 'tldts';
import { decodeDomain, isDomainName, normalizeDomain } from '../mail/domains.js';
import { MailError } from '../mail/errors.js';
import { configDir } from '../store/config.js';
import type { Env } from '../store/config.js';

/**
 * The write policy (docs/architecture.md, "The write policy"): policy.json in the config dir,
 * `{"default": {…rules}, "accounts": {"NAME": {…rules}}}`. Every key is optional; an account
 * section overrides the default section key by key, and an absent key takes the guarded default
 * below, so a missing file is the safest setting rather than the most permissive one.
 */

export interface SenderRules {
  /** Addresses or domains (normalised: lower-case, Unicode U-labels). */
  archive: string[];
  spam: string[];
}

export interface PolicyRules {
  inboxOnlyMoves: boolean;
  protectCorrespondents: boolean;
  correspondentsDays: number;
  correspondentsRefreshMinutes: number;
  /** 0 disables the cap. */
  dailyMoveCap: number;
  capConfirmation: 'allowed' | 'forbidden';
  /** null: any label. */
  allowedLabels: string[] | null;
  senderRules: SenderRules;
  /**
   * Senders (addresses or domains, as in senderRules) whose mail neither the agent nor a rule
   * moves out of the inbox; a person still can.
   */
  neverMove: string[];
  /** How often a serving server applies the sender rules; 0: never on its own. */
  sweepRulesEveryMinutes: number;
  /**
   * The label put on every message an agent or a sender rule moves out of the inbox (not on
   * Spam or Trash moves), so a person finds all of it with one search; a restore removes it.
   * null: none.
   */
  agentLabel: string | null;
}

export type RuleKey = keyof PolicyRules;
export type PartialRules = Partial<PolicyRules>;

export interface PolicyFile {
  default: PartialRules;
  accounts: Record<string, PartialRules>;
}

export interface LoadedPolicy extends PolicyFile {
  path: string;
  /** False when there is no policy.json: every value is the built-in default. */
  exists: boolean;
}

export const DEFAULT_RULES: Readonly<PolicyRules> = Object.freeze({
  inboxOnlyMoves: true,
  protectCorrespondents: true,
  correspondentsDays: 365,
  correspondentsRefreshMinutes: 10,
  dailyMoveCap: 50,
  capConfirmation: 'allowed',
  allowedLabels: null,
  senderRules: { archive: [], spam: [] },
  neverMove: [],
  sweepRulesEveryMinutes: 15,
  agentLabel: 'mailwarden',
});

export const RULE_KEYS = Object.keys(DEFAULT_RULES) as RuleKey[];

/** Where an effective value came from, for `mailwarden policy show`. */
export type RuleSource = 'built-in default' | 'policy.json default section' | 'policy.json account section';

export interface EffectivePolicy {
  account: string;
  rules: PolicyRules;
  sources: Record<RuleKey, RuleSource>;
  /** policy.json's path, for messages that say which key to change. */
  path: string;
}

export function policyPath(env: Env): string {
  return join(configDir(env), 'policy.json');
}

const ACCOUNT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function bad(field: string, problem: string, path: string): MailError {
  return new MailError(
    'invalid_input',
    `policy.json: ${field} ${problem}. Fix ${path}, or remove the key to use the default.`,
    { field, retryable: false },
  );
}

function shown(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

function int(v: unknown, field: string, min: number, max: number, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw bad(field, `must be an integer ${range} (got ${shown(v)})`, path);
  }
  return v;
}

function bool(v: unknown, field: string, path: string): boolean {
  if (typeof v !== 'boolean') throw bad(field, `must be true or false (got ${shown(v)})`, path);
  return v;
}

function strings(v: unknown, field: string, path: string): string[] {
  if (!Array.isArray(v)) throw bad(field, `must be a list of strings (got ${shown(v)})`, path);
  return v.map((s, i) => {
    if (typeof s !== 'string' || s.trim() === '')
      throw bad(`${field}[${i}]`, `must be a non-empty string (got ${shown(s)})`, path);
    return s.trim();
  });
}

// A local part as people write it in a rule: no spaces, brackets or separators (quoted local
// parts are legal in RFC 5322 §3.4.1 but never needed to name a sender).
const LOCAL = /^[^\s@<>()[\]",;:\\]+$/;

/**
 * An entry of senderRules, normalised ("Alice@Example.COM" → "alice@example.com"); undefined
 * when it is neither an address nor a domain. A public suffix ("co.uk") is refused: it would
 * cover every sender under it.
 */
export function normalizeSenderRule(raw: string): string | undefined {
  const s = raw.trim();
  const at = s.lastIndexOf('@');
  const local = at < 0 ? undefined : s.slice(0, at).toLowerCase();
  if (local !== undefined && !LOCAL.test(local)) return undefined;
  const host = normalizeDomain(at < 0 ? s : s.slice(at + 1));
  if (!isDomainName(host)) return undefined;
  const decoded = decodeDomain(host);
  if (decoded.badPunycode) return undefined;
  if (local === undefined && getPublicSuffix(host) === host) return undefined;
  return local === undefined ? decoded.unicode : `${local}@${decoded.unicode}`;
}

function normalizeAddress(address: string): { address: string; domain: string } | undefined {
  const s = address.trim().replace(/^<|>$/g, '');
  const at = s.lastIndexOf('@');
  if (at <= 0) return undefined;
  const domain = decodeDomain(s.slice(at + 1)).unicode;
  if (domain === '') return undefined;
  return { address: `${s.slice(0, at).toLowerCase()}@${domain}`, domain };
}

/**
 * Whether a sender rule covers an address: an address rule matches that address exactly
 * (case-insensitively); a domain rule matches the domain itself and its subdomains, on a label
 * boundary, so `example.com` covers `a@x.example.com` but never `a@badexample.com`.
 */
export function senderRuleMatches(rule: string, address: string): boolean {
  const r = normalizeSenderRule(rule);
  const a = normalizeAddress(address);
  if (r === undefined || a === undefined) return false;
  if (r.includes('@')) return a.address === r;
  return a.domain === r || a.domain.endsWith(`.${r}`);
}

/**
 * The sender rule that applies to an address, most specific first (an address rule, then the
 * longest domain), so "spam: a@example.com" beats "archive: example.com".
 */
export function matchSenderRule(
  rules: SenderRules,
  address: string,
): { action: 'archive' | 'spam'; rule: string } | undefined {
  const hits = (['spam', 'archive'] as const).flatMap((action) =>
    rules[action].filter((r) => senderRuleMatches(r, address)).map((rule) => ({ action, rule })),
  );
  const rank = (r: string): number => (r.includes('@') ? 10_000 : r.length);
  return hits.sort((x, y) => rank(y.rule) - rank(x.rule))[0];
}

/** A list of sender rules (addresses or domains), normalised, each entry once. */
function senderList(v: unknown, field: string, path: string): string[] {
  return [
    ...new Set(
      strings(v, field, path).map((raw, i) => {
        const rule = normalizeSenderRule(raw);
        if (rule === undefined)
          throw bad(
            `${field}[${i}]`,
            `must be an address (local@domain) or a domain name that is not a public suffix (got ${shown(raw)})`,
            path,
          );
        return rule;
      }),
    ),
  ];
}

function senderRules(v: unknown, field: string, path: string): SenderRules {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw bad(field, `must be an object {"archive": [...], "spam": [...]} (got ${shown(v)})`, path);
  const out: SenderRules = { archive: [], spam: [] };
  for (const [k, list] of Object.entries(v)) {
    if (k !== 'archive' && k !== 'spam') throw bad(`${field}.${k}`, 'is not a key (archive, spam)', path);
    out[k] = senderList(list, `${field}.${k}`, path);
  }
  const both = out.archive.find((r) => out.spam.includes(r));
  if (both !== undefined) throw bad(field, `lists "${both}" under both archive and spam`, path);
  return out;
}

// A label name every provider can hold: Gmail's label rules and an IMAP folder or keyword name
// (no atom-specials: RFC 3501 §9), one level (a "/" would make a Bridge folder tree).
const AGENT_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

function agentLabel(v: unknown, field: string, path: string): string | null {
  if (v === null) return null;
  if (typeof v !== 'string' || !AGENT_LABEL.test(v))
    throw bad(
      field,
      `must be null or a label name of 1 to 40 letters, digits, ".", "_" or "-", starting with a letter or digit (got ${shown(v)})`,
      path,
    );
  const system = ['inbox', 'spam', 'trash', 'sent', 'draft', 'drafts', 'unread', 'starred', 'important'];
  if (system.includes(v.toLowerCase()))
    throw bad(field, `must not name a system label (got ${shown(v)})`, path);
  return v;
}

function rules(v: unknown, field: string, path: string): PartialRules {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw bad(field, `must be an object of rules (got ${shown(v)})`, path);
  const out: PartialRules = {};
  for (const [k, value] of Object.entries(v)) {
    const f = `${field}.${k}`;
    switch (k) {
      case 'inboxOnlyMoves':
      case 'protectCorrespondents':
        out[k] = bool(value, f, path);
        break;
      case 'correspondentsDays':
        out[k] = int(value, f, 1, 3650, path);
        break;
      case 'correspondentsRefreshMinutes':
        out[k] = int(value, f, 1, 1440, path);
        break;
      case 'sweepRulesEveryMinutes':
        // 0: the server does not sweep on its own (sweep-rules and the new-mail tools still do).
        out[k] = int(value, f, 0, 1440, path);
        break;
      case 'dailyMoveCap':
        out[k] = int(value, f, 0, Number.MAX_SAFE_INTEGER, path);
        break;
      case 'capConfirmation':
        if (value !== 'allowed' && value !== 'forbidden')
          throw bad(f, `must be "allowed" or "forbidden" (got ${shown(value)})`, path);
        out[k] = value;
        break;
      case 'allowedLabels':
        out[k] = value === null ? null : [...new Set(strings(value, f, path))];
        break;
      case 'senderRules':
        out[k] = senderRules(value, f, path);
        break;
      case 'agentLabel':
        out[k] = agentLabel(value, f, path);
        break;
      case 'neverMove':
        out[k] = senderList(value, f, path);
        break;
      default:
        throw bad(f, `is not a policy key (known: ${RULE_KEYS.join(', ')})`, path);
    }
  }
  return out;
}

/** Validates the parsed JSON of policy.json; every problem names its field path. */
export function parsePolicy(json: unknown, path = 'policy.json'): PolicyFile {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw bad('(top level)', 'must be an object {"default": {...}, "accounts": {...}}', path);
  const out: PolicyFile = { default: {}, accounts: {} };
  for (const [k, v] of Object.entries(json)) {
    if (k === 'default') out.default = rules(v, 'default', path);
    else if (k === 'accounts') {
      if (v === null || typeof v !== 'object' || Array.isArray(v))
        throw bad('accounts', `must be an object keyed by account name (got ${shown(v)})`, path);
      for (const [name, section] of Object.entries(v)) {
        if (!ACCOUNT_NAME.test(name))
          throw bad(
            `accounts.${name}`,
            'is not an account name (lower-case letters, digits, . _ -, as in accounts.json)',
            path,
          );
        out.accounts[name] = rules(section, `accounts.${name}`, path);
      }
    } else throw bad(k, 'is not a key (default, accounts)', path);
  }
  return out;
}

/**
 * Reads and validates policy.json. A missing file is all defaults; a file that cannot be read
 * or does not validate is an error, never a silent fallback, because the fallback for a broken
 * policy must not be "whatever the model asks".
 */
export async function loadPolicy(env: Env): Promise<LoadedPolicy> {
  const path = policyPath(env);
  let text: string;
  try {
    // Read on every write, and a few kilobytes: one synchronous read is cheaper than the four
    // thread-pool round trips of the promise API.
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      return { path, exists: false, default: {}, accounts: {} };
    throw new MailError('internal_error', `cannot read the write policy ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MailError(
      'invalid_input',
      `policy.json: ${path} is not valid JSON (${(e as Error).message}). Fix it, or delete it to use the defaults.`,
      { field: 'policy.json', retryable: false },
    );
  }
  return { path, exists: true, ...parsePolicy(json, path) };
}

/** The rules for one account: its section over the default section over the built-in defaults. */
export function effectivePolicy(policy: PolicyFile & { path?: string }, account: string): EffectivePolicy {
  const own = policy.accounts[account] ?? {};
  const rules = {} as Record<RuleKey, unknown>;
  const sources = {} as Record<RuleKey, RuleSource>;
  for (const key of RULE_KEYS) {
    if (own[key] !== undefined) {
      rules[key] = own[key];
      sources[key] = 'policy.json account section';
    } else if (policy.default[key] !== undefined) {
      rules[key] = policy.default[key];
      sources[key] = 'policy.json default section';
    } else {
      rules[key] = DEFAULT_RULES[key];
      sources[key] = 'built-in default';
    }
  }
  const r = structuredClone(rules) as unknown as PolicyRules;
  return { account, rules: r, sources, path: policy.path ?? 'policy.json' };
}

/**
 * Labels exempt from allowedLabels: flags the user sees as marks, not as places (IMAP maps them
 * to \Seen and \Flagged), so marking read or starred never needs the label list.
 */
const FLAG_LABELS: ReadonlySet<string> = new Set(['UNREAD', 'STARRED', 'IMPORTANT']);

/** Whether the agent may apply or create a label of that name (case-insensitive, as Gmail compares). */
export function labelAllowed(rules: Pick<PolicyRules, 'allowedLabels'>, name: string): boolean {
  if (rules.allowedLabels === null || FLAG_LABELS.has(name)) return true;
  const n = name.trim().toLowerCase();
  return rules.allowedLabels.some((l) => l.toLowerCase() === n);
}
