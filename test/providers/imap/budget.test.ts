import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * A call stopped by MAILWARDEN_CALL_BUDGET_MS on a slow server (the Bridge profile behind a
 * proxy holding every command 150 ms): it answers deadline_exceeded naming the setting, never
 * network_error, and the connection it was using stays logged in for the next call — on Bridge a
 * new login costs half a dozen commands of a second each.
 */
describe('the call budget on a slow IMAP server', () => {
  let b: Backend;

  beforeAll(async () => {
    b = await startBackend('bridge', {
      delayMs: 150,
      tiers: ['read'],
      env: { MAILWARDEN_TOOLS: 'read', MAILWARDEN_CALL_BUDGET_MS: '3000' },
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('answers deadline_exceeded and keeps the connection for the next call', async () => {
    const proxy = b.imap?.proxy;
    expect(proxy).toBeDefined();
    // Warm: logged in, the folder list known.
    const warm = await b.call('list_new_mail', { limit: 1 });
    expect(warm.isError, warm.text).toBe(false);
    // The profile's front end records every command with the connection it came on.
    const connections = () => new Set((proxy?.commands() ?? []).map((c) => c.connection)).size;
    const logins = connections();
    // A cold get_profile checks every folder: about 30 commands, far more than 3 s of 150 ms ones.
    const r = await b.call('get_profile', {});
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('deadline_exceeded');
    expect(r.error?.retryable).toBe(true);
    expect(r.text).toContain('MAILWARDEN_CALL_BUDGET_MS');
    const next = await b.call('list_new_mail', { limit: 1 });
    expect(next.isError, next.text).toBe(false);
    expect(connections()).toBe(logins);
  });
});
