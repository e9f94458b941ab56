import { z } from 'zod';
import { BATCH_LIMIT, chunk } from '../../mail/bulk-plan.js';
import { ERROR_CODES, MailError, isMailError } from '../../mail/errors.js';
import type { ErrorCode } from '../../mail/errors.js';
import type { LabelChange } from '../../providers/mailbox.js';
import type { ToolContext } from '../common/define.js';
import { agentLabelOf, isOutcomeUnknown } from '../common/guarded.js';
import { verifiedSchema, verifyChange } from './verify.js';
import type { Verified } from './verify.js';

const PROGRESS_FLUSH_MS = 20;

/** One batchModify's worth of work: these ids get this change. */
export interface WriteJob {
  ids: string[];
  change: LabelChange;
}

export interface ChunkReport {
  index: number;
  ids: number;
  outcome: 'ok' | 'failed' | 'notAttempted' | 'refused' | 'unknown';
  error?: { code: string; message: string };
  /** The answer never came: the chunk's labels as read back afterwards. */
  readBack?: Verified;
  /** Ids the write policy refused (never sent). */
  refused?: number;
  /** Ids whose live state could not be read for the policy, so they were not judged and not sent. */
  unjudged?: number;
}

/**
 * Judges one chunk's ids and hands the ones it allows to `write` (at most once, maybe with none).
 * `write` throws what the provider threw, after recording it in the chunk's report.
 */
export type ChunkGuard = (
  ids: string[],
  change: LabelChange,
  write: (allowed: string[]) => Promise<void>,
) => Promise<ChunkJudged>;

export interface ChunkJudged {
  refused: number;
  unjudged: number;
  /** Why some ids could not be judged (the first read error). */
  readError?: { code: string; message: string };
}

export interface ChunkRun {
  chunks: ChunkReport[];
  /** Ids in chunks Gmail accepted (it answers 204 and silently skips ids it does not know). */
  submitted: number;
  /** Ids in chunks that failed after the client's retries (Gmail may have applied some). */
  failed: number;
  /** Ids of chunks whose answer never came and whose read-back did not show the change. */
  unknown: number;
  notAttempted: number;
  /** Set when Gmail rate-limited a chunk: the chunks after it were not attempted. */
  rateLimited?: { retryAfterSeconds?: number };
  cancelled: boolean;
  /** Ids of every chunk that reached Gmail, accepted or not: what an undo must cover. */
  sent: Set<string>;
  /** Ids of the accepted chunks: what verification reads back. */
  accepted: string[];
}

export const chunkReport = z.object({
  index: z.number(),
  ids: z.number(),
  outcome: z
    .enum(['ok', 'failed', 'notAttempted', 'refused', 'unknown'])
    .describe(
      'refused: the write policy refused every id of the chunk, so nothing was sent; unknown: Gmail never answered and the labels read back do not (yet) show the change; notAttempted: after a cancellation, the call budget or a rate limit',
    ),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  readBack: verifiedSchema
    .optional()
    .describe('Gmail never answered this chunk: its labels as read back afterwards'),
  refused: z.number().optional().describe('ids the write policy refused (never sent)'),
  unjudged: z
    .number()
    .optional()
    .describe('ids whose live labels or sender could not be read for the policy; left unchanged'),
});

/**
 * Runs jobs as batchModify calls of at most 1,000 ids, one after another, and reports each
 * chunk on its own: a failed chunk does not stop the rest (docs/architecture.md, promise 6). Sequential on
 * purpose: progress is reported after each chunk, cancellation is honoured between chunks, and
 * a chunk is never abandoned mid-request (the signal is not passed to the write, since a request
 * already sent may still land and its outcome must be known).
 */
