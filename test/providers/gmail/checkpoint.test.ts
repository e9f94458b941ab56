import { describe, expect, it } from 'vitest';
import type { Tier } from '../../../src/policy/tiers.js';
import { scopesForTiers } from '../../../src/policy/tiers.js';
import { denyReason } from '../../../src/providers/gmail/denylist.js';
import { checkEgress } from '../../../src/providers/gmail/egress.js';
import { ENDPOINTS } from '../../../src/providers/gmail/endpoints.js';
import { extractGmailApi, fillPath } from './api-surface.js';

const API = extractGmailApi();
const segments = (path: string): string[] => path.split('/').filter((s) => s !== '');

describe('the denylist on its own', () => {
  // Defence in depth: these must be denied even if someone adds them to the allowlist.
  const mustDeny = API.filter((m) =>
    /^users\.(messages\.(send|import|insert|batchDelete|delete)|threads\.delete|drafts\.(?!create$)|settings\.(?!filters\.)|watch|stop)/.test(
      m.name,
    ),
  );

  it('covers send/import/insert/batchDelete/delete, drafts except create, settings except filters, watch/stop', () => {
    expect(mustDeny.length).toBeGreaterThanOrEqual(50);
    const missed = mustDeny.filter((m) => denyReason(m.httpMethod, segments(fillPath(m.path))) === undefined);
    expect(missed.map((m) => m.name)).toEqual([]);
  });

  it('leaves every endpoint mailwarden uses to the allowlist', () => {
    const hit = ENDPOINTS.filter(
      (e) => denyReason(e.method, segments(fillPath(e.pathPattern))) !== undefined,
    );
    expect(hit.map((e) => e.name)).toEqual([]);
  });
});

describe('the token endpoint passes the checkpoint too', () => {
  const read = new Set<Tier>(['read']);
  const url = 'https://oauth2.googleapis.com/token';

  it('allows a refresh and a sign-in code redemption, nothing else', () => {
    expect(
      checkEgress({ method: 'POST', url, body: 'grant_type=refresh_token&refresh_token=r' }, read).name,
    ).toBe('oauth.token');
    expect(
      checkEgress({ method: 'POST', url, body: 'grant_type=authorization_code&code=c' }, read).units,
    ).toBe(0);
    const refused = [
      { method: 'POST', url, body: 'grant_type=urn:ietf:params:oauth:grant-type:token-exchange' },
      { method: 'POST', url, body: 'grant_type=refresh_token&grant_type=password' },
      { method: 'POST', url },
      { method: 'GET', url },
      { method: 'POST', url: `${url}?access_type=offline`, body: 'grant_type=refresh_token' },
      {
        method: 'POST',
        url: 'https://oauth2.googleapis.com/revoke',
        body: 'token=t&grant_type=refresh_token',
      },
      { method: 'POST', url: 'https://oauth2.googleapis.com/revoke' },
      { method: 'GET', url: 'https://oauth2.googleapis.com/revoke?token=t' },
      { method: 'POST', url: 'https://oauth2.googleapis.com./token', body: 'grant_type=refresh_token' },
      { method: 'POST', url: 'https://accounts.google.com/o/oauth2/token', body: 'grant_type=refresh_token' },
      { method: 'POST', url: 'https://gmail.googleapis.com/token', body: 'grant_type=refresh_token' },
    ];
    for (const req of refused) {
      expect(() => checkEgress(req, read), JSON.stringify(req)).toThrow(/mailwarden refused/);
    }
  });

  it('allows revoking a refresh token (RFC 7009) with the token and nothing else', () => {
    const r = checkEgress(
      { method: 'POST', url: 'https://oauth2.googleapis.com/revoke', body: 'token=t' },
      read,
    );
    expect(r.name).toBe('oauth.revoke');
    expect(r.units).toBe(0);
  });
});

describe('the endpoint table', () => {
  it('gives each endpoint a scope that its tier requests, and the documented units', () => {
    for (const e of ENDPOINTS.filter((x) => !x.name.startsWith('oauth.'))) {
      expect(scopesForTiers(new Set<Tier>(['read', e.tier])), e.name).toContain(e.scope);
    }
    const units = Object.fromEntries(ENDPOINTS.map((e) => [e.name, e.units]));
    expect(units).toMatchObject({
      'users.getProfile': 1,
      'labels.list': 1,
      'labels.create': 5,
      'threads.get': 10,
      'messages.get': 5,
      'messages.batchModify': 50,
      'messages.attachments.get': 5,
      'history.list': 2,
      'filters.list': 1,
      'filters.create': 5,
      'drafts.create': 10,
      'oauth.token': 0,
    });
  });

  it('matches a real Gmail method for every Gmail endpoint', () => {
    for (const e of ENDPOINTS.filter((x) => !x.name.startsWith('oauth.'))) {
      const twin = API.find((m) => m.httpMethod === e.method && m.path === e.pathPattern);
      expect(twin, e.name).toBeDefined();
    }
  });
});

describe('refusal messages', () => {
  it('never echo query values or userinfo', () => {
    const all = new Set<Tier>(['read', 'manage', 'filters', 'drafts']);
    const urls = [
      'https://gmail.googleapis.com/gmail/v1/users/me/labels?access_token=ya29.SECRET',
      'https://me:SECRET@gmail.googleapis.com/gmail/v1/users/me/labels',
    ];
    for (const url of urls) {
      expect(() => checkEgress({ method: 'GET', url }, all)).toThrow(/mailwarden refused/);
      try {
        checkEgress({ method: 'GET', url }, all);
      } catch (e) {
        expect((e as Error).message).not.toContain('SECRET');
      }
    }
  });
});
