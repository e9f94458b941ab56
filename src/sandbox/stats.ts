export interface SandboxStats {
  requests: number;
  quotaUnits: number;
  byMethod: Record<string, { requests: number; quotaUnits: number }>;
}

/** Request and quota counters, so tests and benchmarks can assert what a piece of work cost. */
export class StatsCounter {
  private stats: SandboxStats = { requests: 0, quotaUnits: 0, byMethod: {} };

  private entry(method: string): { requests: number; quotaUnits: number } {
    let e = this.stats.byMethod[method];
    if (!e) {
      e = { requests: 0, quotaUnits: 0 };
      this.stats.byMethod[method] = e;
    }
    return e;
  }

  request(method: string): void {
    this.stats.requests += 1;
    this.entry(method).requests += 1;
  }

  charge(method: string, units: number): void {
    this.stats.quotaUnits += units;
    this.entry(method).quotaUnits += units;
  }

  snapshot(): SandboxStats {
    return structuredClone(this.stats);
  }

  reset(): void {
    this.stats = { requests: 0, quotaUnits: 0, byMethod: {} };
  }
}
