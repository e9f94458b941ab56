import { expect } from 'vitest';
import { MailError } from '../../src/mail/errors.js';

/** The MailError a promise rejects with (fails the test if it resolves or throws something else). */
export async function rejected(p: Promise<unknown>): Promise<MailError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(MailError);
  return e as MailError;
}
