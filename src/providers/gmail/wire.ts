import type { Tier } from '../../policy/tiers.js';
import type { Usage } from '../mailbox.js';
import { checkEgress } from './egress.js';
import type { EgressRequest } from './egress.js';
import type { Endpoint } from './endpoints.js';
import type { Transport } from './transport.js';

/** Per-request deadlines (ms): reads (and the token refresh) and writes. */
export interface Deadlines {
  readMs: number;
  writeMs: number;
}

/**
 * Node's fetch waits up to 300 s for response headers (docs/facts.md): not a deadline anyone would
 * choose. A Gmail read answers in well under a second; 20 s is generous. A batchModify of 1,000
 * ids takes a few seconds; 30 s leaves room without leaving a tool call hanging.
 */
export const DEFAULT_DEADLINES: Deadlines = { readMs: 20_000, writeMs: 30_000 };

/** A request that got no (complete) answer within its deadline. */
export class DeadlineExceeded extends Error {
  constructor(
    readonly endpoint: string,
    readonly ms: number,
    readonly write: boolean,
  ) {
    super(`${endpoint}: no answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export interface WireRequest extends EgressRequest {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * The only holder of the transport. Every HTTP attempt — Gmail calls, retries, token refreshes —
 * goes through `send`, which runs the egress checkpoint on the exact URL, method and body it is
 * about to hand over, then charges the attempt to the usage counters.
 */
export class Wire {
  private readonly counters: Usage = { requests: 0, quotaUnits: 0 };

  constructor(
    private readonly transport: Transport,
    private readonly tiers: ReadonlySet<Tier>,
    private readonly deadlines: Deadlines = DEFAULT_DEADLINES,
  ) {}

  /** The deadline of one request to `endpoint`: GET (and the token refresh) is a read. */
  deadlineOf(endpoint: Endpoint): { ms: number; write: boolean } {
    // A batch carries reads only (egress.ts): it is a read.
    const write = endpoint.method !== 'GET' && endpoint.name !== 'oauth.token' && endpoint.name !== 'batch';
    return { ms: write ? this.deadlines.writeMs : this.deadlines.readMs, write };
  }

  /** The checkpoint alone: callers run it before fetching a token for the request. */
  check(req: EgressRequest): Endpoint {
    return checkEgress(req, this.tiers);
  }

  send(req: WireRequest): Promise<Response> {
    let endpoint: Endpoint;
    try {
      const contentType = req.headers?.['content-type'];
      endpoint = this.check(contentType === undefined ? req : { ...req, contentType });
    } catch (e) {
      return Promise.reject(e as Error);
    }
    // Counted when handed over, so a request lost to a reset still shows in the cost (Google
    // may well have charged it).
    this.counters.requests += 1;
    this.counters.quotaUnits += endpoint.units;
    const init: RequestInit = {
      method: req.method,
      // Google's APIs do not redirect; following one would let a 3xx carry the request (and the
      // bearer) to a URL the checkpoint never saw.
      redirect: 'error',
    };
    if (req.headers !== undefined) init.headers = req.headers;
    if (req.body !== undefined) init.body = req.body;
    // The deadline covers the whole answer, body included (see buffered()). Its timer is cleared
    // when the answer is in: AbortSignal.timeout's could not be, and left one pending timer and one
    // signal derived with AbortSignal.any per request for the whole deadline, which outlived
    // young-generation collections and were promoted, only to die there (docs/benchmarks.md,
    // "Gmail write path").
    const deadline = this.deadlineOf(endpoint);
    const own = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      own.abort(new DOMException(`no answer within ${deadline.ms} ms`, 'TimeoutError'));
    }, deadline.ms);
    timer.unref();
    const caller = req.signal;
    const onCallerAbort = (): void => own.abort(caller?.reason);
    if (caller !== undefined) {
      if (caller.aborted) onCallerAbort();
      else caller.addEventListener('abort', onCallerAbort, { once: true });
    }
    init.signal = own.signal;
    const expired = (e: unknown): unknown =>
      timedOut && caller?.aborted !== true
        ? new DeadlineExceeded(endpoint.name, deadline.ms, deadline.write)
        : e;
    return this.transport(req.url, init)
      .then(
        (res) => buffered(res, own.signal).catch((e: unknown) => Promise.reject(expired(e) as Error)),
        (e: unknown) => Promise.reject(expired(e) as Error),
      )
      .finally(() => {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onCallerAbort);
      });
  }

  usage(): Usage {
    return { ...this.counters };
  }
}

/** Statuses whose Response may not carry a body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The answer read to the end inside the deadline: a body that stalls after the headers is as
 * unanswered as a request without headers, and callers then read it without any wait.
 */
async function buffered(res: Response, signal: AbortSignal): Promise<Response> {
  // fetch errors its body stream on abort; an injected transport may not, so race it too.
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      void res.body?.cancel().catch(() => undefined);
      reject(signal.reason as Error);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const bytes = await Promise.race([res.arrayBuffer(), aborted]).finally(() =>
    signal.removeEventListener('abort', onAbort),
  );
  return new Response(NULL_BODY.has(res.status) ? null : bytes, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}
