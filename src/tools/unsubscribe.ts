import { z } from 'zod';
import { isMailError, MailError } from '../mail/errors.js';
import { shownUrl } from '../mail/shown-url.js';
import { findUnsubscribeHeaders, UNSUBSCRIBE_HEADERS } from '../mail/unsubscribe.js';
import type { SentRecord } from '../net/ledger.js';
import type { OneClickOutcome } from '../net/one-click.js';
import { confirmChange, defineTool } from './common/define.js';
import type { OutboundContext, ToolContext } from './common/define.js';

const BULK_MAX = 25;
const BULK_BUDGET_MS = 60_000;
const OP = 'unsubscribeOneClick';

const item = z.object({
  threadId: z.string(),
  outcome: z
    .enum([
      'unsubscribed',
      'endpoint_error',
      'refused',
      'failed',
      'already_requested',
      'duplicate',
      'would_call',
    ])
    .describe(
      'unsubscribed: the endpoint answered 2xx; endpoint_error: it answered another status; refused: the headers or the SSRF guard ruled the call out; failed: DNS, TLS, network or time budget; already_requested: this sender or URL had a request earlier in this server run, or by any replica on a PostgreSQL state (force: true repeats); duplicate: same sender or URL as an earlier item of this call; would_call: dryRun passed the checks',
    ),
  sender: z.string().optional().describe('From address of the message whose header is used, fenced'),
  url: z.string().optional().describe('the URL called, fenced: from the header, never from the endpoint'),
  wouldCall: z.string().optional().describe('dryRun: the URL a real call would POST to, fenced'),
  dnsVetted: z
    .boolean()
    .optional()
    .describe('whether DNS answers were checked; dryRun never looks anything up'),
  status: z.number().optional().describe('HTTP status of the last hop; the response body is never read'),
  redirects: z.number().optional(),
  reason: z.string().optional(),
  duplicateOf: z.string().optional().describe('threadId of the earlier item with the same sender or URL'),
  previous: z.object({ at: z.string(), threadId: z.string(), status: z.number().optional() }).optional(),
  mailto: z
    .array(z.string())
    .optional()
    .describe('mailto addresses for the human to use, fenced; never sent'),
  links: z.array(z.string()).optional().describe('other URIs from the header, fenced; never fetched'),
});
type Item = z.input<typeof item>;

/** What the thread's own headers allow. Raw (unfenced) values, for the call and the action log. */
interface Prepared {
  threadId: string;
  sender: string;
  url?: string;
  refusal?: string;
  mailto: string[];
  links: string[];
}

function need(ctx: ToolContext): OutboundContext {
  if (!ctx.outbound)
    throw new MailError('unsupported', 'this server has no outbound client; unsubscribe cannot run');
  return ctx.outbound;
}

async function prepare(ctx: ToolContext, out: OutboundContext, threadId: string): Promise<Prepared> {
  const thread = await ctx.mailbox.getThread(threadId, {
    format: 'metadata',
    metadataHeaders: UNSUBSCRIBE_HEADERS,
    signal: ctx.signal,
  });
  const h = findUnsubscribeHeaders(thread);
  if (!h) {
    return {
      threadId,
      sender: '',
      refusal:
        'no message in the thread has a List-Unsubscribe header; links in the body are never called (list_unsubscribe reports them)',
      mailto: [],
      links: [],
    };
  }
  const { parseAddressList } = await import('../mail/headers.js');
  const from = h.message.headers.find((x) => x.name.toLowerCase() === 'from')?.value ?? '';
  const base = {
    threadId,
    sender: (parseAddressList(from)[0]?.address ?? '').toLowerCase(),
    mailto: h.options.mailto.map((m) => m.address),
    links: [...h.options.https, ...h.options.http, ...h.options.other].filter(
      (u) => !h.oneClick.ok || u !== h.oneClick.url,
    ),
  };
  if (!h.oneClick.ok) return { ...base, refusal: h.oneClick.reason };
  const checked = out.client.oneClick.check(h.oneClick.url);
  if (!checked.ok) return { ...base, refusal: `refused by the SSRF guard: ${checked.reason}` };
  return { ...base, url: checked.url };
}

/** Appends one unsubscribe attempt to the action log (the logged Mailbox only sees mailbox writes). */
export async function logUnsubscribeAttempt(
  out: OutboundContext,
  entry: { account: string; tool: string; prepared: Prepared; item: Item; force: boolean },
): Promise<void> {
  const { prepared: p, item: it } = entry;
  await out.actionLog.append({
    account: entry.account,
    tool: entry.tool,
    op: OP,
    threadIds: [p.threadId],
    detail: {
      sender: p.sender,
      ...(p.url === undefined ? {} : { url: p.url }),
      ...(it.status === undefined ? {} : { status: it.status }),
      ...(it.redirects === undefined ? {} : { redirects: it.redirects }),
      ...(it.reason === undefined ? {} : { reason: it.reason }),
      force: entry.force,
    },
    outcome: it.outcome === 'unsubscribed' ? 'ok' : 'failed',
    ...(it.outcome === 'unsubscribed' ? {} : { error: it.outcome }),
  });
}

