import { randomBytes, randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, inputRequired } from '@modelcontextprotocol/server';
import type { InputRequiredResult, McpServer, ServerContext } from '@modelcontextprotocol/server';
import { MailError } from '../mail/errors.js';
import type { ActionLog } from '../policy/action-log.js';
import {
  CONFIRM_SCHEMA,
  CONFIRM_STATE_TTL_MS,
  NonceLedger,
  cannotAsk,
  needsPerson,
  checkConfirmState,
  confirmationText,
  decideConfirmation,
  declinedByUser,
  isAcceptance,
  mintConfirmState,
} from '../policy/confirm.js';
import type { ConfirmMode, ConfirmOutcome, ConfirmRequest } from '../policy/confirm.js';
import { WRITE_METHODS } from '../policy/logged-mailbox.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { Logger } from '../tools/common/define.js';
import { stripInvisible } from './untrusted.js';

/**
 * The SDK side of confirmations (decision logic: src/policy/confirm.ts). 2025-11-25: the server
 * sends elicitation/create while the tool call waits. 2026-07-28 has no server→client requests:
 * the call answers `input_required` with the question and a MACed requestState, the client asks
 * the human and retries the same call with the answer, and the tool runs again from the top.
 */

/** Per process: a requestState minted by one server process means nothing to another. */
const STATE_KEY = randomBytes(32);
const LEDGER = new NonceLedger();
/** The inputRequests key the answer comes back under. */
export const CONFIRM_INPUT_KEY = 'mailwarden_confirm';
/** Humans are slow; the SDK's 60 s request default would cancel a question left open briefly. */
const ASK_TIMEOUT_MS = 10 * 60_000;
const FIRST_MODERN = '2026-07-28';

/** Thrown through the tool to src/mcp/server.ts, which returns the result instead of an error. */
export class ConfirmationPending extends Error {
  constructor(readonly result: InputRequiredResult) {
    super('waiting for the user to confirm');
    this.name = 'ConfirmationPending';
  }
}

export function isModern(server: McpServer): boolean {
  // Era is per connection in the SDK (serveStdio and the HTTP handler bind it per instance).
  const v = server.server.getNegotiatedProtocolVersion();
  return v !== undefined && v >= FIRST_MODERN;
}

/** The client's `elicitation` capability as declared for this request's protocol revision. */
export function elicitationCapability(server: McpServer, ctx: ServerContext): unknown {
  const caps = isModern(server)
    ? ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
        Record<string, unknown> | undefined)
    : (server.server.getClientCapabilities() as Record<string, unknown> | undefined);
  return caps?.['elicitation'];
}

/**
 * Form elicitation is declared as `elicitation: {}` (2025 meaning: form) or with a `form`
 * member; `url` alone does not show a form. 2026-07-28 carries the capabilities on every
 * request; 2025-11-25 declares them once at initialize.
 */
export function clientCanElicit(server: McpServer, ctx: ServerContext): boolean {
  const e = elicitationCapability(server, ctx);
  if (e === null || typeof e !== 'object') return false;
  const members = e as Record<string, unknown>;
  return members['form'] !== undefined || members['url'] === undefined;
}

export interface CallConfirmOptions {
  server: McpServer;
  ctx: ServerContext;
  /** Read lazily: a bad MAILWARDEN_CONFIRM fails the call that needs it, closed. */
  mode: () => ConfirmMode;
  tool: string;
  /** The call's mailbox; its account names the action-log record. */
  mailbox: Mailbox;
  /** callBinding(tool, account, args) of this call. */
  binding: string;
  now: () => number;
  log: Logger;
  actionLog: ActionLog;
}

