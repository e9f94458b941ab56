import { randomUUID } from 'node:crypto';
import { MailError, invalidInput } from '../mail/errors.js';
import type { Tier } from '../policy/tiers.js';
import { addAccount, checkName, parseTiers, readAccounts } from '../store/accounts.js';
import type {
  AccountEntry,
  PendingSignIn,
  SignInOutcome,
  SignInRequest,
  SignInStart,
} from '../store/accounts.js';
import { accountsStore } from '../store/accounts-store.js';
import type { Env } from '../store/config.js';
import { readAccountTokenMeta } from '../store/tokens.js';
import { beginSignIn } from './auth.js';

/**
 * add_account's sign-ins, per server process. A flow outlives the tool call that started it: a
 * client that cannot show a URL gets the URL in the result and the flow keeps waiting for the
 * browser; on 2026-07-28 the call that shows the URL ends and its retry waits on the same flow.
 * An ended flow is kept until one call has reported how it ended (or for FORGET_MS), so asking
 * again after the person approved answers "added" instead of starting another sign-in.
 */

const FORGET_MS = 10 * 60_000;

interface Flow {
  pending: PendingSignIn;
  /** Same key: a repeated call reuses the flow; another key replaces it. */
  key: string;
  ended?: { ok: true; outcome: SignInOutcome } | { ok: false; error: unknown };
  result: Promise<SignInOutcome>;
}

export interface SignInDeps {
  env: Env;
  /** Registers an account whose token now exists (the registry's add: checks the token the same way). */
  register(input: {
    name: string;
    alias?: string;
    tiers?: readonly string[];
    makeDefault?: boolean;
  }): Promise<AccountEntry>;
  /** Drops the account's cached mailbox, so the next call uses the new token. */
  forget(name: string): Promise<void>;
}

export function accountSignIns(deps: SignInDeps): (input: SignInRequest) => Promise<SignInStart> {
  const { env } = deps;
  const flows = new Map<string, Flow>();

  const settle = (name: string, flow: Flow): void => {
    setTimeout(() => {
      if (flows.get(name) === flow) flows.delete(name);
    }, FORGET_MS).unref();
  };

  return async function signIn(input: SignInRequest): Promise<SignInStart> {
    const name = checkName(input.name, 'name');
    const list = await readAccounts(env);
    const entry = list.find((a) => a.name === name);
    // The tools' module builds their zod schemas at import: loaded only here, never at start.
    if (entry?.provider === 'imap') throw (await import('../tools/accounts.js')).imapByTerminal(name);
    const tiers = parseTiers(input.tiers ?? entry?.tiers ?? ['read', 'manage'], 'tiers');
    const alias = input.alias === undefined ? undefined : checkName(input.alias, 'alias');
    const owner =
      alias === undefined
        ? undefined
        : list.find((a) => a.name !== name && (a.name === alias || a.alias === alias));
    // Checked before the browser is involved, so a sign-in never ends in a token with no account.
    if (owner !== undefined) throw invalidInput('alias', `"${alias}" already names account "${owner.name}"`);
    if (alias !== undefined && alias === name) throw invalidInput('alias', 'must differ from the name');

    const key = JSON.stringify([tiers, input.force === true, alias, input.makeDefault === true]);
    const known = flows.get(name);
    if (known?.ended !== undefined) {
      flows.delete(name);
      if (known.ended.ok) return { kind: 'done', outcome: known.ended.outcome };
      throw known.ended.error;
    }
    if (known !== undefined) {
      if (known.key === key) return { kind: 'consent', flow: known.pending };
      known.pending.cancel(
        new MailError('invalid_input', 'a newer add_account call for this account replaced this sign-in'),
      );
      flows.delete(name);
    }

    // A token nobody registered yet (`mailwarden auth --account NAME`): register it as it is.
    if (
      entry === undefined &&
      (await readAccountTokenMeta(await accountsStore(env), name).catch(() => undefined)) !== undefined
    ) {
      const added = await deps.register({
        name,
        tiers,
        makeDefault: input.makeDefault === true,
        ...(alias === undefined ? {} : { alias }),
      });
      return { kind: 'done', outcome: { entry: added, status: 'added' } };
    }

    const reauth = entry !== undefined;
    const started = await beginSignIn({
      env,
      account: name,
      tiers: new Set<Tier>(tiers),
      force: input.force === true,
      ...(entry?.address === undefined ? {} : { registered: entry.address }),
      retryHint: 'Nothing was stored; call add_account again for a new sign-in link.',
      mismatchHint:
        'To add that mailbox too, call add_account with another name; to replace this account with it, call add_account again with force: true.',
    });
    const hadToken = started.previous !== undefined;
    const result = (async (): Promise<SignInOutcome> => {
      const got = await started.done;
      let stored: AccountEntry;
      try {
        stored = await addAccount(env, {
          name,
          address: got.address,
          tiers,
          replace: reauth,
          ...(alias === undefined ? {} : { alias }),
          ...(input.makeDefault === true ? { makeDefault: true } : {}),
        });
      } catch (e) {
        // No token without its account: a new one is taken back out.
        if (!hadToken) await (await accountsStore(env)).removeSecret(name, 'gmail-token');
        throw e;
      }
      await deps.forget(name);
      const notes: string[] = [];
      if (got.dropped.length > 0)
        notes.push(
          `The consent did not grant what the ${got.dropped.join(', ')} tier(s) need; call add_account again and leave every box ticked to use them.`,
        );
      if (started.protection.kind === 'none')
        notes.push(`The token is stored unencrypted (${started.protection.reason}).`);
      return {
        entry: stored,
        status: reauth ? 'reauthenticated' : 'added',
        ...(notes.length === 0 ? {} : { note: notes.join(' ') }),
      };
    })();
    result.catch(() => undefined);

    const flow: Flow = {
      key,
      result,
      pending: {
        id: randomUUID(),
        url: started.url,
        reauth,
        expiresAt: Date.now() + started.timeoutMs,
        async wait(signal) {
          const stopped = new Promise<never>((_r, reject) => {
            const onAbort = (): void => {
              started.cancel(
                new MailError('declined_by_user', 'add_account was cancelled; nothing was stored.'),
              );
              reject(signal.reason as Error);
            };
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          });
          stopped.catch(() => undefined);
          try {
            return await Promise.race([result, stopped]);
          } finally {
            // This call reports the end, so the next add_account starts afresh.
            if (flows.get(name) === flow) flows.delete(name);
          }
        },
        cancel: (reason) => started.cancel(reason),
      },
    };
    result.then(
      (outcome) => (flow.ended = { ok: true, outcome }),
      (error: unknown) => (flow.ended = { ok: false, error }),
    );
    result.finally(() => settle(name, flow)).catch(() => undefined);
    flows.set(name, flow);
    return { kind: 'consent', flow: flow.pending };
  };
}
