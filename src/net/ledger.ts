/**
 * Which senders and URLs of an account already had a one-click request. One request per sender
 * is enough (RFC 8058 §3.2 makes the POST itself the unsubscribe); asking again needs `force`.
 * Only requests that reached an endpoint (some hop answered) are kept, and only what the action
 * log already says of them: sender address, URL, time, thread id and status — no mail content.
 *
 * Two homes: this process's memory (memoryLedger, the files backend: one server run), or the
 * shared state database (src/store/pg/sent-ledger.ts, MAILWARDEN_STATE=postgres://…), where every
 * replica sees the others' requests and a claim holds across them.
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

export interface SentLedger {
  /** The earlier request of this account to this sender or this URL, if any: the latest to the sender, else
   * the latest to the URL. */
  find(account: string, sender: string, url: string): Promise<SentRecord | undefined>;
  /**
   * Marks a request of this account to this sender and URL as under way, so two calls running at
   * once cannot both make it. Resolves with the release function, or undefined when one is
   * already under way. Whoever claims looks again (find) before making the request.
   */
  claim(account: string, sender: string, url: string): Promise<(() => Promise<void>) | undefined>;
  record(account: string, r: SentRecord): Promise<void>;
}

/** The keys a request is known by: its URL, and its sender when there is one. */
export function ledgerKeys(sender: string, url: string): string[] {
  return [`url:${url}`, ...(sender === '' ? [] : [`sender:${sender}`])];
}

/** In this process's memory: one server run. */
export function memoryLedger(): SentLedger {
  const bySender = new Map<string, SentRecord>();
  const byUrl = new Map<string, SentRecord>();
  const inFlight = new Set<string>();
  const k = (account: string, key: string): string => `${account}\n${key}`;
  return {
    find(account, sender, url) {
      return Promise.resolve(
        (sender === '' ? undefined : bySender.get(k(account, sender))) ?? byUrl.get(k(account, url)),
      );
    },
    claim(account, sender, url) {
      const keys = ledgerKeys(sender, url).map((key) => k(account, key));
      if (keys.some((key) => inFlight.has(key))) return Promise.resolve(undefined);
      for (const key of keys) inFlight.add(key);
      return Promise.resolve(() => {
        for (const key of keys) inFlight.delete(key);
        return Promise.resolve();
      });
    },
    record(account, r) {
      if (r.sender !== '') bySender.set(k(account, r.sender), r);
      byUrl.set(k(account, r.url), r);
      return Promise.resolve();
    },
  };
}
