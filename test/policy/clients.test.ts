import { describe, expect, it } from 'vitest';
import { clientForToken, clientTiersOn, parseClients, tokenHash } from '../../src/policy/clients.js';
import type { Tier } from '../../src/policy/tiers.js';

/* clients.json as the server reads it: every mistake refused with the field at fault. */

const HASH = tokenHash('one-token');
const good = { name: 'ci', tokenSha256: HASH, accounts: ['work'], tiers: ['read', 'manage'] };
const file = (clients: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ clients, ...extra });

function refusal(text: string): string {
  try {
    parseClients(text, '/cfg/clients.json');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('parseClients', () => {
  it('reads a valid file, read always among the tiers, in the tier order', () => {
    const [c] = parseClients(file([{ ...good, tiers: ['drafts'], added: '2026-12-01T00:00:00Z' }]), 'p');
    expect(c).toEqual({
      name: 'ci',
      tokenSha256: HASH,
      accounts: ['work'],
      tiers: ['read', 'drafts'],
      added: '2026-12-01T00:00:00Z',
    });
  });

  it.each([
    ['not JSON', '{', 'the file is not valid JSON'],
    [
      'a top-level field it does not know',
      file([good], { extra: 1 }),
      'extra is not a field of clients.json',
    ],
    ['no list', '{"clients": {}}', 'clients must be a list'],
    [
      'a field a client does not have',
      file([{ ...good, token: 'x' }]),
      'clients[0].token is not a field of a client',
    ],
    ['a bad name', file([{ ...good, name: 'Bad Name' }]), 'clients[0].name "Bad Name"'],
    [
      'a token where the hash goes',
      file([{ ...good, tokenSha256: 'one-token' }]),
      'clients[0].tokenSha256 must be the SHA-256',
    ],
    ['no accounts', file([{ ...good, accounts: [] }]), 'clients[0].accounts must be a list of one or more'],
    [
      'an account twice',
      file([{ ...good, accounts: ['work', 'work'] }]),
      'clients[0].accounts[1] names "work" twice',
    ],
    [
      'the accounts tier',
      file([{ ...good, tiers: ['read', 'accounts'] }]),
      'clients[0].tiers[1] is "accounts"; allowed: read, manage, filters, drafts',
    ],
    [
      'no tiers',
      file([{ name: 'ci', tokenSha256: HASH, accounts: ['work'] }]),
      'clients[0].tiers must be a list',
    ],
    ['a bad time', file([{ ...good, added: 'soon' }]), 'clients[0].added must be an ISO 8601 time'],
    [
      'two clients with one name',
      file([good, { ...good, tokenSha256: tokenHash('other') }]),
      `clients[1].name "ci" is also clients[0]'s name`,
    ],
    [
      'two clients with one token',
      file([good, { ...good, name: 'cd' }]),
      `clients[1].tokenSha256 is also clients[0]'s`,
    ],
  ])('refuses %s, naming the field', (_, text, says) => {
    const message = refusal(text);
    expect(message).toContain('/cfg/clients.json: ');
    expect(message).toContain(says);
  });
});

describe('tokens and tiers', () => {
  const list = [
    { name: 'a', tokenSha256: tokenHash('token-a') },
    { name: 'b', tokenSha256: tokenHash('token-b') },
  ];
  it('finds the client a token belongs to, and none for any other string', () => {
    expect(clientForToken(list, 'token-b')?.name).toBe('b');
    expect(clientForToken(list, 'token-a')?.name).toBe('a');
    for (const other of ['', 'token-', 'token-bb', tokenHash('token-a')])
      expect(clientForToken(list, other)).toBeUndefined();
  });

  it('a client never gets a tier its account does not allow, nor one it was not given', () => {
    const account = new Set<Tier>(['read', 'manage']);
    expect([...clientTiersOn({ tiers: ['read', 'manage', 'filters'] }, account)]).toEqual(['read', 'manage']);
    expect([...clientTiersOn({ tiers: ['read'] }, account)]).toEqual(['read']);
  });
});
