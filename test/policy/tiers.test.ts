import { describe, expect, it } from 'vitest';
import { scopesForTiers, tiersFromEnv } from '../../src/policy/tiers.js';

describe('tiersFromEnv', () => {
  it('defaults to read and manage', () => {
    expect([...tiersFromEnv({})].sort()).toEqual(['manage', 'read']);
  });
  it('MAILWARDEN_READONLY=1 means read only, whatever MAILWARDEN_TOOLS says', () => {
    expect([...tiersFromEnv({ MAILWARDEN_READONLY: '1', MAILWARDEN_TOOLS: 'read,manage,filters' })]).toEqual([
      'read',
    ]);
  });
  it('reads a comma list and always includes read', () => {
    expect([...tiersFromEnv({ MAILWARDEN_TOOLS: 'filters' })].sort()).toEqual(['filters', 'read']);
  });
  it('refuses an unknown tier naming the variable and what is allowed', () => {
    expect(() => tiersFromEnv({ MAILWARDEN_TOOLS: 'read,sendmail' })).toThrowError(
      /MAILWARDEN_TOOLS: unknown tier "sendmail"; allowed: read, manage, filters, drafts, accounts/,
    );
  });
});

describe('scopesForTiers', () => {
  const G = 'https://www.googleapis.com/auth/';
  it('read alone asks for gmail.readonly only', () => {
    expect(scopesForTiers(new Set(['read']))).toEqual([`${G}gmail.readonly`]);
  });
  it('manage replaces readonly with modify; filters adds settings.basic', () => {
    expect(scopesForTiers(new Set(['read', 'manage', 'filters']))).toEqual([
      `${G}gmail.modify`,
      `${G}gmail.settings.basic`,
    ]);
  });
});
