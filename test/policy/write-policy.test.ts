import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { policyCommand } from '../../src/cli/policy.js';
import { MailError } from '../../src/mail/errors.js';
import {
  DEFAULT_RULES,
  effectivePolicy,
  labelAllowed,
  loadPolicy,
  matchSenderRule,
  parsePolicy,
  senderRuleMatches,
} from '../../src/policy/write-policy.js';
import { tempDir } from '../helpers/temp.js';

function fails(json: unknown): MailError {
  try {
    parsePolicy(json, '/cfg/policy.json');
  } catch (e) {
    expect(e).toBeInstanceOf(MailError);
    return e as MailError;
  }
  throw new Error('expected parsePolicy to throw');
}

function dirWith(files: Record<string, string>): string {
  const dir = tempDir('mailwarden-policy-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('policy.json validation', () => {
  it('a negative cap is invalid_input naming the field path and the value', () => {
    const e = fails({ accounts: { work: { dailyMoveCap: -3 } } });
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('accounts.work.dailyMoveCap');
    expect(e.message).toMatch(
      /^policy\.json: accounts\.work\.dailyMoveCap must be an integer ≥ 0 \(got -3\)/,
    );
    expect(e.message).toContain('/cfg/policy.json');
  });

  it('a fractional number, a wrong type and an out-of-range window are refused', () => {
    expect(fails({ default: { dailyMoveCap: 2.5 } }).field).toBe('default.dailyMoveCap');
    const t = fails({ default: { inboxOnlyMoves: 'yes' } });
    expect(t.field).toBe('default.inboxOnlyMoves');
    expect(t.message).toContain('must be true or false (got "yes")');
    expect(fails({ default: { correspondentsDays: 0 } }).message).toContain('from 1 to 3650');
    expect(fails({ default: { correspondentsRefreshMinutes: 1441 } }).field).toBe(
      'default.correspondentsRefreshMinutes',
    );
    expect(fails({ default: { capConfirmation: 'maybe' } }).field).toBe('default.capConfirmation');
    expect(fails({ default: { allowedLabels: 'Work' } }).field).toBe('default.allowedLabels');
    expect(fails({ default: { allowedLabels: ['ok', 3] } }).field).toBe('default.allowedLabels[1]');
  });

  it('unknown keys are refused at every level', () => {
    expect(fails({ defaults: {} }).field).toBe('defaults');
    const e = fails({ default: { dailyCap: 10 } });
    expect(e.field).toBe('default.dailyCap');
    expect(e.message).toContain('is not a policy key');
    expect(fails({ default: { senderRules: { delete: ['a.com'] } } }).field).toBe(
      'default.senderRules.delete',
    );
    expect(fails({ accounts: { Work: {} } }).field).toBe('accounts.Work');
    expect(fails([]).code).toBe('invalid_input');
  });

  it('sender rules: addresses and domains, lower-cased; junk and public suffixes refused', () => {
    const p = parsePolicy({
      default: {
        senderRules: { archive: ['News@Example.COM', 'Shop.example'], spam: ['xn--mnchen-3ya.de'] },
      },
    });
    expect(p.default.senderRules).toEqual({
      archive: ['news@example.com', 'shop.example'],
      spam: ['münchen.de'],
    });
    expect(fails({ default: { senderRules: { spam: ['not a domain'] } } }).field).toBe(
      'default.senderRules.spam[0]',
    );
    expect(fails({ default: { senderRules: { spam: ['co.uk'] } } }).field).toBe(
      'default.senderRules.spam[0]',
    );
    expect(fails({ default: { senderRules: { spam: ['com'] } } }).code).toBe('invalid_input');
    expect(fails({ default: { senderRules: { spam: ['a b@x.com'] } } }).code).toBe('invalid_input');
    expect(fails({ default: { senderRules: { archive: ['x.com'], spam: ['X.com'] } } }).message).toContain(
      'under both archive and spam',
    );
  });

  it('neverMove: addresses and domains like sender rules, normalised; junk refused by index', () => {
    const p = parsePolicy({ accounts: { work: { neverMove: ['Boss@Example.COM', 'family.example'] } } });
    expect(p.accounts['work']?.neverMove).toEqual(['boss@example.com', 'family.example']);
    expect(fails({ default: { neverMove: ['co.uk'] } }).field).toBe('default.neverMove[0]');
    expect(fails({ default: { neverMove: 'a.com' } }).field).toBe('default.neverMove');
  });
});

describe('senderRuleMatches', () => {
  it('a domain covers itself and its subdomains on a label boundary, never a lookalike', () => {
    expect(senderRuleMatches('example.com', 'a@example.com')).toBe(true);
    expect(senderRuleMatches('example.com', 'a@x.example.com')).toBe(true);
    expect(senderRuleMatches('example.com', 'A@X.Example.COM')).toBe(true);
    expect(senderRuleMatches('example.com', 'a@badexample.com')).toBe(false);
    expect(senderRuleMatches('example.com', 'a@example.com.evil.net')).toBe(false);
    expect(senderRuleMatches('example.com', 'example.com@evil.net')).toBe(false);
    expect(senderRuleMatches('x.example.com', 'a@example.com')).toBe(false);
  });

  it('an address rule matches that address exactly, case-insensitively', () => {
    expect(senderRuleMatches('news@example.com', 'NEWS@example.com')).toBe(true);
    expect(senderRuleMatches('news@example.com', '<news@example.com>')).toBe(true);
    expect(senderRuleMatches('news@example.com', 'news@x.example.com')).toBe(false);
    expect(senderRuleMatches('news@example.com', 'othernews@example.com')).toBe(false);
    expect(senderRuleMatches('news@example.com', 'no-address')).toBe(false);
  });

  it('IDNA: an A-label rule matches the U-label address', () => {
    expect(senderRuleMatches('xn--mnchen-3ya.de', 'info@münchen.de')).toBe(true);
  });

  it('matchSenderRule: the most specific rule wins', () => {
    const rules = { archive: ['example.com'], spam: ['bad@example.com', 'ads.example.com'] };
    expect(matchSenderRule(rules, 'bad@example.com')).toEqual({ action: 'spam', rule: 'bad@example.com' });
    expect(matchSenderRule(rules, 'x@ads.example.com')).toEqual({ action: 'spam', rule: 'ads.example.com' });
    expect(matchSenderRule(rules, 'x@example.com')).toEqual({ action: 'archive', rule: 'example.com' });
    expect(matchSenderRule(rules, 'x@other.org')).toBeUndefined();
  });
});

