import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { OTHER_ADDRESS, startSandbox } from '../store/oauth-helpers.js';

/** The sandbox's authorization endpoint and authorization-code + PKCE grant, spoken to directly. */

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';
const SETTINGS = 'https://www.googleapis.com/auth/gmail.settings.basic';
const REDIRECT = 'http://127.0.0.1:9/callback';

let sb: Sandbox;
beforeEach(async () => {
  sb = await startSandbox();
});
afterEach(async () => {
  await sb.close();
});

interface Flow {
  verifier: string;
  params: Record<string, string>;
}

function flow(extra: Record<string, string> = {}): Flow {
  const verifier = randomBytes(32).toString('base64url');
  return {
    verifier,
    params: {
      client_id: sb.oauthClient.clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: `${MODIFY} ${SETTINGS}`,
      state: 'st-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      access_type: 'offline',
      prompt: 'consent',
      ...extra,
    },
  };
}

async function consentPage(params: Record<string, string>): Promise<{ status: number; html: string }> {
  const res = await fetch(`${sb.url}/o/oauth2/v2/auth?${new URLSearchParams(params).toString()}`, {
    redirect: 'manual',
  });
  return { status: res.status, html: await res.text() };
}

/** Shows the page, submits a decision, returns the redirect the browser would follow. */
async function decide(
  f: Flow,
  decision: 'approve' | 'deny',
  scopes?: string[],
  account = DEMO_ADDRESS,
): Promise<URL> {
  const { html } = await consentPage(f.params);
  const request = /name="request" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const form = new URLSearchParams({ request, decision, account });
  for (const s of scopes ?? (f.params['scope'] ?? '').split(' ')) form.append('scope', s);
  const res = await fetch(`${sb.url}/o/oauth2/v2/auth`, { method: 'POST', body: form, redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function exchange(form: Record<string, string>) {
  const res = await fetch(`${sb.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: sb.oauthClient.clientId,
      client_secret: sb.oauthClient.clientSecret,
      redirect_uri: REDIRECT,
      ...form,
    }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('consent page', () => {
  it('shows the client, the account choice, each scope, and Approve / Deny', async () => {
    const { status, html } = await consentPage(flow({ login_hint: OTHER_ADDRESS }).params);
    expect(status).toBe(200);
    expect(html).toContain(sb.oauthClient.clientId);
    expect(html).toContain(MODIFY);
    expect(html).toContain(SETTINGS);
    expect(html).toContain(`<option value="${OTHER_ADDRESS}" selected>`);
    expect(html).toMatch(/id="approve"[^>]*>Approve</);
    expect(html).toMatch(/id="deny"[^>]*>Deny</);
  });

  it('never redirects for an unknown client or a non-loopback redirect_uri (RFC 6749 §4.1.2.1)', async () => {
    expect((await consentPage(flow({ client_id: 'nope' }).params)).status).toBe(401);
    const evil = await consentPage(flow({ redirect_uri: 'https://evil.example/cb' }).params);
    expect(evil.status).toBe(400);
    expect(evil.html).toContain('redirect_uri_mismatch');
  });

  it('sends other request errors back to the client with the state', async () => {
    const res = await fetch(
      `${sb.url}/o/oauth2/v2/auth?${new URLSearchParams(flow({ scope: 'https://example.com/x' }).params).toString()}`,
      { redirect: 'manual' },
    );
    const to = new URL(res.headers.get('location') ?? '');
    expect(to.searchParams.get('error')).toBe('invalid_scope');
    expect(to.searchParams.get('state')).toBe('st-1');
  });

  it('Deny redirects with error=access_denied and the state', async () => {
    const to = await decide(flow(), 'deny');
    expect(`${to.origin}${to.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(to.searchParams)).toEqual({ error: 'access_denied', state: 'st-1' });
  });
});

describe('authorization-code grant with PKCE', () => {
  it('Approve gives a single-use code that the right verifier turns into tokens for that user', async () => {
    const f = flow();
    const to = await decide(f, 'approve');
    expect(to.searchParams.get('state')).toBe('st-1');
    const code = to.searchParams.get('code') ?? '';
    const ok = await exchange({ code, code_verifier: f.verifier });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    expect(String(ok.json['scope']).split(' ').sort()).toEqual([MODIFY, SETTINGS]);
    const refresh = String(ok.json['refresh_token']);
    const profile = await fetch(`${sb.url}/gmail/v1/users/me/profile`, {
      headers: { authorization: `Bearer ${String(ok.json['access_token'])}` },
    });
    expect(((await profile.json()) as { emailAddress: string }).emailAddress).toBe(DEMO_ADDRESS);

    // Replaying the code fails, and revokes what the first exchange issued (RFC 6749 §4.1.2).
    const again = await exchange({ code, code_verifier: f.verifier });
    expect(again.json['error']).toBe('invalid_grant');
    const refreshed = await fetch(`${sb.url}/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh, ...cred() }),
    });
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('refuses a wrong or missing code_verifier, a different redirect_uri, and another client', async () => {
    const f = flow();
    const code = (await decide(f, 'approve')).searchParams.get('code') ?? '';
    expect((await exchange({ code, code_verifier: 'x'.repeat(43) })).json).toMatchObject({
      error: 'invalid_grant',
      error_description: 'Invalid code verifier.',
    });
    expect((await exchange({ code })).json['error_description']).toBe('Missing code verifier.');
    expect(
      (await exchange({ code, code_verifier: f.verifier, redirect_uri: 'http://127.0.0.1:10/callback' }))
        .json['error'],
    ).toBe('redirect_uri_mismatch');
    expect((await exchange({ code, code_verifier: f.verifier, client_secret: 'wrong' })).status).toBe(401);
    // None of those used the code up.
    expect((await exchange({ code, code_verifier: f.verifier })).status).toBe(200);
  });

  it('grants only the scopes left ticked (granular consent)', async () => {
    const f = flow();
    const to = await decide(f, 'approve', [MODIFY]);
    expect(to.searchParams.get('scope')).toBe(MODIFY);
    const ok = await exchange({ code: to.searchParams.get('code') ?? '', code_verifier: f.verifier });
    expect(ok.json['scope']).toBe(MODIFY);
  });

  it('issues a refresh token on the first offline consent, later only with prompt=consent (as Google does)', async () => {
    const first = flow({ prompt: '' });
    const c1 = (await decide(first, 'approve')).searchParams.get('code') ?? '';
    expect((await exchange({ code: c1, code_verifier: first.verifier })).json['refresh_token']).toBeTypeOf(
      'string',
    );
    const second = flow({ prompt: '' });
    const c2 = (await decide(second, 'approve')).searchParams.get('code') ?? '';
    expect(
      (await exchange({ code: c2, code_verifier: second.verifier })).json['refresh_token'],
    ).toBeUndefined();
    const forced = flow();
    const c3 = (await decide(forced, 'approve')).searchParams.get('code') ?? '';
    expect((await exchange({ code: c3, code_verifier: forced.verifier })).json['refresh_token']).toBeTypeOf(
      'string',
    );
  });
});

function cred(): Record<string, string> {
  return { client_id: sb.oauthClient.clientId, client_secret: sb.oauthClient.clientSecret };
}
