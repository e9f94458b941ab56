import { headerValue } from '../mail/headers.js';
import { parseRawMessage } from '../mail/mime.js';
import { cleanMessageId, threadIdFor, threadRoot } from '../providers/imap/ids.js';
import type { ImapSettings } from '../providers/imap/settings.js';
import { rawBytes } from './message.js';
import { writeAccounts } from '../store/accounts.js';
import type { AccountEntry } from '../store/accounts.js';
import type { Env } from '../store/config.js';
import { writeImapPassword } from '../store/imap-secret.js';
import { tempDirUntilExit } from '../store/temp-dir.js';
import { DEMO_ADDRESS, demoCorpus } from './corpus/index.js';
import type { SeedUser } from './seed.js';
import { seedDovecot, startBridgeFront, startDovecot } from './imap/index.js';
import type { BridgeFront, BridgeOptions, DovecotServer, SizeDelay } from './imap/index.js';

/*
 * A throwaway real IMAP account for the demo, the tests and the benchmarks: a private Dovecot
 * (src/sandbox/imap) seeded with the demo corpus, and a config dir that registers it the way
 * `mailwarden accounts add --imap` would — pinned certificate, encrypted password, the trusted
 * authserv-id of the corpus's receiving server.
 */

export type ImapProfile = 'full' | 'bridge';

export interface ImapDemoOptions {
  profile: ImapProfile;
  /** Bridge-like profile: milliseconds the front end holds each command (Bridge is slow). */
  delayMs?: number;
  /** Bridge-like profile: All Mail shown (default) or hidden, IDLE on (default) or off. */
  bridge?: BridgeOptions;
  /** Bridge-like profile: extra time for STATUS of an unselected folder and text SEARCH. */
  sizeDelays?: { status?: SizeDelay; search?: SizeDelay };
  /** Account name in accounts.json. */
  account?: string;
  seed?: SeedUser;
  tiers?: string[];
}

export interface ImapDemo {
  server: DovecotServer;
  /**
   * Present for the bridge profile: its front end (bridge-front.ts), which clients reach with
   * STARTTLS and which records every command (`proxy.commands()`).
   */
  proxy?: BridgeFront;
  settings: ImapSettings;
  configDir: string;
  account: string;
  /** Environment a spawned server needs to serve this account (config dir, passphrase). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The passphrase the throwaway config encrypts the password with (not a secret: test data). */
export const IMAP_DEMO_PASSPHRASE = 'mailwarden-imap-demo';

export async function startImapDemo(options: ImapDemoOptions): Promise<ImapDemo> {
  const server = await startDovecot({
    profile: options.profile,
    ...(options.bridge ? { bridge: options.bridge } : {}),
  });
  let proxy: ImapDemo['proxy'];
  const temp = tempDirUntilExit('mailwarden-imap-');
  const configDir = temp.path;
  try {
    await seedDovecot(server, options.seed ?? demoCorpus());
    const base = {
      host: server.host,
      user: server.user,
      pinSha256: server.certSha256,
      pinCertPem: server.certPem,
    };
    let settings: ImapSettings;
    if (options.profile === 'bridge') {
      // Bridge speaks STARTTLS on a plain port (127.0.0.1:1143); the front end speaks as gluon.
      proxy = await startBridgeFront({
        server,
        delayMs: options.delayMs ?? 0,
        ...(options.sizeDelays?.status ? { statusDelay: options.sizeDelays.status } : {}),
        ...(options.sizeDelays?.search ? { searchDelay: options.sizeDelays.search } : {}),
      });
      settings = { ...base, port: proxy.port, security: 'starttls' };
    } else {
      settings = { ...base, port: server.tlsPort, security: 'tls' };
    }
    settings.authservId = 'mx.google.com';
    const account = options.account ?? 'default';
    const env: Record<string, string> = {
      MAILWARDEN_CONFIG_DIR: configDir,
      MAILWARDEN_TOKEN_PASSPHRASE: IMAP_DEMO_PASSPHRASE,
      MAILWARDEN_KEYSTORE: 'off',
    };
    const storeEnv: Env = { ...env };
    const entry: AccountEntry = {
      name: account,
      address: DEMO_ADDRESS,
      provider: 'imap',
      imap: settings,
      tiers: (options.tiers ?? ['read', 'manage']) as AccountEntry['tiers'],
      default: true,
      added: new Date().toISOString(),
    };
    await writeAccounts(storeEnv, [entry]);
    await writeImapPassword(storeEnv, account, server.password);
    return {
      server,
      ...(proxy ? { proxy } : {}),
      settings,
      configDir,
      account,
      env,
      async close() {
        await proxy?.stop();
        await server.stop();
        temp.remove();
      },
    };
  } catch (e) {
    await proxy?.stop();
    await server.stop();
    temp.remove();
    throw e;
  }
}

/** The IMAP thread id of a demo-corpus thread: the root of its first message (providers/imap/ids). */
export function imapThreadIdForKey(key: string, seed: SeedUser = demoCorpus()): string {
  const first = seed.threads.find((t) => t.key === key)?.messages[0];
  if (first === undefined) throw new Error(`no corpus thread ${key}`);
  const { headers } = parseRawMessage(rawBytes(first.raw));
  const root = threadRoot({
    messageId: cleanMessageId(headerValue(headers, 'Message-ID')),
    references: headerValue(headers, 'References'),
    inReplyTo: headerValue(headers, 'In-Reply-To'),
  });
  return threadIdFor(root, { path: '', uidValidity: '', uid: 1 });
}
