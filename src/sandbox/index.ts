import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../mail/clock.js';
import { OffsetClock } from '../mail/clock.js';
import { FaultInjector } from './faults.js';
import { ConsentServer } from './consent.js';
import { createRequestListener } from './http.js';
import { UserMailbox } from './model.js';
import { OAuthServer } from './oauth.js';
import { QuotaMeter } from './quota.js';
import { useStaleMessageIndex } from './search.js';
import type { SeedUser } from './seed.js';
import type { SandboxStats } from './stats.js';
import { StatsCounter } from './stats.js';
import type { SandboxMailboxView } from './view.js';
import { viewOf } from './view.js';
import { arrivalHeaders } from './corpus/auth.js';
import type { Arrival, AuthSpec } from './corpus/auth.js';
import { foldHeader } from './corpus/mime.js';
import { Rng } from './corpus/rng.js';
import { parseMessage } from './message.js';
import { parseAddressList } from '../mail/headers.js';
import { headerValue } from '../mail/headers.js';

export type { Arrival, AuthSpec } from './corpus/auth.js';

/** `raw` with the headers its arrival adds on top, in its own line ends. */
function withArrivalHeaders(
  raw: string,
  via: Arrival,
  owner: string,
  at: number,
  n: number,
  auth: AuthSpec | undefined,
): string {
  if (via === 'import') return raw;
  const { headers } = parseMessage(raw, at);
  const envelope = headerValue(headers, 'Return-Path') ?? headerValue(headers, 'From') ?? '';
  const from = parseAddressList(envelope)[0]?.address ?? 'unknown@unknown.invalid';
  const eol = raw.includes('\r\n') ? '\r\n' : '\n';
  const added = arrivalHeaders(via, owner, at, from, new Rng(`sandbox-deliver/${n}`), auth);
  return `${added.map(([k, v]) => foldHeader(k, v).replace(/\r?\n/g, eol)).join(eol)}${eol}${raw}`;
}

export type { FaultKind, FaultRule } from './faults.js';
export { FaultInjector } from './faults.js';
export type { SandboxStats } from './stats.js';
export type { SandboxMailboxView } from './view.js';
export type { SeedLabel, SeedMessage, SeedThread, SeedUser } from './seed.js';

export interface SandboxOptions {
  users?: SeedUser[];
  clock?: Clock;
  /** Real-time delay before answering every request. */
  latencyMs?: number;
  /** Per user; Gmail documents 15,000 units per user per minute. */
  quotaUnitsPerMinute?: number;
  staleThreadIndex?: boolean;
  /**
   * messages.list answers read-state predicates in `q` from the stale per-thread state (as
   * threads.list does under staleThreadIndex) while its labelIds filter stays exact. Off by
   * default: Gmail's messages.list was measured exact (docs/facts.md); this is for cross-check tests.
   */
  staleMessageIndex?: boolean;
  historyRetentionMs?: number;
  host?: string;
  port?: number;
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * An in-process Gmail REST simulator on real loopback HTTP. It serves Google's own paths
 * (`/gmail/v1/users/{userId}/…`, `/token`, and the consent page at `/o/oauth2/v2/auth`, which
 * Google serves on accounts.google.com), so a Gmail client only swaps the origin.
 */
export class Sandbox {
  readonly clock: Clock;
  readonly faults = new FaultInjector();
  readonly oauthClient: { clientId: string; clientSecret: string };
  private readonly oauth: OAuthServer;
  private readonly consent: ConsentServer;
  private readonly statsCounter = new StatsCounter();
  private readonly users = new Map<string, UserMailbox>();
  private readonly threadKeys = new Map<string, Map<string, string>>();
  private latencyMs: number;
  private staleThreadIndex: boolean;
  private staleMessageIndex: boolean;
  private server: Server | undefined;
  private origin = '';
  /** Deliveries so far: seeds the trace ids each one gets. */
  private deliveries = 0;

  private constructor(options: SandboxOptions) {
    this.clock = options.clock ?? new OffsetClock();
    this.latencyMs = options.latencyMs ?? 0;
    this.staleThreadIndex = options.staleThreadIndex ?? false;
    this.staleMessageIndex = options.staleMessageIndex ?? false;
    this.oauth = new OAuthServer(this.clock, (email) => this.users.has(email));
    this.oauthClient = { ...this.oauth.client };
    this.consent = new ConsentServer(this.oauth, this.clock, () => [...this.users.keys()]);
    for (const user of options.users ?? []) this.seed(user, options.historyRetentionMs ?? WEEK_MS);
  }

