import { randomBytes, randomUUID } from 'node:crypto';
import { inputRequired } from '@modelcontextprotocol/server';
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { MailError } from '../mail/errors.js';
import { CONFIRM_STATE_TTL_MS, NonceLedger, checkConfirmState, mintConfirmState } from '../policy/confirm.js';
import type { Logger, UrlRequest, UrlShown } from '../tools/common/define.js';
import { ConfirmationPending, elicitationCapability, isModern } from './confirm.js';

/**
 * URL-mode elicitation (MCP 2025-11-25, "URL mode elicitation"): a URL shown to the human by the
 * client, never to the model, for things that must not pass through it (a sign-in). 2025-11-25:
 * elicitation/create with mode "url" while the call waits; "accept" means the human agreed to
 * open it, so the call then waits for what happens there and sends
 * notifications/elicitation/complete. 2026-07-28: the call answers input_required with the URL
 * request and a MACed requestState bound to the call and the request's id; the retry carrying
 * the answer waits instead. Only clients declaring `elicitation.url` are asked.
 */

const STATE_KEY = randomBytes(32);
const LEDGER = new NonceLedger();
export const URL_INPUT_KEY = 'mailwarden_open_url';
/** The 2025 question is answered when the human chose to open (or not); the wait comes after. */
const ASK_TIMEOUT_MS = 10 * 60_000;

export function clientCanOpenUrls(server: McpServer, ctx: ServerContext): boolean {
  const e = elicitationCapability(server, ctx);
  if (e === null || typeof e !== 'object') return false;
  const url = (e as Record<string, unknown>)['url'];
  return url !== null && typeof url === 'object';
}

const declined = (): MailError =>
  new MailError(
    'declined_by_user',
    'the user chose not to open the page; nothing was stored. Do not retry unless the user asks for it again.',
    { retryable: false },
  );

const accepted = (answer: unknown): boolean =>
  answer !== null && typeof answer === 'object' && (answer as { action?: unknown }).action === 'accept';

export interface UrlOpenerOptions {
  server: McpServer;
  ctx: ServerContext;
  /** callBinding(tool, account, args) of this call. */
  binding: string;
  now: () => number;
  log: Logger;
  tool: string;
}

export function callUrlOpener(
  opts: UrlOpenerOptions,
): <T>(request: UrlRequest, until: () => Promise<T>) => Promise<UrlShown<T>> {
  const { server, ctx } = opts;
  return async function showUrl<T>(request: UrlRequest, until: () => Promise<T>): Promise<UrlShown<T>> {
    if (!clientCanOpenUrls(server, ctx)) return { shown: false };
    if (!isModern(server)) {
      let answer: unknown;
      try {
        answer = await ctx.mcpReq.elicitInput(
          { mode: 'url', message: request.message, url: request.url, elicitationId: request.id },
          {
            timeout: ASK_TIMEOUT_MS,
            signal: ctx.mcpReq.signal,
            // Over Streamable HTTP the request travels on the stream of the call it belongs to.
            relatedRequestId: ctx.mcpReq.id,
          },
        );
      } catch (e) {
        throw new MailError(
          'forbidden_operation',
          `mailwarden could not show the page to the user (${e instanceof Error ? e.message : String(e)}); nothing was stored`,
          { retryable: false, cause: e },
        );
      }
      if (!accepted(answer)) throw declined();
      try {
        return { shown: true, value: await until() };
      } finally {
        // Best effort: lets the client close whatever it shows while the human is away.
        await server.server
          .createElicitationCompletionNotifier(request.id, { relatedRequestId: ctx.mcpReq.id })()
          .catch(() => undefined);
      }
    }
    const binding = `${opts.binding}\nurl:${request.id}`;
    const now = opts.now();
    const state = ctx.mcpReq.requestState();
    if (state !== undefined) {
      const check = checkConfirmState(STATE_KEY, state, binding, now);
      const answer = ctx.mcpReq.inputResponses?.[URL_INPUT_KEY];
      if (!check.ok)
        opts.log.warn('ignored a URL elicitation answer', { tool: opts.tool, reason: check.reason });
      else if (answer === undefined)
        opts.log.warn('a retried call carried no URL answer', { tool: opts.tool });
      else if (!LEDGER.consume(check.nonce, check.expiresAt, now))
        opts.log.warn('ignored a replayed URL answer', { tool: opts.tool });
      else if (!accepted(answer)) throw declined();
      else return { shown: true, value: await until() };
    }
    throw new ConfirmationPending(
      inputRequired({
        inputRequests: {
          [URL_INPUT_KEY]: inputRequired.elicitUrl({ message: request.message, url: request.url }),
        },
        requestState: mintConfirmState(STATE_KEY, binding, randomUUID(), now + CONFIRM_STATE_TTL_MS),
      }),
    );
  };
}