function fromOutcome(base: Item, url: string, o: OneClickOutcome): Item {
  const hops = o.redirects > 0 ? { redirects: o.redirects } : {};
  if (o.kind === 'response') {
    const ok = o.status >= 200 && o.status < 300;
    return {
      ...base,
      outcome: ok ? 'unsubscribed' : 'endpoint_error',
      url,
      status: o.status,
      dnsVetted: true,
      ...hops,
    };
  }
  return { ...base, outcome: o.kind, url, reason: o.reason, ...hops };
}

interface RunOptions {
  dryRun: boolean;
  force: boolean;
  budgetMs: number;
  /** Sender and URL keys of earlier items of this call → their threadId. */
  earlier: Map<string, string>;
}

async function runItem(ctx: ToolContext, out: OutboundContext, p: Prepared, opts: RunOptions): Promise<Item> {
  const f = ctx.fence;
  const base: Item = {
    threadId: p.threadId,
    outcome: 'refused',
    ...(p.sender === '' ? {} : { sender: f.wrap(p.sender) }),
    ...(p.mailto.length > 0 ? { mailto: p.mailto.map((m) => f.wrap(m)) } : {}),
    // As the request each would make (shown-url.ts), so nothing hidden in one is dropped from view.
    ...(p.links.length > 0 ? { links: p.links.map((u) => f.wrap(shownUrl(u).url)) } : {}),
  };
  if (p.url === undefined) return { ...base, reason: p.refusal ?? 'no one-click URL' };
  const url = p.url;
  const keys = [...(p.sender === '' ? [] : [`sender:${p.sender}`]), `url:${url}`];
  const dup = keys.map((k) => opts.earlier.get(k)).find((t) => t !== undefined);
  if (dup !== undefined) return { ...base, outcome: 'duplicate', duplicateOf: dup };
  // A sender counts as done for this call only once a request reached its endpoint (or, in a
  // dry run, once one would be made): a failed first attempt leaves the next thread free to try.
  const done = (): void => {
    for (const k of keys) opts.earlier.set(k, p.threadId);
  };
  const account = ctx.mailbox.account;
  const already = (previous: SentRecord): Item => {
    const { at, threadId, status } = previous;
    return {
      ...base,
      outcome: 'already_requested',
      url: f.wrap(url),
      previous: { at, threadId, ...(status === undefined ? {} : { status }) },
    };
  };
  const previous = await out.client.sent.find(account, p.sender, url);
  if (previous && !opts.force) return already(previous);
  if (opts.dryRun) {
    done();
    return { ...base, outcome: 'would_call', wouldCall: f.wrap(url), dnsVetted: false };
  }

  // RFC 8058 §3.2 consent: both tool handlers ask the human (MAILWARDEN_CONFIRM) before this.
  const release = await out.client.sent.claim(account, p.sender, url);
  if (!release) {
    return {
      ...base,
      outcome: 'already_requested',
      url: f.wrap(url),
      reason: 'a request to this sender is under way',
    };
  }
  try {
    // Another call (on another replica, with a shared ledger) may have finished one since the look
    // above: with the claim held, the ledger's answer is final.
    const since = opts.force ? undefined : await out.client.sent.find(account, p.sender, url);
    if (since) return already(since);
    const outcome = await out.client.oneClick.post(url, { signal: ctx.signal, budgetMs: opts.budgetMs });
    if (outcome.reached) {
      done();
      const status = outcome.kind === 'response' ? { status: outcome.status } : {};
      const at = new Date(ctx.clock.now()).toISOString();
      // The request was made either way: a ledger that cannot take it is told on stderr, and the
      // answer (and the action log) still say what happened.
      await out.client.sent
        .record(account, { at, threadId: p.threadId, sender: p.sender, url, ...status })
        .catch((e: unknown) =>
          ctx.log.warn('the unsubscribe ledger did not take a request that was made', {
            account,
            error: e instanceof Error ? e.message : String(e),
          }),
        );
    }
    return fromOutcome(base, f.wrap(url), outcome);
  } finally {
    await release();
  }
}

const logged = (i: Item): boolean => !['already_requested', 'duplicate', 'would_call'].includes(i.outcome);