export async function runChunks(
  ctx: ToolContext,
  jobs: readonly WriteJob[],
  guard?: ChunkGuard,
): Promise<ChunkRun> {
  const planned = jobs.flatMap((job) =>
    chunk(job.ids, BATCH_LIMIT).map((ids) => ({ ids, change: job.change })),
  );
  const run: ChunkRun = {
    chunks: [],
    submitted: 0,
    failed: 0,
    unknown: 0,
    notAttempted: 0,
    cancelled: false,
    sent: new Set(),
    accepted: [],
  };
  const labelled = await agentLabelOf(ctx);
  for (const [index, job] of planned.entries()) {
    // A rate limit already had its one wait in the client: the chunks after it would only spend
    // requests on the same 429 (the reference retried every remaining chunk four times).
    if (ctx.signal.aborted || run.rateLimited !== undefined) {
      if (run.rateLimited === undefined) run.cancelled = true;
      run.chunks.push({ index, ids: job.ids.length, outcome: 'notAttempted' });
      run.notAttempted += job.ids.length;
      continue;
    }
    let written = 0;
    let error: ChunkReport['error'];
    let readBack: Verified | undefined;
    const write = async (ids: string[]): Promise<void> => {
      if (ids.length === 0) return;
      for (const id of ids) run.sent.add(id);
      written += ids.length;
      try {
        await ctx.mailbox.modifyMessages(ids, job.change, undefined, labelled);
        run.submitted += ids.length;
        run.accepted.push(...ids);
      } catch (e) {
        error = errorOf(e);
        if (isMailError(e) && e.code === 'rate_limited')
          run.rateLimited =
            e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds };
        if (!isOutcomeUnknown(e)) {
          run.failed += ids.length;
          throw e;
        }
        // Gmail may have applied it: what the labels say now is the report (issue 9: a hung
        // batchModify was reported failed and applied afterwards).
        readBack = await verifyChange(ctx.mailbox, ids, job.change);
        if (readBack.applied === ids.length) {
          error = undefined;
          run.submitted += ids.length;
          run.accepted.push(...ids);
          return;
        }
        run.unknown += ids.length;
        throw e;
      }
    };
    let judged: ChunkJudged = { refused: 0, unjudged: 0 };
    try {
      if (guard === undefined) await write(job.ids);
      else judged = await guard(job.ids, job.change, write);
    } catch (e) {
      // The provider's error is recorded by write(); anything else (the policy's lock or log)
      // failed the chunk before or after its write, and what was not written counts as failed.
      if (error === undefined) {
        error = errorOf(e);
        run.failed += job.ids.length - written - judged.refused - judged.unjudged;
      }
    }
    // Ids that could not be judged were not sent: failed (with the read's error when nothing was
    // sent), not refused. A chunk with nothing sent and nothing failed is one the policy refused.
    run.failed += judged.unjudged;
    if (error === undefined && written === 0 && judged.unjudged > 0) error = judged.readError;
    const outcome: ChunkReport['outcome'] =
      readBack !== undefined && error !== undefined
        ? 'unknown'
        : error !== undefined || (written === 0 && judged.unjudged > 0)
          ? 'failed'
          : written === 0 && judged.refused > 0
            ? 'refused'
            : 'ok';
    const report: ChunkReport = {
      index,
      ids: job.ids.length,
      outcome,
      ...(error === undefined ? {} : { error }),
      ...(readBack === undefined ? {} : { readBack }),
      ...(guard === undefined ? {} : { refused: judged.refused, unjudged: judged.unjudged }),
    };
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

export const runFields = {
  unknown: z
    .number()
    .describe('ids in chunks Gmail never answered whose labels, read back, do not (yet) show the change'),
  rateLimited: z
    .object({ retryAfterSeconds: z.number().optional() })
    .optional()
    .describe('Gmail rate-limited a chunk; the chunks after it were not attempted'),
};

/**
 * Every chunk failed and nothing may have landed: the call is an error with the first chunk's
 * code (rate_limited keeps its retryAfterSeconds), as for the thread tools (guarded.ts).
 */
export function nothingChanged(run: ChunkRun): MailError | undefined {
  if (run.submitted > 0 || run.unknown > 0 || run.failed === 0) return undefined;
  const first = run.chunks.find((c) => c.error !== undefined)?.error;
  const code = (ERROR_CODES as readonly string[]).includes(first?.code ?? '')
    ? (first?.code as ErrorCode)
    : 'internal_error';
  const after = run.notAttempted > 0 ? `; ${run.notAttempted} id(s) were not attempted` : '';
  return new MailError(
    code,
    `nothing was changed: ${run.failed} id(s) failed${after} — ${first?.message ?? 'no detail'}`,
    {
      ...(run.rateLimited?.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: run.rateLimited.retryAfterSeconds }),
    },
  );
}

function errorOf(e: unknown): { code: string; message: string } {
  return isMailError(e)
    ? { code: e.code, message: e.message }
    : { code: 'internal_error', message: String(e) };
}
