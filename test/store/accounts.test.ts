import { mkdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  accountsPath,
  addAccount,
  findAccount,
  readAccounts,
  removeAccount,
  setDefaultAccount,
} from '../../src/store/accounts.js';
import type { Env } from '../../src/store/config.js';
import { tempDir } from '../helpers/temp.js';

function env(): Env {
  return { MAILWARDEN_CONFIG_DIR: tempDir('mailwarden-store-') };
}

function token(e: Env, name: string): string {
  const dir = join(e['MAILWARDEN_CONFIG_DIR'] as string, 'tokens');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ refresh_token: `rt-${name}` }));
  return path;
}

const NOW = new Date('2026-11-30T10:00:00.000Z');

describe('accounts.json', () => {
  it('is empty when the file does not exist', async () => {
    expect(await readAccounts(env())).toEqual([]);
  });

  it('the first account added is the default; the file is 0600 and holds no secret', async () => {
    const e = env();
    token(e, 'work');
    const a = await addAccount(e, { name: 'Work', alias: 'W', address: 'Pat@Work.example' }, NOW);
    expect(a).toEqual({
      name: 'work',
      alias: 'w',
      address: 'Pat@Work.example',
      provider: 'gmail',
      tiers: ['read', 'manage'],
      default: true,
      added: NOW.toISOString(),
    });
    expect(statSync(accountsPath(e)).mode & 0o777).toBe(0o600);
    expect(readFileSync(accountsPath(e), 'utf8')).not.toContain('rt-work');
    expect(await readAccounts(e)).toEqual([a]);
  });

  it('later accounts are not the default unless asked; tiers always include read', async () => {
    const e = env();
    await addAccount(e, { name: 'work' }, NOW);
    const home = await addAccount(e, { name: 'home', tiers: 'manage' }, NOW);
    expect(home).toMatchObject({ default: false, tiers: ['read', 'manage'] });
    await addAccount(e, { name: 'third', tiers: ['read'], makeDefault: true }, NOW);
    expect((await readAccounts(e)).map((a) => [a.name, a.default])).toEqual([
      ['work', false],
      ['home', false],
      ['third', true],
    ]);
  });

  it('refuses duplicates, clashing aliases, "all", bad names and unknown tiers, naming the field', async () => {
    const e = env();
    await addAccount(e, { name: 'work', alias: 'w' }, NOW);
    await expect(addAccount(e, { name: 'work' })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'name',
    });
    await expect(addAccount(e, { name: 'home', alias: 'w' })).rejects.toMatchObject({ field: 'alias' });
    await expect(addAccount(e, { name: 'w' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(addAccount(e, { name: 'all' })).rejects.toMatchObject({ field: 'name' });
    await expect(addAccount(e, { name: 'home', alias: 'ALL' })).rejects.toMatchObject({ field: 'alias' });
    await expect(addAccount(e, { name: '../etc' })).rejects.toMatchObject({ field: 'name' });
    await expect(addAccount(e, { name: 'home', tiers: ['read', 'root'] })).rejects.toMatchObject({
      field: 'tiers',
    });
    await expect(addAccount(e, { name: 'home', tiers: ['accounts'] })).rejects.toMatchObject({
      field: 'tiers',
    });
    expect((await readAccounts(e)).map((a) => a.name)).toEqual(['work']);
  });

  it('finds by name, alias or address, case-insensitively', async () => {
    const e = env();
    await addAccount(e, { name: 'work', alias: 'w', address: 'Pat@Work.example' }, NOW);
    const list = await readAccounts(e);
    for (const ref of ['work', 'WORK', 'w', 'pat@work.example', ' Pat@WORK.example ']) {
      expect(findAccount(list, ref)?.name).toBe('work');
    }
    expect(findAccount(list, 'other')).toBeUndefined();
  });

  it('setDefaultAccount moves the default', async () => {
    const e = env();
    await addAccount(e, { name: 'work' }, NOW);
    await addAccount(e, { name: 'home', alias: 'h' }, NOW);
    await setDefaultAccount(e, 'h');
    expect((await readAccounts(e)).find((a) => a.default)?.name).toBe('home');
    await expect(setDefaultAccount(e, 'nope')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('removeAccount deletes the entry and the token file and promotes a new default', async () => {
    const e = env();
    const path = token(e, 'work');
    await addAccount(e, { name: 'work' }, NOW);
    await addAccount(e, { name: 'home' }, NOW);
    const out = await removeAccount(e, 'work');
    expect(out).toMatchObject({
      removed: { name: 'work' },
      tokenDeleted: true,
      revoked: false,
      newDefault: 'home',
    });
    expect(out.note).toContain('myaccount.google.com/permissions');
    expect(existsSync(path)).toBe(false);
    expect((await readAccounts(e)).map((a) => [a.name, a.default])).toEqual([['home', true]]);
  });

  it('removes a token without an entry (the implicit account); refuses a name with neither', async () => {
    const e = env();
    const path = token(e, 'default');
    expect(await removeAccount(e, 'default')).toMatchObject({ tokenDeleted: true });
    expect(existsSync(path)).toBe(false);
    await expect(removeAccount(e, 'default')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a hand-edited file is normalised to one default and checked entry by entry', async () => {
    const e = env();
    const write = (v: unknown) => writeFileSync(accountsPath(e), JSON.stringify(v));
    mkdirSync(e['MAILWARDEN_CONFIG_DIR'] as string, { recursive: true });
    write({ accounts: [{ name: 'A' }, { name: 'b', default: true }, { name: 'c', default: true }] });
    expect((await readAccounts(e)).map((a) => [a.name, a.default, a.tiers])).toEqual([
      ['a', false, ['read']],
      ['b', true, ['read']],
      ['c', false, ['read']],
    ]);
    write({ accounts: [{ name: 'a' }, { name: 'A' }] });
    await expect(readAccounts(e)).rejects.toThrow(/listed twice/);
    write({ accounts: [{ name: 'a', provider: 'imap' }] });
    await expect(readAccounts(e)).rejects.toThrow(/not supported/);
    write([]);
    await expect(readAccounts(e)).rejects.toMatchObject({ code: 'invalid_input', field: 'accounts.json' });
    writeFileSync(accountsPath(e), '{nope');
    await expect(readAccounts(e)).rejects.toThrow(/not valid JSON/);
  });
});
