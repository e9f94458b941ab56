/**
 * `hang`: the request is read and never answered (the socket stays open until the client gives
 * up); with `apply: true` the request is carried out first, as when Gmail applied a write whose
 * answer never reached the client. `delay` answers normally after `delayMs`.
 */
export type FaultKind = 'http500' | 'http503' | '429' | 'reset' | 'delay' | 'hang';

export interface FaultRule {
  /** Method name as in stats(), e.g. 'messages.batchModify' or 'oauth.token'. */
  method?: string;
  /** Tested against the request path (without the query string). */
  path?: RegExp;
  kind: FaultKind;
  /** How many matching requests this rule fails; default unlimited. */
  times?: number;
  /** Let this many matching requests pass before the rule starts failing them. */
  skip?: number;
  retryAfterSeconds?: number;
  delayMs?: number;
  /** hang: carry the request out before hanging. */
  apply?: boolean;
}

export interface Fault {
  kind: FaultKind;
  retryAfterSeconds?: number;
  delayMs?: number;
  apply?: boolean;
}

interface LiveRule {
  rule: FaultRule;
  skip: number;
  times: number;
}

/** mulberry32: small, seedable, good enough to make fault runs reproducible. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pathMatches(pattern: RegExp | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  // A /g or /y pattern keeps lastIndex between calls and would match every other request.
  pattern.lastIndex = 0;
  return pattern.test(path);
}

/**
 * Decides, per request, whether to answer with a failure instead of the real response. Scripted
 * rules go first, in order; the first rule that matches a request owns it (its skip count lets
 * it pass, else it fails it). Then the random rate, if set.
 */
export class FaultInjector {
  private rules: LiveRule[] = [];
  private random: { probability: number; kinds: FaultKind[]; next: () => number } | undefined;

  script(rules: FaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, skip: rule.skip ?? 0, times: rule.times ?? Infinity }));
  }

  rate(probability: number, kinds: FaultKind[], seed = 1): void {
    if (!(probability >= 0 && probability <= 1)) throw new Error('fault rate: probability must be in [0, 1]');
    if (kinds.length === 0) throw new Error('fault rate: at least one kind');
    this.random = { probability, kinds: [...kinds], next: mulberry32(seed) };
  }

  /** Scripted faults not yet taken (finite rules only): lets a test wait until one has fired. */
  pending(): number {
    return this.rules.reduce((n, r) => n + (Number.isFinite(r.times) ? r.times : 0), 0);
  }

  clear(): void {
    this.rules = [];
    this.random = undefined;
  }

  /** @internal The fault for this request, consuming it from the script. */
  take(method: string, path: string): Fault | undefined {
    const live = this.rules.find(
      ({ rule, times }) =>
        times > 0 && (rule.method === undefined || rule.method === method) && pathMatches(rule.path, path),
    );
    if (live) {
      if (live.skip > 0) {
        live.skip -= 1;
        return undefined;
      }
      live.times -= 1;
      const { kind, retryAfterSeconds, delayMs, apply } = live.rule;
      return {
        kind,
        ...(apply === undefined ? {} : { apply }),
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        ...(delayMs === undefined ? {} : { delayMs }),
      };
    }
    const r = this.random;
    if (r && r.next() < r.probability) {
      return { kind: r.kinds[Math.floor(r.next() * r.kinds.length)] ?? 'http503' };
    }
    return undefined;
  }
}