  static async start(options: SandboxOptions = {}): Promise<Sandbox> {
    const sandbox = new Sandbox(options);
    const quota = new QuotaMeter(sandbox.clock, options.quotaUnitsPerMinute ?? 15_000);
    const server = createServer(
      createRequestListener({
        clock: sandbox.clock,
        oauth: sandbox.oauth,
        consent: sandbox.consent,
        quota,
        faults: sandbox.faults,
        stats: sandbox.statsCounter,
        mailboxFor: (email) => sandbox.users.get(email),
        latencyMs: () => sandbox.latencyMs,
        staleThreadIndex: () => sandbox.staleThreadIndex,
      }),
    );
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    sandbox.server = server;
    sandbox.origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return sandbox;
  }

  get url(): string {
    return this.origin;
  }

  private seed(user: SeedUser, historyRetentionMs: number): void {
    const email = user.email.toLowerCase();
    if (this.users.has(email)) throw new Error(`sandbox: user ${user.email} seeded twice`);
    const mailbox = new UserMailbox(email, {
      clock: this.clock,
      historyRetentionMs,
      // Either stale index remembers a thread as unread once it was, so either keeps the mark.
      staleThreadIndex: () => this.staleThreadIndex || this.staleMessageIndex,
    });
    useStaleMessageIndex(mailbox, () => this.staleMessageIndex);
    for (const label of user.userLabels) mailbox.seedLabel({ ...label, type: 'user' });
    const keys = new Map<string, string>();
    for (const thread of user.threads) {
      if (keys.has(thread.key)) throw new Error(`sandbox: thread key ${thread.key} used twice for ${email}`);
      let threadId: string | undefined;
      for (const m of thread.messages) {
        const stored = mailbox.addMessage(m.raw, m.labelIds, m.internalDate, {
          placement: threadId === undefined ? 'new-thread' : { threadId },
          record: false,
        });
        threadId = stored.threadId;
      }
      if (threadId === undefined) throw new Error(`sandbox: thread ${thread.key} has no messages`);
      if (thread.staleIndexUnread) mailbox.thread(threadId).staleUnread = true;
      keys.set(thread.key, threadId);
    }
    mailbox.history.seal();
    this.users.set(email, mailbox);
    this.threadKeys.set(email, keys);
  }

  private mailboxOf(email: string): UserMailbox {
    const mailbox = this.users.get(email.toLowerCase());
    if (!mailbox) throw new Error(`sandbox: no seeded user ${email}`);
    return mailbox;
  }

  refreshTokenFor(email: string): string {
    return this.oauth.refreshTokenFor(email);
  }

  issueRefreshToken(email: string, scopes: string[]): string {
    return this.oauth.issueRefreshToken(email, scopes);
  }

  revokeRefreshToken(token: string): void {
    this.oauth.revoke(token);
  }

  threadIdForKey(email: string, key: string): string {
    const id = this.threadKeys.get(email.toLowerCase())?.get(key);
    if (id === undefined) throw new Error(`sandbox: no thread with key ${key} for ${email}`);
    return id;
  }

  /**
   * New mail arriving now: threaded by In-Reply-To/References, run through filters, recorded in
   * history. Like Gmail, mail received over SMTP (the default) gets Gmail's trace and its own
   * Authentication-Results on top (verdicts from `auth`, else SPF "none" and nothing else: the
   * sandbox checks nothing); mail fetched over POP gets the fetcher's lines and no report;
   * imported mail gets nothing.
   */
  deliver(
    email: string,
    raw: string,
    labelIds: string[],
    options: { via?: Arrival; auth?: AuthSpec } = {},
  ): { id: string; threadId: string } {
    const now = this.clock.now();
    const arrived = withArrivalHeaders(
      raw,
      options.via ?? 'smtp',
      email,
      now,
      this.deliveries++,
      options.auth,
    );
    const msg = this.mailboxOf(email).addMessage(arrived, labelIds, now, {
      placement: 'reply',
      record: true,
      applyFilters: true,
    });
    return { id: msg.id, threadId: msg.threadId };
  }

  mailbox(email: string): SandboxMailboxView {
    return viewOf(this.mailboxOf(email));
  }

  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  setStaleThreadIndex(on: boolean): void {
    this.staleThreadIndex = on;
  }

  setStaleMessageIndex(on: boolean): void {
    this.staleMessageIndex = on;
  }

  stats(): SandboxStats {
    return this.statsCounter.snapshot();
  }

  resetStats(): void {
    this.statsCounter.reset();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
