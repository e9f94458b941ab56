import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRuleSweeps } from '../../src/cli/sweep-rules.js';
import { MailError } from '../../src/mail/errors.js';
import type { ServerRuntime } from '../../src/mcp/server.js';
import { ActionLog } from '../../src/policy/action-log.js';
import type { Gate } from '../../src/policy/gate.js';
import type { Tier } from '../../src/policy/tiers.js';
import { effectivePolicy, parsePolicy } from '../../src/policy/write-policy.js';
import type { Mailbox } from '../../src/providers/mailbox.js';

/*
 * A serving server's own rule sweeps (startRuleSweeps): when they run, for which accounts, and
 * that a failure is logged, not thrown. The mailbox answers every search with nothing, so each
 * sweep is one search per account; fake timers stand in for the minutes.
 */

interface World {
  runtime: ServerRuntime;
  searches: string[];
  opened: string[];
  warnings: string[];
  setPolicy(p: unknown): void;
  failSearches(on: boolean): void;
}

function world(accounts: Array<{ name: string; tiers: Tier[] }>, initial: unknown): World {
  let policy = parsePolicy(initial);
  let failing = false;
  const w: World = {
    searches: [],
    opened: [],
    warnings: [],
    setPolicy: (p) => (policy = parsePolicy(p)),
    failSearches: (on) => (failing = on),
    runtime: undefined as unknown as ServerRuntime,
  };
  // Every other method fails loudly: a sweep that finds nothing must not call them.
  const unused = Object.fromEntries(
    ['getProfile', 'listLabels', 'getLabel', 'searchThreads', 'getThread', 'getAttachment', 'history']
      .concat(['createLabel', 'updateLabel', 'deleteLabel', 'modifyThread', 'modifyMessages'])
      .concat(['trashThread', 'untrashThread', 'getMessageLabels', 'close'])
      .map((k) => [k, () => Promise.reject(new Error(`${k} was called`))]),
  );
  const mailboxOf = (name: string): Mailbox =>
    ({
      ...unused,
      account: name,
      provider: 'gmail',
      async searchMessages(q: string) {
        if (failing) throw new MailError('network_error', 'down');
        w.searches.push(`${name}: ${q}`);
        return { items: [] };
      },
      usage: () => ({ requests: 0, quotaUnits: 0 }),
    }) as unknown as Mailbox;
  w.runtime = {
    tools: [],
    tiers: new Set<Tier>(['read', 'manage']),
    mailbox: () => Promise.reject(new Error('routing is used')),
    actionLog: new ActionLog('/nonexistent/action-log.jsonl'),
    clock: { now: () => Date.now() },
    log: { info: () => undefined, warn: (m, f) => w.warnings.push(`${m} ${JSON.stringify(f)}`) },
    version: 'test',
    accounts: {
      resolve: () => Promise.reject(new Error('unused')),
      all: async () => accounts.map((a) => ({ name: a.name, tiers: new Set(a.tiers) })) as never,
      mailboxFor: async (name?: string) => {
        w.opened.push(name ?? '');
        return mailboxOf(name ?? '');
      },
    },
    policy: {
      effective: async (account) => effectivePolicy(policy, account),
      gateFor: async (account) => ({ account, rules: effectivePolicy(policy, account).rules }) as Gate,
      movesToday: async () => 0,
    },
  };
  return w;
}

const RULES = { senderRules: { archive: ['rules.example'] } };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('startRuleSweeps', () => {
  it('sweeps at start, then every sweepRulesEveryMinutes, until stopped', async () => {
    const w = world([{ name: 'work', tiers: ['read', 'manage'] }], {
      default: { ...RULES, sweepRulesEveryMinutes: 3 },
    });
    const s = startRuleSweeps(w.runtime);
    await vi.advanceTimersByTimeAsync(0);
    expect(w.searches).toEqual(['work: in:inbox from:(rules.example)']);
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    expect(w.searches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(w.searches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    expect(w.searches).toHaveLength(3);
    await s.stop();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(w.searches).toHaveLength(3);
  });

  it('leaves alone accounts without the manage tier, without rules, or with sweeps off (0), and opens no mailbox for them', async () => {
    const w = world(
      [
        { name: 'readonly', tiers: ['read'] },
        { name: 'norules', tiers: ['read', 'manage'] },
        { name: 'off', tiers: ['read', 'manage'] },
        { name: 'on', tiers: ['read', 'manage'] },
      ],
      {
        default: RULES,
        accounts: { norules: { senderRules: { archive: [] } }, off: { sweepRulesEveryMinutes: 0 } },
      },
    );
    const s = startRuleSweeps(w.runtime);
    await vi.advanceTimersByTimeAsync(16 * 60_000);
    expect(new Set(w.opened)).toEqual(new Set(['on']));
    // At start and after the default 15 minutes.
    expect(w.searches).toEqual(['on: in:inbox from:(rules.example)', 'on: in:inbox from:(rules.example)']);
    await s.stop();
  });

  it('a failed sweep is logged and the next due one runs; a policy edit takes effect without a restart', async () => {
    const w = world([{ name: 'work', tiers: ['read', 'manage'] }], {
      default: { ...RULES, sweepRulesEveryMinutes: 1 },
    });
    w.failSearches(true);
    const s = startRuleSweeps(w.runtime);
    await vi.advanceTimersByTimeAsync(0);
    expect(w.warnings).toEqual([expect.stringMatching(/sender rules: sweep failed .*network_error: down/)]);
    w.failSearches(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(w.searches).toHaveLength(1);
    w.setPolicy({ default: { ...RULES, sweepRulesEveryMinutes: 0 } });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(w.searches).toHaveLength(1);
    await s.stop();
  });
});
