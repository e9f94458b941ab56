import type { Tier } from '../../policy/tiers.js';
import type { Usage } from '../mailbox.js';
import { checkEgress } from './egress.js';
import type { EgressRequest } from './egress.js';
import type { Endpoint } from './endpoints.js';
import type { Transport } from './transport.js';

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
  ) {}

  /** The checkpoint alone: callers run it before fetching a token for the request. */
  check(req: EgressRequest): Endpoint {
    return checkEgress(req, this.tiers);
  }

  send(req: WireRequest): Promise<Response> {
    let endpoint: Endpoint;
    try {
      endpoint = this.check(req);
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
    if (req.signal !== undefined) init.signal = req.signal;
    return this.transport(req.url, init);
  }

  usage(): Usage {
    return { ...this.counters };
  }
}
