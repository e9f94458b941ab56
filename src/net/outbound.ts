/**
 * The outbound seam: the one way a tool reaches a host that is not the mail provider. The
 * runtime builds one per process (src/cli/runtime.ts); tests build one with an injected
 * resolver and transport, so nothing leaves the machine.
 */
import { MailError } from '../mail/errors.js';
import { memoryLedger } from './ledger.js';
import type { SentLedger } from './ledger.js';
import { OneClickClient } from './one-click.js';
import { dnsResolver } from './resolver.js';
import type { Resolver } from './resolver.js';
import { nodeHttpsTransport } from './transport.js';
import type { HttpsTransport } from './transport.js';

export interface Outbound {
  /** RFC 8058 one-click POSTs behind the SSRF guard. */
  readonly oneClick: OneClickClient;
  /**
   * Requests already made (one per sender of an account unless forced): this server run's, or
   * every replica's when the state is shared (src/net/ledger.ts).
   */
  readonly sent: SentLedger;
  /** `offline`: nothing is ever contacted, not even DNS (sandbox and demo mailboxes). */
  readonly mode: 'live' | 'offline';
}

export function createOutbound(options: {
  resolver: Resolver;
  transport: HttpsTransport;
  budgetMs?: number;
  mode?: Outbound['mode'];
  /** Where requests made are remembered; default: this process's memory. */
  ledger?: SentLedger;
}): Outbound {
  return {
    oneClick: new OneClickClient({
      resolver: options.resolver,
      transport: options.transport,
      ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
    }),
    sent: options.ledger ?? memoryLedger(),
    mode: options.mode ?? 'live',
  };
}

/** The real thing: the DNS (A and AAAA) and node:https pinned to the vetted address. */
export function liveOutbound(ledger?: SentLedger): Outbound {
  return createOutbound({
    resolver: dnsResolver(),
    transport: nodeHttpsTransport(),
    ...(ledger === undefined ? {} : { ledger }),
  });
}

/**
 * For mailboxes whose mail is fictional (the demo and the sandbox): every request is refused
 * before DNS, so a made-up sender's domain is never even looked up. dryRun still works.
 */
export function offlineOutbound(reason: string): Outbound {
  const refuse = (): Promise<never> => Promise.reject(new MailError('unsupported', reason));
  return createOutbound({ resolver: { resolve: refuse }, transport: { send: refuse }, mode: 'offline' });
}
