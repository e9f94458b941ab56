import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import type { CommandSpec } from '../../src/cli/commands.js';
import { envFlag } from '../../src/store/config.js';

/*
 * Every command refuses what it does not understand (src/cli/commands.ts): the built CLI is run
 * for every command in the table with a misspelled option and, where it has one, with a value
 * its option does not allow. Each must exit 2 with the option named on stderr, and leave the
 * config dir as it was (nothing saved, nothing started).
 */

const MAIN = resolve('dist/bundle/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mailwarden-commands-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    input: '',
    timeout: 30_000,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, MAILWARDEN_CONFIG_DIR: dir, ...env },
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

/** The words and the positional arguments a command needs, so only the option is wrong. */
function invocation(spec: CommandSpec): string[] {
  const required = spec.args?.slice(0, spec.required ?? spec.args.length) ?? [];
  return [...spec.words, ...required.map((a) => (a === 'TOOL' ? 'get_profile' : 'someone'))];
}

/** A value the option refuses, for each option that checks its value. */
function badValue(spec: CommandSpec): { option: string; value: string } | undefined {
  for (const [k, o] of Object.entries(spec.options)) {
    if (o.type !== 'string') continue;
    if (o.choices !== undefined) return { option: k, value: 'bogus' };
    if (o.check !== undefined) return { option: k, value: 'not-a-value' };
  }
  return undefined;
}

describe('every command with a misspelled option', () => {
  it.each(COMMANDS.map((c) => [c.words.join(' '), c] as const))('%s exits 2 and names it', (_, spec) => {
    const r = run([...invocation(spec), '--acount-typo', 'x']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("'--acount-typo'");
    expect(r.stderr).toContain('Usage:');
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('every command with a value its option does not allow', () => {
  const withValues = COMMANDS.flatMap((c) => {
    const bad = badValue(c);
    return bad === undefined ? [] : [[c.words.join(' '), c, bad] as const];
  });
  it('the table has such options to test', () => expect(withValues.length).toBeGreaterThanOrEqual(6));
  it.each(withValues)('%s exits 2 and says what is allowed', (_, spec, bad) => {
    const extra = spec.needs?.[bad.option];
    const r = run([...invocation(spec), ...(extra ? [`--${extra}`] : []), `--${bad.option}`, bad.value]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--${bad.option} must be`);
    expect(r.stderr).toContain(bad.value);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('the cases people hit', () => {
  it('a read-only IMAP account with a typo is not saved with the manage tier', () => {
    const r = run(
      'accounts add bob --imap --host 127.0.0.1 --user u --tiers read --read-only --defualt'.split(' '),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'--read-only'");
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    [['accounts', '--bogus'], "'--bogus'"],
    [['policy', 'show', '--bogus'], "'--bogus'"],
    [['demo', '--imap', '--profile', 'bogus'], '--profile must be one of bridge, full'],
    [['demo', '--profile', 'full'], '--profile needs --imap'],
    [
      ['check-new-mail', '--topic-file', 'F', '--since-topic', 'x'],
      '--topic-file and --since-topic exclude each other',
    ],
    [['undo', '--call', 'a', '--since', '2026-01-01'], '--call and --since exclude each other'],
    [['accounts', 'add', 'bob', '--tls', '--imap', '--starttls'], '--tls and --starttls exclude each other'],
    [['accounts', 'add', 'bob', '--host', 'h'], '--host needs --imap'],
    [['accounts', 'frobnicate'], 'unknown command "accounts frobnicate"'],
    [['call'], 'TOOL is required'],
    [['http', '--port', '70000'], '--port must be a port number from 0 to 65535'],
  ])('%j', (args, said) => {
    const r = run(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(said);
  });

  it('an --account that names no account exits 2, with a registry and without one', () => {
    const none = run(['policy', 'show', '--account', 'nobody']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no account "nobody"');
    const other = mkdtempSync(join(tmpdir(), 'mailwarden-commands-reg-'));
    try {
      writeFileSync(
        join(other, 'accounts.json'),
        JSON.stringify({
          version: 1,
          accounts: [
            {
              name: 'work',
              provider: 'gmail',
              tiers: ['read'],
              default: true,
              added: '2026-01-01T00:00:00Z',
            },
          ],
        }),
      );
      for (const cmd of [['policy', 'show'], ['log'], ['sweep'], ['check']]) {
        const r = run([...cmd, '--account', 'wrok'], { MAILWARDEN_CONFIG_DIR: other });
        expect(r.code, `${cmd.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain('no account "wrok"; registered: work');
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('--help lists every command of the table, and a command its own options', () => {
    const all = run(['--help']);
    expect(all.code).toBe(0);
    for (const c of COMMANDS) expect(all.stdout).toContain(`mailwarden ${c.words.join(' ')}`);
    const one = run(['accounts', 'add', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('--pin-from-server');
  });
});

describe('switches in the environment', () => {
  it('take 1/true/yes/on and 0/false/no/off, and refuse anything else by name', () => {
    for (const v of ['1', 'true', 'TRUE', 'yes', 'on']) expect(envFlag({ X: v }, 'X')).toBe(true);
    for (const v of [undefined, '', '0', 'false', 'no', 'off']) expect(envFlag({ X: v }, 'X')).toBe(false);
    expect(() => envFlag({ MAILWARDEN_AUTO_SWEEP: 'maybe' }, 'MAILWARDEN_AUTO_SWEEP')).toThrow(
      /MAILWARDEN_AUTO_SWEEP: "maybe" is not a switch/,
    );
  });

  it('a MAILWARDEN_AUTO_SWEEP value it cannot read stops the server', () => {
    const r = run(['serve', '--demo'], { MAILWARDEN_AUTO_SWEEP: 'maybe' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('MAILWARDEN_AUTO_SWEEP: "maybe" is not a switch');
  });
});
