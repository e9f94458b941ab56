/**
 * DNS for the SSRF guard. The guard asks for A and AAAA records itself and hands the transport
 * one vetted address; nothing else resolves the name again (no second lookup to rebind).
 */
import { MailError } from '../mail/errors.js';

export interface ResolvedAddresses {
  v4: string[];
  v6: string[];
}

export interface Resolver {
  /** Every A and AAAA answer for a name. Empty lists when the name has none of that type. */
  resolve(hostname: string, signal: AbortSignal): Promise<ResolvedAddresses>;
}

/** Codes c-ares gives for "no record of this type" / "no such name": answers, not failures. */
const NO_ANSWER = new Set(['ENODATA', 'ENOTFOUND', 'NODATA', 'NOTFOUND']);

function code(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : '';
}

/**
 * The DNS itself (c-ares through node:dns Resolver), not getaddrinfo: /etc/hosts and local
 * search domains are not consulted, so a name means what it means on the internet. A and AAAA
 * are asked in parallel; a failure other than "no such record" fails the whole lookup rather
 * than judging half an answer.
 */
export function dnsResolver(options: { timeoutMs?: number; tries?: number } = {}): Resolver {
  return {
    async resolve(hostname, signal) {
      // Loaded on first use, so serving never pays for it until an unsubscribe happens.
      const { promises } = await import('node:dns');
      const r = new promises.Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
      const cancel = (): void => r.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      const ask = async (rr: 'A' | 'AAAA'): Promise<string[]> => {
        try {
          return rr === 'A' ? await r.resolve4(hostname) : await r.resolve6(hostname);
        } catch (e) {
          if (NO_ANSWER.has(code(e))) return [];
          if (signal.aborted)
            throw new MailError('network_error', 'the unsubscribe time budget ran out during DNS');
          throw new MailError('network_error', `DNS lookup failed (${code(e) || 'error'})`, { cause: e });
        }
      };
      try {
        const [v4, v6] = await Promise.all([ask('A'), ask('AAAA')]);
        return { v4, v6 };
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },
  };
}
