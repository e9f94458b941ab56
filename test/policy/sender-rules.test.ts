import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/mail/query/index.js';
import { senderRuleFor, senderRuleQueries } from '../../src/policy/sender-rules.js';
import { parsePolicy } from '../../src/policy/write-policy.js';
import type { SenderRules } from '../../src/policy/write-policy.js';

/** Rules as policy.json would give them (normalised by the parser). */
function rules(archive: string[], spam: string[] = []): SenderRules {
  const p = parsePolicy({ default: { senderRules: { archive, spam } } });
  return p.default.senderRules as SenderRules;
}

describe('senderRuleFor: which rule moves a sender', () => {
  const r = rules(['example.com', 'News@Shop.Example'], ['junk.example', 'boss@example.com']);

  it('a domain covers itself and its subdomains, on a label boundary', () => {
    expect(senderRuleFor(r, 'a@example.com')).toEqual({ action: 'archive', rule: 'example.com' });
    expect(senderRuleFor(r, 'a@x.y.example.com')).toEqual({ action: 'archive', rule: 'example.com' });
    expect(senderRuleFor(r, 'A@MAIL.Example.COM')).toEqual({ action: 'archive', rule: 'example.com' });
  });

  it('a lookalike domain is not covered', () => {
    expect(senderRuleFor(r, 'a@badexample.com')).toBeUndefined();
    expect(senderRuleFor(r, 'a@example.com.evil.net')).toBeUndefined();
    expect(senderRuleFor(r, 'example.com@evil.net')).toBeUndefined();
    expect(senderRuleFor(r, 'a@notjunk.example')).toBeUndefined();
  });

  it('an address matches exactly, case-insensitively, and beats its domain', () => {
    expect(senderRuleFor(r, 'NEWS@shop.example')).toEqual({ action: 'archive', rule: 'news@shop.example' });
    expect(senderRuleFor(r, 'other@shop.example')).toBeUndefined();
    expect(senderRuleFor(r, 'news@a.shop.example')).toBeUndefined();
    expect(senderRuleFor(r, 'Boss@Example.com')).toEqual({ action: 'spam', rule: 'boss@example.com' });
  });

  it('no address, no rule', () => {
    expect(senderRuleFor(r, undefined)).toBeUndefined();
    expect(senderRuleFor(r, '')).toBeUndefined();
  });

  it('a Unicode domain rule covers its A-label form', () => {
    const u = rules(['bücher.example']);
    expect(senderRuleFor(u, 'a@xn--bcher-kva.example')).toEqual({
      action: 'archive',
      rule: 'bücher.example',
    });
    expect(senderRuleFor(u, 'a@shop.bücher.example')).toEqual({ action: 'archive', rule: 'bücher.example' });
  });
});

describe('senderRuleQueries: the coarse inbox search', () => {
  it('one inbox query naming every rule, which the query language parses', () => {
    const q = senderRuleQueries(rules(['example.com', 'news@shop.example'], ['junk.example']));
    expect(q).toEqual(['in:inbox from:(example.com OR news@shop.example OR junk.example)']);
    expect(() => parseQuery(q[0] as string)).not.toThrow();
  });

  it('searches a Unicode domain in both forms, and an odd local part by its domain', () => {
    const q = senderRuleQueries(rules(['bücher.example', 'we{ird}@odd.example']));
    expect(q).toEqual(['in:inbox from:(bücher.example OR xn--bcher-kva.example OR odd.example)']);
  });

  it('splits many rules over several queries of at most 20 terms', () => {
    const many = Array.from({ length: 45 }, (_, i) => `d${i}.example`);
    const q = senderRuleQueries(rules(many));
    expect(q).toHaveLength(3);
    expect(q.map((x) => x.split(' OR ').length)).toEqual([20, 20, 5]);
    expect(senderRuleQueries(rules([]))).toEqual([]);
  });
});

describe('sweepRulesEveryMinutes', () => {
  it('takes 0 (no sweeps of its own) to 1440, and nothing else', () => {
    expect(parsePolicy({ default: { sweepRulesEveryMinutes: 0 } }).default.sweepRulesEveryMinutes).toBe(0);
    expect(parsePolicy({ default: { sweepRulesEveryMinutes: 1440 } }).default.sweepRulesEveryMinutes).toBe(
      1440,
    );
    for (const bad of [-1, 1441, 2.5, '15'])
      expect(() => parsePolicy({ default: { sweepRulesEveryMinutes: bad } })).toThrow(
        /default\.sweepRulesEveryMinutes/,
      );
  });
});
