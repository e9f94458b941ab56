import type { TestContext } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Why this test could not run here; the JSON report carries it to .ci/run's summary line. */
    skipReason?: string;
  }
}

/** Skips the running test, recording why, so the run's summary can say it (never silently). */
export function skipBecause(ctx: TestContext, reason: string): never {
  ctx.task.meta.skipReason = reason;
  return ctx.skip(reason);
}
