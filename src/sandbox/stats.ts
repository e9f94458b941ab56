export interface MethodStats {
  /** HTTP requests that were this method (a batch is one request of method `batch`). */
  requests: number;
  /** Gmail API calls of this method, each call inside a batch counted on its own. */
  apiCalls: number;
  quotaUnits: number;
}

export interface SandboxStats {
  /** HTTP requests received, a batch counted once. */
  requests: number;
  /** Gmail API calls served: direct requests plus every call inside a batch. */
  apiCalls: number;
  quotaUnits: number;
  byMethod: Record<string, MethodStats>;
}

const empty = (): SandboxStats => ({ requests: 0, apiCalls: 0, quotaUnits: 0, byMethod: {} });

/** Request, call and quota counters, so tests and benchmarks can assert what a piece of work cost. */
export class StatsCounter {
  private stats: SandboxStats = empty();

  private entry(method: string): MethodStats {
    let e = this.stats.byMethod[method];
    if (!e) {
      e = { requests: 0, apiCalls: 0, quotaUnits: 0 };
      this.stats.byMethod[method] = e;
    }
    return e;
  }

  /** One HTTP request; `apiCall`: it is itself one Gmail API call (not a batch, not OAuth). */
  request(method: string, apiCall: boolean): void {
    this.stats.requests += 1;
    this.entry(method).requests += 1;
    if (apiCall) this.call(method);
  }

  /** One Gmail API call carried inside a batch request. */
  call(method: string): void {
    this.stats.apiCalls += 1;
    this.entry(method).apiCalls += 1;
  }

  charge(method: string, units: number): void {
    this.stats.quotaUnits += units;
    this.entry(method).quotaUnits += units;
  }

  snapshot(): SandboxStats {
    return structuredClone(this.stats);
  }

  reset(): void {
    this.stats = empty();
  }
}
