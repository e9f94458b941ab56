import { ManualClock } from '../../../src/mail/clock.js';
import { MailError } from '../../../src/mail/errors.js';
import type { Tier } from '../../../src/policy/tiers.js';
import { GmailClient } from '../../../src/providers/gmail/client.js';
import type { GmailClientOptions } from '../../../src/providers/gmail/client.js';
import type { Transport } from '../../../src/providers/gmail/transport.js';

export const TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CREDENTIALS = { clientId: 'client-1', clientSecret: 'secret-1', refreshToken: 'refresh-1' };

export interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export type Handler = (req: Sent, n: { gmail: number; token: number }) => Response | Promise<Response>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const init = { status, headers: { 'content-type': 'application/json', ...headers } };
  return status === 204 ? new Response(null, init) : new Response(JSON.stringify(body), init);
}

export function tokenOk(token = 'tok-1', expiresIn = 3599): Response {
  return json(200, { access_token: token, expires_in: expiresIn, token_type: 'Bearer' });
}

export function googleError(
  code: number,
  reason: string,
  message = 'error',
  headers: Record<string, string> = {},
): Response {
  return json(
    code,
    { error: { code, message, errors: [{ message, domain: 'global', reason }], status: 'X' } },
    headers,
  );
}

/** A transport that records every request it is handed; by default tokens and `{}` succeed. */
export function recordingTransport(handler?: Handler): {
  transport: Transport;
  sent: Sent[];
  gmail: () => Sent[];
} {
  const sent: Sent[] = [];
  const counts = { gmail: 0, token: 0 };
  const transport: Transport = async (url, init) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const req: Sent = {
      url,
      method: init.method ?? 'GET',
      headers,
      body: typeof init.body === 'string' ? init.body : undefined,
    };
    sent.push(req);
    init.signal?.throwIfAborted();
    if (url === TOKEN_URL) counts.token += 1;
    else counts.gmail += 1;
    if (handler !== undefined) return handler(req, { ...counts });
    return url === TOKEN_URL ? tokenOk() : json(200, {});
  };
  return { transport, sent, gmail: () => sent.filter((s) => s.url !== TOKEN_URL) };
}

/** A manual clock and a sleep that advances it instantly, recording each wait. */
export function fakeTime(start = Date.UTC(2026, 10, 30, 12)): {
  clock: ManualClock;
  sleep: (ms: number) => Promise<void>;
  slept: number[];
} {
  const clock = new ManualClock(start);
  const slept: number[] = [];
  return {
    clock,
    slept,
    sleep: (ms) => {
      slept.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    },
  };
}

export function makeClient(
  tiers: Iterable<Tier>,
  transport: Transport,
  extra: Partial<GmailClientOptions> = {},
): GmailClient {
  const time = fakeTime();
  return new GmailClient({
    credentials: CREDENTIALS,
    tiers: new Set(tiers),
    transport,
    clock: time.clock,
    sleep: time.sleep,
    random: () => 0.5,
    ...extra,
  });
}

/** The MailError code of a rejected promise (fails the test when it resolves). */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `not a MailError: ${String(e)}`;
  }
  throw new Error('expected a rejection');
}

/** The MailError a promise rejects with (fails the test on success or on any other error). */
export async function rejection(p: Promise<unknown>): Promise<MailError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MailError) return e;
    throw e;
  }
  throw new Error('expected a MailError');
}
