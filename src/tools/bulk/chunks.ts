import { z } from 'zod';
import { BATCH_LIMIT, chunk } from '../../mail/bulk-plan.js';
import { isMailError } from '../../mail/errors.js';
import type { LabelChange } from '../../providers/mailbox.js';
import type { ToolContext } from '../define.js';

const PROGRESS_FLUSH_MS = 20;

/** One batchModify's worth of work: these ids get this change. */
export interface WriteJob {
  ids: string[];
  change: LabelChange;
}

export interface ChunkReport {
  index: number;
  ids: number;
  outcome: 'ok' | 'failed' | 'notAttempted';
  error?: { code: string; message: string };
}

export interface ChunkRun {
  chunks: ChunkReport[];
  /** Ids in chunks Gmail accepted (it answers 204 and silently skips ids it does not know). */
  submitted: number;
  /** Ids in chunks that failed after the client's retries (Gmail may have applied some). */
  failed: number;
  notAttempted: number;
  cancelled: boolean;
  /** Ids of every chunk that reached Gmail, accepted or not: what an undo must cover. */
  sent: Set<string>;
  /** Ids of the accepted chunks: what verification reads back. */
  accepted: string[];
}

export const chunkReport = z.object({
  index: z.number(),
  ids: z.number(),
  outcome: z.enum(['ok', 'failed', 'notAttempted']),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/**
 * Runs jobs as batchModify calls of at most 1,000 ids, one after another, and reports each
 * chunk on its own: a failed chunk does not stop the rest (DESIGN promise 6). Sequential on
 * purpose: progress is reported after each chunk, cancellation is honoured between chunks, and
 * a chunk is never abandoned mid-request (the signal is not passed to the write, since a request
 * already sent may still land and its outcome must be known).
 */
export async function runChunks(ctx: ToolContext, jobs: readonly WriteJob[]): Promise<ChunkRun> {
  const planned = jobs.flatMap((job) =>
    chunk(job.ids, BATCH_LIMIT).map((ids) => ({ ids, change: job.change })),
  );
  const run: ChunkRun = {
    chunks: [],
    submitted: 0,
    failed: 0,
    notAttempted: 0,
    cancelled: false,
    sent: new Set(),
    accepted: [],
  };
  for (const [index, job] of planned.entries()) {
    if (ctx.signal.aborted) {
      run.cancelled = true;
      run.chunks.push({ index, ids: job.ids.length, outcome: 'notAttempted' });
      run.notAttempted += job.ids.length;
      continue;
    }
    for (const id of job.ids) run.sent.add(id);
    let report: ChunkReport;
    try {
      await ctx.mailbox.modifyMessages(job.ids, job.change);
      report = { index, ids: job.ids.length, outcome: 'ok' };
      run.submitted += job.ids.length;
      run.accepted.push(...job.ids);
    } catch (e) {
      const error = isMailError(e)
        ? { code: e.code, message: e.message }
        : { code: 'internal_error', message: String(e) };
      report = { index, ids: job.ids.length, outcome: 'failed', error };
      run.failed += job.ids.length;
    }
    run.chunks.push(report);
    // A client that went away cannot be told; that must not stop the remaining chunks.
    await ctx
      .progress(
        index + 1,
        planned.length,
        `chunk ${index + 1}/${planned.length}: ${report.outcome} (${job.ids.length} ids)`,
      )
      .catch(() => undefined);
  }
  // The SDK client dispatches notifications a microtask later than responses, so a progress
  // notification read in the same chunk as the result is dropped (its handler is gone by then).
  // A short pause lets the last one travel alone; 20 ms against seconds of batchModify calls.
  if (planned.length > 0) await new Promise((resolve) => setTimeout(resolve, PROGRESS_FLUSH_MS));
  return run;
}
