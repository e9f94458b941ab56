import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, BOB, HOUR, startHarness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.sandbox.close();
});

async function tokenRequest(form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.sandbox.url}/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function refreshForm(refreshToken: string): Record<string, string> {
  return {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: h.sandbox.oauthClient.clientId,
    client_secret: h.sandbox.oauthClient.clientSecret,
  };
}

describe('token endpoint', () => {
  it('exchanges a refresh token for a bearer access token with the granted scopes', async () => {
    const { status, json } = await tokenRequest(refreshForm(h.sandbox.refreshTokenFor(ALICE)));
    expect(status).toBe(200);
    expect(json).toMatchObject({ expires_in: 3599, token_type: 'Bearer' });
    expect(typeof json['access_token']).toBe('string');
    expect(String(json['scope']).split(' ').sort()).toEqual([
      'https://www.googleapis.com/auth/gmail.compose',
      'https://www.googleapis.com/auth/gmail.modify',
      'https://www.googleapis.com/auth/gmail.settings.basic',
    ]);
    const profile = await h.gmail('profile', { token: String(json['access_token']) });
    expect(profile.status).toBe(200);
    expect(profile.json.emailAddress).toBe(ALICE);
  });

  it('accepts client credentials as HTTP Basic', async () => {
    const { clientId, clientSecret } = h.sandbox.oauthClient;
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
    const { status } = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: h.sandbox.refreshTokenFor(ALICE) },
      { Authorization: `Basic ${basic}` },
    );
    expect(status).toBe(200);
  });

  it('refuses an unknown client with 401 invalid_client', async () => {
    const { status, json } = await tokenRequest({
      ...refreshForm(h.sandbox.refreshTokenFor(ALICE)),
      client_id: 'someone-else.apps.googleusercontent.com',
    });
    expect(status).toBe(401);
    expect(json['error']).toBe('invalid_client');
    const wrongSecret = await tokenRequest({
      ...refreshForm(h.sandbox.refreshTokenFor(ALICE)),
      client_secret: 'x',
    });
    expect(wrongSecret.status).toBe(401);
  });

  it('answers invalid_grant for an unknown refresh token and for a revoked one', async () => {
    const unknown = await tokenRequest(refreshForm('1//not-a-token'));
    expect(unknown).toEqual({
      status: 400,
      json: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
    });
    const refresh = h.sandbox.issueRefreshToken(ALICE, ['gmail.readonly']);
    const first = await tokenRequest(refreshForm(refresh));
    expect(first.status).toBe(200);
    h.sandbox.revokeRefreshToken(refresh);
    const again = await tokenRequest(refreshForm(refresh));
    expect(again.status).toBe(400);
    expect(again.json['error']).toBe('invalid_grant');
    // Access tokens minted from a revoked refresh token stop working too.
    const call = await h.gmail('profile', { token: String(first.json['access_token']) });
    expect(call.status).toBe(401);
  });

  it('revokes through the /revoke endpoint as Google does', async () => {
    const refresh = h.sandbox.issueRefreshToken(ALICE, ['gmail.readonly']);
    const revoke = await fetch(`${h.sandbox.url}/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refresh }),
    });
    expect(revoke.status).toBe(200);
    expect((await tokenRequest(refreshForm(refresh))).json['error']).toBe('invalid_grant');
  });

  it('names a missing parameter and an unsupported grant type', async () => {
    const missing = await tokenRequest({ ...refreshForm(''), refresh_token: '' });
    expect(missing.status).toBe(400);
    expect(missing.json['error']).toBe('invalid_request');
    const code = await tokenRequest({ ...refreshForm('x'), grant_type: 'password' });
    expect(code.status).toBe(400);
    expect(code.json['error']).toBe('unsupported_grant_type');
  });
});

describe('bearer authentication', () => {
  it('answers 401 UNAUTHENTICATED without a token, with a garbage token, and after expiry', async () => {
    const none = await fetch(`${h.sandbox.url}/gmail/v1/users/me/profile`);
    expect(none.status).toBe(401);
    const body = (await none.json()) as { error: { status: string; errors: Array<{ reason: string }> } };
    expect(body.error.status).toBe('UNAUTHENTICATED');
    expect(body.error.errors[0]?.reason).toBe('authError');

    expect((await h.gmail('profile', { token: 'ya29.forged' })).status).toBe(401);

    const token = await h.token();
    expect((await h.gmail('profile', { token })).status).toBe(200);
    h.clock.advance(HOUR);
    expect((await h.gmail('profile', { token })).status).toBe(401);
  });

  it('answers 403 insufficient scopes when the token does not cover the method', async () => {
    const readonly = await h.token(ALICE, ['gmail.readonly']);
    expect((await h.gmail('messages', { token: readonly })).status).toBe(200);
    expect((await h.gmail('settings/filters', { token: readonly })).status).toBe(200);
    const write = await h.gmail('messages/batchModify', {
      token: readonly,
      body: { ids: ['x'], addLabelIds: ['STARRED'] },
    });
    expect(write.status).toBe(403);
    expect(write.json.error).toMatchObject({
      code: 403,
      message: 'Request had insufficient authentication scopes.',
      status: 'PERMISSION_DENIED',
    });
    expect(write.json.error.errors[0].reason).toBe('insufficientPermissions');

    const modify = await h.token(ALICE, ['https://www.googleapis.com/auth/gmail.modify']);
    const filter = await h.gmail('settings/filters', {
      token: modify,
      body: { criteria: { from: 'x@y.example' }, action: { addLabelIds: ['STARRED'] } },
    });
    expect(filter.status).toBe(403);

    const settingsOnly = await h.token(ALICE, ['gmail.settings.basic']);
    expect((await h.gmail('threads', { token: settingsOnly })).status).toBe(403);
  });

  it("refuses another user's mailbox but accepts the token owner's address as userId", async () => {
    const token = await h.token(ALICE);
    const own = await fetch(`${h.sandbox.url}/gmail/v1/users/${encodeURIComponent(ALICE)}/profile`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(own.status).toBe(200);
    const other = await fetch(`${h.sandbox.url}/gmail/v1/users/${encodeURIComponent(BOB)}/profile`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(other.status).toBe(403);
  });
});