const DESCRIPTION =
  "RFC 8058 one-click only: one HTTPS POST to the List-Unsubscribe URI of the thread's newest message carrying one, if that message also has List-Unsubscribe-Post. Takes thread ids, never a URL; mailto and other links are only reported. Every hop passes an SSRF guard (public addresses only, pinned connection, 3 redirects, 10 s). One request per sender per server run, or per shared state database (force: true repeats). dryRun: every check, no network.";

export const unsubscribe = defineTool({
  name: 'unsubscribe',
  title: 'Unsubscribe (one-click)',
  tier: 'manage',
  access: 'external',
  description: `Unsubscribe from the sender of one thread. ${DESCRIPTION}`,
  input: z.strictObject({
    threadId: z.string().min(1).max(256),
    dryRun: z.boolean().default(false),
    force: z.boolean().default(false).describe('repeat a request made earlier'),
  }),
  output: item,
  async handle(ctx, args) {
    const out = need(ctx);
    if (!args.dryRun) await out.actionLog.ensureWritable();
    const p = await prepare(ctx, out, args.threadId);
    const opts = {
      dryRun: args.dryRun,
      force: args.force,
      budgetMs: out.client.oneClick.budgetMs,
      earlier: new Map<string, string>(),
    };
    if (!args.dryRun) {
      // RFC 8058 §3.2 wants the user's consent: ask the human (MAILWARDEN_CONFIRM) once the
      // checks say a request would be made, before any network activity.
      const preview = await runItem(ctx, out, p, { ...opts, dryRun: true, earlier: new Map() });
      if (preview.outcome === 'would_call') {
        await confirmChange(ctx, {
          message: `Unsubscribe from ${p.sender || 'this sender'} (one-click)?`,
          details: { 'One-click URL': p.url ?? '' },
        });
      }
    }
    const it = await runItem(ctx, out, p, opts);
    if (!args.dryRun && logged(it))
      await logUnsubscribeAttempt(out, {
        account: ctx.mailbox.account,
        tool: 'unsubscribe',
        prepared: p,
        item: it,
        force: args.force,
      });
    return it;
  },
});

export const bulkUnsubscribe = defineTool({
  name: 'bulk_unsubscribe',
  title: 'Unsubscribe from several senders (one-click)',
  tier: 'manage',
  access: 'external',
  description: `Unsubscribe from the senders of up to ${BULK_MAX} threads, one after another, within ${BULK_BUDGET_MS / 1000} s (not reached: skippedOutOfTime); a sender or URL already called is a duplicate, not called again. Each item as unsubscribe: RFC 8058 one-click only, the same guards, one request per sender per run or shared state (force: true repeats); dryRun: no network.`,
  input: z.strictObject({
    threadIds: z.array(z.string().min(1).max(256)).min(1).max(BULK_MAX),
    dryRun: z.boolean().default(false),
    force: z.boolean().default(false).describe('repeat requests made earlier'),
  }),
  output: z.object({
    results: z.array(item),
    skippedOutOfTime: z.array(z.string()),
    called: z.number().describe('items that made a request (or tried to)'),
  }),
  async handle(ctx, args) {
    const out = need(ctx);
    if (!args.dryRun) await out.actionLog.ensureWritable();
    // One question for the whole batch, before any network activity (MAILWARDEN_CONFIRM).
    if (!args.dryRun)
      await confirmChange(ctx, {
        message: `Unsubscribe (one-click) from the senders of ${args.threadIds.length} thread(s) in ${ctx.mailbox.account}?`,
        details: { Threads: args.threadIds.join(', ') },
      });
    const deadline = ctx.clock.now() + BULK_BUDGET_MS;
    const earlier = new Map<string, string>();
    const results: Item[] = [];
    const skippedOutOfTime: string[] = [];
    let called = 0;
    for (const [i, threadId] of args.threadIds.entries()) {
      const left = deadline - ctx.clock.now();
      if (left <= 0 || ctx.signal.aborted) {
        skippedOutOfTime.push(...args.threadIds.slice(i));
        break;
      }
      let p: Prepared;
      try {
        p = await prepare(ctx, out, threadId);
      } catch (e) {
        if (!isMailError(e)) throw e;
        results.push({ threadId, outcome: 'failed', reason: `${e.code}: ${e.message}` });
        continue;
      }
      const budgetMs = Math.min(out.client.oneClick.budgetMs, left);
      const it = await runItem(ctx, out, p, { dryRun: args.dryRun, force: args.force, budgetMs, earlier });
      if (it.url !== undefined && it.outcome !== 'already_requested') called++;
      if (!args.dryRun && logged(it))
        await logUnsubscribeAttempt(out, {
          account: ctx.mailbox.account,
          tool: 'bulk_unsubscribe',
          prepared: p,
          item: it,
          force: args.force,
        });
      results.push(it);
      await ctx.progress(i + 1, args.threadIds.length);
    }
    return { results, skippedOutOfTime, called };
  },
});
