import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MailError } from '../../src/mail/errors.js';
import { withCallBudget } from '../../src/tools/common/budget.js';
import { defineTool } from '../../src/tools/common/define.js';
import type { ToolContext } from '../../src/tools/common/define.js';

/** Waits for `ms`, or rejects with the signal's reason when it aborts first. */
const wait = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });

function ctxWith(extra: Partial<ToolContext> = {}): ToolContext {
  const logged: string[] = [];
  return {
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: (m: string) => void logged.push(m) },
    ...extra,
  } as unknown as ToolContext;
}

const slow = defineTool({
  name: 'slow',
  title: 'slow',
  tier: 'read',
  access: 'read',
  description: 'waits',
  input: z.object({ ms: z.number(), ask: z.number().optional() }),
  output: z.object({ ok: z.boolean() }),
  async handle(ctx, args) {
    if (args.ask !== undefined) await ctx.confirm?.({ message: 'ok?' });
    await wait(args.ms, ctx.signal);
    return { ok: true };
  },
});

describe('every tool call has a budget', () => {
  it('a call that outlives its budget is stopped with deadline_exceeded naming the setting', async () => {
    const [tool] = withCallBudget([slow], 50);
    const e = await tool!.handle(ctxWith(), { ms: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MailError);
    expect((e as MailError).code).toBe('deadline_exceeded');
    expect((e as MailError).message).toMatch(
      /the call used its whole budget of 50 ms \(MAILWARDEN_CALL_BUDGET_MS\)/,
    );
  });

  it('time a human spends on a confirmation question is not counted', async () => {
    const [tool] = withCallBudget([slow], 150);
    const confirm = (): Promise<'confirmed'> => new Promise((r) => setTimeout(() => r('confirmed'), 300));
    const out = await tool!.handle(ctxWith({ confirm }), { ms: 50, ask: 1 });
    expect(out).toEqual({ ok: true });
  });

  it("the client's own cancellation still reaches the tool", async () => {
    const [tool] = withCallBudget([slow], 60_000);
    const controller = new AbortController();
    const p = tool!.handle(ctxWith({ signal: controller.signal }), { ms: 10_000 });
    controller.abort(new Error('cancelled'));
    await expect(p).rejects.toThrow('cancelled');
  });
});
