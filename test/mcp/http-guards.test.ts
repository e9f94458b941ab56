import { describe, expect, it } from 'vitest';
import { bearerMatches, clientAllowed, hostName, parseAllowedClients } from '../../src/mcp/http.js';

describe('MAILWARDEN_ALLOWED_CLIENTS matching', () => {
  it('matches CIDRs and bare addresses, unwrapping IPv4-mapped IPv6 peers', () => {
    const allowed = parseAllowedClients('10.0.0.0/8, 192.168.1.7, fd00::/8');
    expect(clientAllowed('10.2.3.4', allowed)).toBe(true);
    expect(clientAllowed('::ffff:10.2.3.4', allowed)).toBe(true);
    expect(clientAllowed('192.168.1.7', allowed)).toBe(true);
    expect(clientAllowed('192.168.1.8', allowed)).toBe(false);
    expect(clientAllowed('fd12::1', allowed)).toBe(true);
    expect(clientAllowed('127.0.0.1', allowed)).toBe(false);
    expect(clientAllowed(undefined, allowed)).toBe(false);
    expect(clientAllowed('not an address', allowed)).toBe(false);
  });

  it('reads an IPv4-mapped range as the IPv4 range it means', () => {
    const allowed = parseAllowedClients('::ffff:127.0.0.0/104');
    expect(clientAllowed('127.0.0.1', allowed)).toBe(true);
    expect(clientAllowed('::ffff:127.9.9.9', allowed)).toBe(true);
    expect(clientAllowed('10.0.0.1', allowed)).toBe(false);
  });

  it('refuses a bad entry by name', () => {
    expect(() => parseAllowedClients('10.0.0.0/8, example.com')).toThrow(/"example.com"/);
    expect(() => parseAllowedClients('10.0.0.0/40')).toThrow(/10.0.0.0\/40/);
  });
});

describe('bearer comparison', () => {
  it('accepts exactly the token, case-insensitive scheme only', () => {
    expect(bearerMatches('Bearer s3cret', 's3cret')).toBe(true);
    expect(bearerMatches('bearer s3cret', 's3cret')).toBe(true);
    expect(bearerMatches('Bearer s3cre', 's3cret')).toBe(false);
    expect(bearerMatches('Bearer S3CRET', 's3cret')).toBe(false);
    expect(bearerMatches('s3cret', 's3cret')).toBe(false);
    expect(bearerMatches(undefined, 's3cret')).toBe(false);
    expect(bearerMatches(['Bearer s3cret'], 's3cret')).toBe(false);
  });
});

describe('Host header parsing', () => {
  it('reads a name, an IPv4 literal or a bracketed IPv6 literal, with or without a port', () => {
    expect(hostName('localhost:8787')).toBe('localhost');
    expect(hostName('LocalHost')).toBe('localhost');
    expect(hostName('127.0.0.2:9000')).toBe('127.0.0.2');
    expect(hostName('[::1]:8787')).toBe('[::1]');
    expect(hostName('mail.example.com')).toBe('mail.example.com');
  });

  it('refuses what is not a Host: userinfo, paths, spaces, empty, several values', () => {
    for (const bad of [
      'evil.example@localhost',
      'localhost/x',
      'a b',
      '',
      'localhost:',
      'localhost:123456',
      '[::1',
    ])
      expect(hostName(bad), bad).toBeUndefined();
    expect(hostName(undefined)).toBeUndefined();
    expect(hostName(['localhost'])).toBeUndefined();
  });
});