describe('effectivePolicy', () => {
  it('account section over default section over built-in defaults, key by key, with sources', () => {
    const file = parsePolicy({
      default: { dailyMoveCap: 20, allowedLabels: ['Receipts'] },
      accounts: { work: { dailyMoveCap: 5, protectCorrespondents: false } },
    });
    const work = effectivePolicy(file, 'work');
    expect(work.rules.dailyMoveCap).toBe(5);
    expect(work.rules.protectCorrespondents).toBe(false);
    expect(work.rules.allowedLabels).toEqual(['Receipts']);
    expect(work.rules.inboxOnlyMoves).toBe(true);
    expect(work.sources.dailyMoveCap).toBe('policy.json account section');
    expect(work.sources.allowedLabels).toBe('policy.json default section');
    expect(work.sources.inboxOnlyMoves).toBe('built-in default');
    expect(effectivePolicy(file, 'home').rules.dailyMoveCap).toBe(20);
  });

  it('labelAllowed: any when null; else the list, case-insensitively; flags always', () => {
    expect(labelAllowed({ allowedLabels: null }, 'Anything')).toBe(true);
    expect(labelAllowed({ allowedLabels: ['Receipts'] }, 'receipts')).toBe(true);
    expect(labelAllowed({ allowedLabels: ['Receipts'] }, 'Secret')).toBe(false);
    expect(labelAllowed({ allowedLabels: [] }, 'STARRED')).toBe(true);
  });
});

describe('loadPolicy', () => {
  it('a missing file is all defaults', async () => {
    const dir = dirWith({});
    const p = await loadPolicy({ MAILWARDEN_CONFIG_DIR: dir });
    expect(p.exists).toBe(false);
    expect(effectivePolicy(p, 'default').rules).toEqual(DEFAULT_RULES);
  });

  it('invalid JSON names the file', async () => {
    const dir = dirWith({ 'policy.json': '{"default": {' });
    const e = await loadPolicy({ MAILWARDEN_CONFIG_DIR: dir }).then(
      () => undefined,
      (x: unknown) => x,
    );
    if (!(e instanceof MailError)) throw new Error('expected a MailError');
    expect(e.code).toBe('invalid_input');
    expect(e.message).toContain(join(dir, 'policy.json'));
    expect(e.message).toContain('not valid JSON');
  });
});

describe('mailwarden policy show', () => {
  const out: string[] = [];
  const err: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    out.length = 0;
    err.length = 0;
  });
  const capture = (): void => {
    vi.spyOn(console, 'log').mockImplementation((s: string) => void out.push(s));
    vi.spyOn(console, 'error').mockImplementation((s: string) => void err.push(s));
  };

  it('--json shows each registered account, its values and where each came from', async () => {
    const dir = dirWith({
      'accounts.json': JSON.stringify({
        accounts: [
          { name: 'work', provider: 'gmail', tiers: ['read', 'manage'] },
          { name: 'home', provider: 'gmail', tiers: ['read'] },
        ],
      }),
      'policy.json': JSON.stringify({
        default: { dailyMoveCap: 20 },
        accounts: { work: { dailyMoveCap: 5 }, wrok: {} },
      }),
    });
    capture();
    expect(await policyCommand(['show', '--json'], { MAILWARDEN_CONFIG_DIR: dir })).toBe(0);
    const json = JSON.parse(out.join('\n')) as {
      accounts: Array<{ account: string; rules: { dailyMoveCap: number }; sources: Record<string, string> }>;
      unknownAccounts: string[];
    };
    expect(json.accounts.map((a) => [a.account, a.rules.dailyMoveCap, a.sources['dailyMoveCap']])).toEqual([
      ['work', 5, 'policy.json accounts.work'],
      ['home', 20, 'policy.json default section'],
    ]);
    expect(json.unknownAccounts).toEqual(['wrok']);
    expect(err.join('\n')).toContain('"wrok"');
  });

  it('text, one account, no accounts.json: "default" with built-in defaults', async () => {
    const dir = dirWith({});
    capture();
    expect(await policyCommand([], { MAILWARDEN_CONFIG_DIR: dir })).toBe(0);
    const text = out.join('\n');
    expect(text).toContain('account default');
    expect(text).toMatch(/dailyMoveCap\s+50\s+built-in default/);
    expect(text).toContain('today: 0 of 50 agent moves out of the inbox used');
  });

  it('a bad policy.json exits 1 with the field named', async () => {
    const dir = dirWith({ 'policy.json': JSON.stringify({ default: { dailyMoveCap: -1 } }) });
    capture();
    expect(await policyCommand(['show', '--account', 'work'], { MAILWARDEN_CONFIG_DIR: dir })).toBe(1);
    expect(err.join('\n')).toContain(
      'invalid_input: policy.json: default.dailyMoveCap must be an integer ≥ 0',
    );
  });
});
