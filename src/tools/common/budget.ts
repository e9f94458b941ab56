import { sameCall } from '../../providers/freshness.js';
import { MailError, errorChain } from '../../mail/errors.js';
import type { AnyTool, ToolContext } from './define.js';

/**
 * Every tool call gets a budget (issue 9): however many requests a tool makes, and however each
 * is retried, the call answers within it. The time a human spends on a confirmation question is
 * not the mailbox's time, so the budget stops while one is open, and while a person signs in on a
 * page add_account showed them. When it runs out, the call's
 * signal aborts with a MailError: reads in flight stop with it, and multi-request tools report
 * what they did not get to (writes already sent are bounded by their own deadline, not this).
 */
export function withCallBudget(
  tools: readonly AnyTool[],
  budgetMs: number,
  options: { debug?: boolean } = {},
): AnyTool[] {
  return tools.map((tool) => ({
    ...tool,
    handle: async (ctx: ToolContext, args: Record<string, unknown>) => {
      try {
        return await budgeted(tool, ctx, args, budgetMs);
      } catch (e) {
        // MAILWARDEN_DEBUG=1: the whole error, stack and causes, on stderr (the client still
        // gets only the envelope).
        if (options.debug === true)
          ctx.log.warn('tool error (MAILWARDEN_DEBUG)', { tool: tool.name, error: errorChain(e) });
        throw e;
      }
    },
  }));
}

class Budget {
  readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private left: number;
  private since = 0;
  private paused = 0;

  constructor(
    ms: number,
    private readonly reason: () => MailError,
  ) {
    this.left = ms;
    this.start();
  }

  private start(): void {
    this.since = Date.now();
    this.timer = setTimeout(() => this.controller.abort(this.reason()), Math.max(0, this.left));
  }

  pause(): void {
    if (this.paused++ > 0 || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= Date.now() - this.since;
  }

  resume(): void {
    if (--this.paused > 0 || this.controller.signal.aborted) return;
    this.start();
  }

  /**
   * The call has answered: whatever of it is still waiting (a retry's backoff, a request of a
   * Promise.all that lost the race to another's error) is stopped, so nothing of an answered
   * call goes out afterwards.
   */
  stop(tool: string): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.controller.signal.aborted)
      this.controller.abort(new MailError('internal_error', `${tool}: the call had already answered`));
  }
}

async function budgeted(
  tool: AnyTool,
  ctx: ToolContext,
  args: Record<string, unknown>,
  budgetMs: number,
): Promise<Record<string, unknown>> {
  const span = budgetMs < 1000 ? `${budgetMs} ms` : `${Math.round(budgetMs / 100) / 10} s`;
  const budget = new Budget(
    budgetMs,
    () =>
      new MailError(
        'deadline_exceeded',
        `${tool.name}: the call used its whole budget of ${span} (MAILWARDEN_CALL_BUDGET_MS) waiting on the mailbox, and what had not finished was stopped. Try again, or narrow the call.`,
        { retryable: true },
      ),
  );
  const confirm = ctx.confirm;
  const showUrl = ctx.showUrl;
  const signal = AbortSignal.any([ctx.signal, budget.controller.signal]);
  sameCall(signal, ctx.signal);
  const budgetedCtx: ToolContext = {
    ...ctx,
    signal,
    // A person signing in on a consent page is not the mailbox's time either.
    ...(showUrl === undefined
      ? {}
      : {
          showUrl: async (request, until) => {
            budget.pause();
            try {
              return await showUrl(request, until);
            } finally {
              budget.resume();
            }
          },
        }),
    ...(confirm === undefined
      ? {}
      : {
          confirm: async (request) => {
            budget.pause();
            try {
              return await confirm(request);
            } finally {
              budget.resume();
            }
          },
        }),
  };
  try {
    return (await tool.handle(budgetedCtx, args)) as Record<string, unknown>;
  } finally {
    budget.stop(tool.name);
  }
}