/** One tool call's confirmation: ctx.confirm, and a mailbox view that notices the first write. */
export function callConfirmation(opts: CallConfirmOptions): {
  confirm: (request: ConfirmRequest) => Promise<ConfirmOutcome>;
  watch: (mailbox: Mailbox) => Mailbox;
} {
  let wrote: string | undefined;
  const account = (): string => {
    try {
      return opts.mailbox.account;
    } catch {
      return 'all'; // a fanned-out or registry call has no single mailbox (src/mcp/server.ts)
    }
  };
  const record = async (outcome: 'ok' | 'failed', detail: Record<string, unknown>): Promise<void> => {
    try {
      await opts.actionLog.append({
        account: account(),
        tool: opts.tool,
        op: 'confirm',
        detail,
        outcome,
        ...(outcome === 'failed' ? { error: 'declined_by_user' } : {}),
      });
    } catch (e) {
      // The writes that follow a yes are logged or refused on their own; a no changes nothing.
      opts.log.warn('could not record a confirmation', { tool: opts.tool, error: String(e) });
    }
  };
  const answered = async (answer: unknown, question: string): Promise<ConfirmOutcome> => {
    if (isAcceptance(answer)) {
      await record('ok', { question, answer: 'accepted' });
      return 'confirmed';
    }
    await record('failed', { question, answer: 'declined' });
    throw declinedByUser();
  };

  let asked = false;
  async function confirm(request: ConfirmRequest): Promise<ConfirmOutcome> {
    // One question per call: on 2026-07-28 a retried call carries one answer, for one question.
    if (asked) throw new MailError('internal_error', `${opts.tool} asked for confirmation twice in one call`);
    asked = true;
    if (wrote !== undefined) {
      throw new MailError(
        'internal_error',
        `${opts.tool} asked for confirmation after it had already written (${wrote})`,
      );
    }
    const mode = opts.mode();
    const question = stripInvisible(confirmationText(request));
    const required = request.required;
    switch (decideConfirmation(mode, clientCanElicit(opts.server, opts.ctx), required !== undefined)) {
      case 'skip':
        return 'not_required';
      case 'refuse':
        throw required === undefined ? cannotAsk() : needsPerson(required);
      case 'proceed_unconfirmed':
        opts.log.warn('proceeding without confirmation: the client cannot elicit', { tool: opts.tool });
        await record('ok', {
          question,
          answer: 'not_asked',
          reason: 'the client cannot elicit (MAILWARDEN_CONFIRM=ask)',
        });
        return 'unavailable';
      case 'ask':
        break;
    }
    if (!isModern(opts.server)) {
      let answer: unknown;
      try {
        answer = await opts.ctx.mcpReq.elicitInput(
          { mode: 'form', message: question, requestedSchema: CONFIRM_SCHEMA },
          {
            timeout: ASK_TIMEOUT_MS,
            resetTimeoutOnProgress: true,
            signal: opts.ctx.mcpReq.signal,
            // Over Streamable HTTP the question must travel on the stream of the call it belongs
            // to; without this the SDK sends it to the standalone GET stream, where no one waits.
            relatedRequestId: opts.ctx.mcpReq.id,
          },
        );
      } catch (e) {
        throw new MailError(
          'forbidden_operation',
          `mailwarden could not ask the user to confirm (${e instanceof Error ? e.message : String(e)}); nothing was changed`,
          { retryable: false, cause: e },
        );
      }
      return answered(answer, question);
    }
    const now = opts.now();
    const state = opts.ctx.mcpReq.requestState();
    if (state !== undefined) {
      const check = checkConfirmState(STATE_KEY, state, opts.binding, now);
      const answer = opts.ctx.mcpReq.inputResponses?.[CONFIRM_INPUT_KEY];
      if (!check.ok) {
        // A state for another call, a forged or an expired one: not an answer to this call.
        opts.log.warn('ignored a confirmation answer', { tool: opts.tool, reason: check.reason });
      } else if (answer === undefined) {
        opts.log.warn('a retried call carried no confirmation answer', { tool: opts.tool });
      } else if (!LEDGER.consume(check.nonce, check.expiresAt, now)) {
        opts.log.warn('ignored a replayed confirmation answer', { tool: opts.tool });
      } else {
        return answered(answer, question);
      }
    }
    throw new ConfirmationPending(
      inputRequired({
        inputRequests: {
          [CONFIRM_INPUT_KEY]: inputRequired.elicit({
            mode: 'form',
            message: question,
            requestedSchema: CONFIRM_SCHEMA,
          }),
        },
        requestState: mintConfirmState(STATE_KEY, opts.binding, randomUUID(), now + CONFIRM_STATE_TTL_MS),
      }),
    );
  }

  const watch = (mailbox: Mailbox): Mailbox =>
    new Proxy(mailbox, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof prop !== 'string' || !WRITE_METHODS.has(prop) || typeof value !== 'function') return value;
        return (...args: unknown[]): unknown => {
          wrote ??= prop;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });

  return { confirm, watch };
}
