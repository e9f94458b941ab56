import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, limitsFromEnv } from '../../src/cli/limits.js';
import { MailError } from '../../src/mail/errors.js';

describe('waits from the environment', () => {
  it('defaults: 20 s per read, 30 s per write, one 20 s rate-limit wait, 120 s per call, 300 s IMAP recheck', () => {
    expect(limitsFromEnv({})).toEqual({
      readMs: 20_000,
      writeMs: 30_000,
      rateLimitMaxWaitMs: 20_000,
      callBudgetMs: 120_000,
      imapRecheckMs: 300_000,
    });
    expect(limitsFromEnv({})).toEqual(DEFAULT_LIMITS);
  });

  it('MAILWARDEN_IMAP_RECHECK_MS: 0 turns reuse off; out of range is refused by name', () => {
    expect(limitsFromEnv({ MAILWARDEN_IMAP_RECHECK_MS: '0' }).imapRecheckMs).toBe(0);
    expect(() => limitsFromEnv({ MAILWARDEN_IMAP_RECHECK_MS: '600001' })).toThrow(
      /MAILWARDEN_IMAP_RECHECK_MS/,
    );
  });

  it('MAILWARDEN_REQUEST_TIMEOUT_MS sets every request; MAILWARDEN_WRITE_TIMEOUT_MS overrides it for writes', () => {
    expect(limitsFromEnv({ MAILWARDEN_REQUEST_TIMEOUT_MS: '5000' })).toMatchObject({
      readMs: 5000,
      writeMs: 5000,
    });
    expect(
      limitsFromEnv({ MAILWARDEN_REQUEST_TIMEOUT_MS: '5000', MAILWARDEN_WRITE_TIMEOUT_MS: '9000' }),
    ).toMatchObject({ readMs: 5000, writeMs: 9000 });
    expect(
      limitsFromEnv({ MAILWARDEN_CALL_BUDGET_MS: '1000', MAILWARDEN_RATE_LIMIT_MAX_WAIT_MS: '0' }),
    ).toMatchObject({
      callBudgetMs: 1000,
      rateLimitMaxWaitMs: 0,
    });
  });

  it.each([['soon'], ['-1'], ['1.5'], ['0'], ['9999999999']])('refuses %j, naming the variable', (v) => {
    let err: unknown;
    try {
      limitsFromEnv({ MAILWARDEN_REQUEST_TIMEOUT_MS: v });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MailError);
    expect((err as MailError).field).toBe('MAILWARDEN_REQUEST_TIMEOUT_MS');
    expect((err as MailError).message).toContain(`(got "${v}")`);
  });
});
