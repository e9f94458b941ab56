/**
 * Which senders and URLs already had a one-click request during this server's life. One
 * request per sender is enough (RFC 8058 §3.2 makes the POST itself the unsubscribe); asking
 * again needs `force`. Only requests that reached an endpoint (some hop answered) are kept.
 * In memory on purpose: docs/architecture.md, promise 2 keeps no local state beyond the action log.
 */
export interface SentRecord {
  /** ISO 8601. */
  at: string;
  threadId: string;
  /** Lower-cased From address of the message whose header was used. */
  sender: string;
  url: string;
  /** The last hop's status, when one answered. */
  status?: number;
}

export class SentLedger {
  private readonly bySender = new Map<string, SentRecord>();
  private readonly byUrl = new Map<string, SentRecord>();
  private readonly inFlight = new Set<string>();

  /** The earlier request for this sender or this URL, if any. */
  find(sender: string, url: string): SentRecord | undefined {
    return (sender === '' ? undefined : this.bySender.get(sender)) ?? this.byUrl.get(url);
  }

  /**
   * Marks a request to this sender and URL as under way, so two calls running at once cannot
   * both make it. Returns the release function, or undefined when one is already under way.
   */
  claim(sender: string, url: string): (() => void) | undefined {
    const keys = [`url:${url}`, ...(sender === '' ? [] : [`sender:${sender}`])];
    if (keys.some((k) => this.inFlight.has(k))) return undefined;
    for (const k of keys) this.inFlight.add(k);
    return () => {
      for (const k of keys) this.inFlight.delete(k);
    };
  }

  record(r: SentRecord): void {
    if (r.sender !== '') this.bySender.set(r.sender, r);
    this.byUrl.set(r.url, r);
  }
}
