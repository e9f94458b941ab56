import type { z } from 'zod';
import type { Clock } from '../../mail/clock.js';
import type { Mailbox } from '../../providers/mailbox.js';
import type { Tier } from '../../policy/tiers.js';
import type { Fence } from '../../mcp/untrusted.js';
import type { ErrorCode } from '../../mail/errors.js';
import type { ConfirmOutcome, ConfirmRequest } from '../../policy/confirm.js';
import type { AccountRegistry } from '../../store/accounts.js';
import type { Downloads } from '../../store/downloads.js';
import type { Outbound } from '../../net/outbound.js';
import type { ActionLog } from '../../policy/action-log.js';
import type { Gate } from '../../policy/gate.js';
import type { InboxMarkStore } from '../../store/inbox-mark.js';
import type { PreviewStore } from '../../store/preview-tokens.js';

/**
 * How a tool touches the world; `src/mcp/` derives the MCP annotations from it:
 * read → readOnly; write → changes mailbox state, reversibly; destructive → may lose state;
 * external → talks to a host that is not the mail provider (open world).
 */
/**
 * JSON Schema keyword (set with zod's .meta) marking an input the model passes back as it
 * received it, such as an undo plan: tools/list advertises it as one object with its description.
 */
export const OPAQUE = 'x-mailwarden-opaque';

export type Access = 'read' | 'write' | 'destructive' | 'external';

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface ToolContext {
  mailbox: Mailbox;
  clock: Clock;
  /** Fences mail-derived text for this one result (see src/mcp/untrusted.ts). */
  fence: Fence;
  /** Reports progress when the client asked for it; a no-op otherwise. */
  progress(done: number, total?: number, message?: string): Promise<void>;
  signal: AbortSignal;
  log: Logger;
  /** mailwarden's own version, for get_profile. */
  serverVersion: string;
  /**
   * Asks the human to confirm a change (MCP elicitation; MAILWARDEN_CONFIRM decides whether).
   * Resolves with how it went; throws declined_by_user when the human says no, and
   * forbidden_operation when confirmation is required but the client cannot ask. Call it once
   * per call, before the first write: on the 2026-07-28 protocol the call is re-run once the
   * answer arrives, so everything before it must be reads (and deterministic). src/mcp always
   * sets it; contexts built outside MCP (cron commands) leave it out, and confirmChange() then
   * answers 'unavailable'.
   */
  confirm?: (request: ConfirmRequest) => Promise<ConfirmOutcome>;
  /**
   * Shows a URL to the human, not the model (MCP URL-mode elicitation), then waits on `until`
   * (what the human does there) outside the call's budget. `{shown: false}` when the client
   * cannot show URLs; throws declined_by_user when the human declines. On 2026-07-28 the call is
   * re-run once the client has shown it (as with confirm), so `request.id` must be the same then.
   */
  showUrl?: <T>(request: UrlRequest, until: () => Promise<T>) => Promise<UrlShown<T>>;
  /** The account registry, for the tools that manage it (`registry: true`). */
  accounts?: AccountRegistry;
  /** Files for people, only inside MAILWARDEN_DOWNLOAD_DIR, each logged; absent reads as unset. */
  downloads?: Downloads;
  /** The one way to a host that is not the mail provider (src/net); absent when the runtime has none. */
  outbound?: OutboundContext;
  /**
   * The write policy's judge for this call's account (src/policy/gate.ts), loaded from policy.json
   * when first asked. src/mcp always sets it for a server; a context without it (unit tests) writes
   * without the policy.
   */
  gate?: () => Promise<Gate>;
  /** The sweep's new-mail marks in the config dir (list_new_mail, mark_handled, check_new_mail). */
  inboxMarks?: InboxMarkStore;
  /** Bulk preview tokens in the state the replicas share; absent: this process's memory. */
  previews?: PreviewStore;
  /** The tiers this call's account is served with (absent: unknown, e.g. unit tests). */
  tiers?: ReadonlySet<Tier>;
}

export interface UrlRequest {
  /** Stable across the re-runs of one call (the elicitation's id). */
  id: string;
  url: string;
  /** Why the human should open it. */
  message: string;
}

export type UrlShown<T> = { shown: true; value: T } | { shown: false };

/** What a tool gets for outbound requests: the guarded client, and the action log they go to. */
export interface OutboundContext {
  client: Outbound;
  /** Outbound requests are not Mailbox writes, so the tool appends them itself. */
  actionLog: ActionLog;
}

/** One account's answer to a fanned-out call (`account: "all"`): its result, or why it failed. */
export type FanOutPart<O> =
  | { account: string; ok: true; result: O }
  | { account: string; ok: false; error: { code: ErrorCode; message: string; retryable: boolean } };

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  tier: Tier;
  access: Access;
  description: string;
  input: I;
  output: O;
  handle(ctx: ToolContext, args: z.output<I>): Promise<z.input<O>>;
  /**
   * Read tools that scan may take `account: "all"`: src/mcp runs `handle` once per account,
   * concurrently, and this merges the answers (at least one of them succeeded).
   */
  fanOut?: (parts: ReadonlyArray<FanOutPart<z.input<O>>>) => z.input<O>;
  /** Works the account registry, not a mailbox: takes no `account` and gets no ctx.mailbox. */
  registry?: true;
}

export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject>;

/** A tool is a value: defining one registers nothing. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDefinition<I, O>): AnyTool {
  return def as unknown as AnyTool;
}

/**
 * Fenced mail text, or '' when there is nothing to fence (a part without a filename): an empty
 * fence says nothing and costs context.
 */
export function fenceOrEmpty(fence: Fence, text: string): string {
  const wrapped = fence.wrap(text);
  return wrapped === fence.wrap('') ? '' : wrapped;
}

/** ctx.confirm where there is one; a context without a human channel counts as unable to ask. */
export function confirmChange(ctx: ToolContext, request: ConfirmRequest): Promise<ConfirmOutcome> {
  return ctx.confirm ? ctx.confirm(request) : Promise.resolve('unavailable');
}

/**
 * How many thread reads a tool keeps in flight: a few for a provider that answers each on its own
 * (Gmail: hides latency, stays polite to quota), all of them for one that batches (IMAP).
 */
export function readConcurrency(mailbox: Mailbox, usual: number): number {
  return mailbox.batchesReads === true ? 10_000 : usual;
}
