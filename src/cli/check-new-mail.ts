import { readFile } from 'node:fs/promises';
import { isMailError } from '../mail/errors.js';
import { writeFileAtomic } from '../store/atomic.js';
import { checkNewMail } from '../tools/new-mail.js';
import type { CheckNewMail } from '../tools/new-mail.js';
import { buildRuntime } from './runtime.js';
import { contextOutsideCall, servedAccounts } from './sweep.js';

/*
 * `mailwarden check-new-mail` for cron and agent gates: one account, JSON on stdout, and an exit
 * code a shell `&&` can use. 0: wake (new mail whose newest is not the last topic); 1: nothing
 * to wake for; 2: usage; 3: the mailbox could not be asked (down, bad credentials, damaged mark).
 * With --topic-file the last topic is read from the file and the new one written to it when the
 * answer is "wake", so the same mail never wakes two runs.
 */

export const EXIT_WAKE = 0;
export const EXIT_NOTHING = 1;
export const EXIT_FAILED = 3;

export async function checkNewMailCommand(options: {
  demo: boolean;
  account?: string;
  sinceTopic?: string;
  topicFile?: string;
}): Promise<number> {
  let sinceTopic = options.sinceTopic;
  if (options.topicFile !== undefined && sinceTopic === undefined) {
    sinceTopic = await readFile(options.topicFile, 'utf8').then(
      (t) => t.trim() || undefined,
      () => undefined,
    );
  }
  let built: Awaited<ReturnType<typeof buildRuntime>> | undefined;
  try {
    built = await buildRuntime({
      demo: options.demo,
      env: process.env,
      ...(options.account === undefined ? {} : { account: options.account }),
    });
    const name = options.demo ? 'demo' : (await built.runtime.mailbox()).account;
    const served = (await servedAccounts(built.runtime)).find((a) => a.name === name);
    const ctx = await contextOutsideCall(built.runtime, name, {
      logAs: 'cli check-new-mail',
      ...(served ? { tiers: served.tiers } : {}),
    });
    const answer: CheckNewMail & { account?: string } = {
      ...(await checkNewMail(ctx, sinceTopic)),
      account: name,
    };
    console.log(JSON.stringify(answer));
    if (answer.wake && options.topicFile !== undefined && answer.topic !== null)
      await writeFileAtomic(options.topicFile, `${answer.topic}\n`, { mode: 0o600 });
    return answer.wake ? EXIT_WAKE : EXIT_NOTHING;
  } catch (e) {
    const error = isMailError(e)
      ? { code: e.code, message: e.message, retryable: e.retryable }
      : { code: 'internal_error', message: String(e), retryable: false };
    console.log(JSON.stringify({ wake: false, error }));
    return EXIT_FAILED;
  } finally {
    await built?.close();
  }
}
