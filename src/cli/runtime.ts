import { readFileSync } from 'node:fs';
import type { ServerRuntime } from '../mcp/server.js';
import type { PolicyService } from '../policy/service.js';
import { tiersFromEnv } from '../policy/tiers.js';
import type { Tier } from '../policy/tiers.js';
import { GmailMailbox } from '../providers/gmail/mailbox.js';
import { googleTransport, loopbackTransport } from '../providers/gmail/transport.js';
import type { Mailbox } from '../providers/mailbox.js';
import type { Sandbox } from '../sandbox/index.js';
import { accountName, readOAuthClient, readToken, stateDir } from '../store/config.js';
import { tiersGrantedFor } from '../store/tokens.js';
import { accountsStore } from '../store/accounts-store.js';
import { inboxMarkStore } from '../store/inbox-mark.js';
import { openState } from './state.js';
import { filePreviewStore } from '../store/preview-tokens.js';
import { confirmModeFromEnv } from '../policy/confirm.js';
import { liveOutbound, offlineOutbound } from '../net/outbound.js';
import { join } from 'node:path';
import type { Env } from '../store/config.js';
import { findAccount, readAccounts } from '../store/accounts.js';
import type { AccountEntry } from '../store/accounts.js';
import type { ImapSettings } from '../providers/imap/settings.js';
import type { Clock } from '../mail/clock.js';
import { startTools } from '../tools/common/lazy.js';
import { accountRouter } from './accounts.js';
import type { Logger } from '../tools/common/define.js';
import { clockFromEnv } from './clock.js';
import { limitsFromEnv } from './limits.js';
import { formatFromEnv, fullOutputSchemasFromEnv } from '../mcp/format.js';
import type { OutputFormat } from '../mcp/format.js';
import { debugOn } from './debug.js';
import { errorChain } from '../mail/errors.js';
import type { Limits } from './limits.js';
import { withCallBudget } from '../tools/common/budget.js';

/**
 * mailwarden's own package.json, found by walking up from this file: the same code runs from
 * dist/cli (tsc output) and from dist/bundle's chunks (the bundled bin).
 */
function ownPackageJson(): { version: string } {
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version: string;
      };
      if (pkg.name === 'mailwarden') return pkg;
    } catch {
      // not here: keep walking up
    }
    dir = new URL('..', dir);
  }
  return { version: '0.0.0-unknown' };
}

export const VERSION: string = ownPackageJson().version;

/** stdout carries MCP, so every diagnostic goes to stderr as one JSON line. */
export const stderrLogger: Logger = {
  info: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'info', message, ...fields })}\n`),
  warn: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...fields })}\n`),
};

export interface RuntimeOptions {
  demo: boolean;
  env: Env;
  account?: string;
  log?: Logger;
}

export interface BuiltRuntime {
  runtime: ServerRuntime;
  /** Present in demo mode: the in-process sandbox the mailbox talks to over loopback HTTP. */
  sandbox?: Sandbox;
  close(): Promise<void>;
}

/**
 * The demo: the sandbox Gmail simulator on loopback, seeded with the demo corpus, stale index on.
 * Loaded on demand so a real server's start-up never pays for the simulator and its corpus.
 */
export async function startDemoSandbox(port = 0): Promise<Sandbox> {
  const [{ Sandbox }, { demoCorpus }] = await Promise.all([
    import('../sandbox/index.js'),
    import('../sandbox/corpus/index.js'),
  ]);
  return Sandbox.start({ users: [demoCorpus()], staleThreadIndex: true, port });
}

/** The owner of the demo mailbox (kept here so serving does not load the corpus module). */
export const DEMO_ACCOUNT_ADDRESS = 'you@mailwarden.example';

/** The Gmail client's deadlines and rate-limit wait, from the limits read at start. */
function gmailLimits(
  limits: Limits,
): Pick<ConstructorParameters<typeof GmailMailbox>[0], 'deadlines' | 'retry'> {
  return {
    deadlines: { readMs: limits.readMs, writeMs: limits.writeMs },
    retry: { rateLimitMaxWaitMs: limits.rateLimitMaxWaitMs },
  };
}

function openDemoMailbox(sandbox: Sandbox, tiers: ReadonlySet<Tier>, limits: Limits): Mailbox {
  return new GmailMailbox({
    ...gmailLimits(limits),
    account: 'demo',
    credentials: { ...sandbox.oauthClient, refreshToken: sandbox.refreshTokenFor(DEMO_ACCOUNT_ADDRESS) },
    tiers,
    transport: loopbackTransport(sandbox.url),
  });
}

/** An IMAP account: its password from the encrypted store, one pooled connection (loaded lazily). */
async function openImapMailbox(
  env: Env,
  entry: AccountEntry,
  settings: ImapSettings,
  clock: Clock,
  recheckMs: number,
): Promise<Mailbox> {
  const [{ readImapPassword }, { openImapSession }, { ImapMailbox }] = await Promise.all([
    import('../store/imap-secret.js'),
    import('../providers/imap/connection.js'),
    import('../providers/imap/mailbox.js'),
  ]);
  const password = await readImapPassword(env, entry.name);
  return new ImapMailbox({
    account: entry.name,
    settings,
    session: openImapSession(settings, password, { account: entry.name }),
    now: () => clock.now(),
    recheckMs,
    ...(entry.address === undefined ? {} : { address: entry.address }),
  });
}

async function openConfiguredMailbox(
  env: Env,
  account: string,
  tiers: ReadonlySet<Tier>,
  clock: Clock,
  limits: Limits,
): Promise<Mailbox> {
  const entry = findAccount(await readAccounts(env), account);
  if (entry?.provider === 'imap' && entry.imap !== undefined)
    return openImapMailbox(env, entry, entry.imap, clock, limits.imapRecheckMs);
  const [client, token] = await Promise.all([readOAuthClient(env), readToken(env, account)]);
  // Tests and benchmarks point a real client at a sandbox started elsewhere; loopback only.
  const sandboxUrl = env['MAILWARDEN_SANDBOX_URL'];
  return new GmailMailbox({
    ...gmailLimits(limits),
    account,
    credentials: {
      ...client,
      refreshToken: token.refreshToken,
      // Lets a needs_reauth error say how old the grant was (Testing-mode tokens die at 7 days).
      ...(token.issuedAt === undefined ? {} : { refreshTokenIssuedAt: Date.parse(token.issuedAt) }),
    },
    tiers,
    transport: googleTransport(sandboxUrl),
  });
}

/**
 * The environment a demo runs with: MAILWARDEN_STATE_DIR is a temp dir, removed when the process
 * exits; policy.json is still read from the config dir. Says where on stderr.
 */
async function demoStateEnv(env: Env, log: Logger): Promise<Env> {
  const { tempDirUntilExit } = await import('../store/temp-dir.js');
  const state = tempDirUntilExit('mailwarden-demo-');
  log.info('demo: its action log, marks and locks are kept apart, removed when this process ends', {
    stateDir: state.path,
  });
  return { ...env, MAILWARDEN_STATE_DIR: state.path };
}

export async function buildRuntime(opts: RuntimeOptions): Promise<BuiltRuntime> {
  const envTiers = tiersFromEnv(opts.env);
  const clock = clockFromEnv(opts.env);
  const log = opts.log ?? stderrLogger;
  const limits = limitsFromEnv(opts.env);
  // A bad policy.json stops the server at start, naming the field (and again at each write),
  // before anything is started that would keep the process alive.
  await (await import('../policy/write-policy.js')).loadPolicy(opts.env);
  // Every environment value is judged before anything starts that would keep the process alive
  // (the demo's sandbox listens on a socket): a bad one ends the start at once.
  const confirmMode = confirmModeFromEnv(opts.env);
  const format = formatFromEnv(opts.env);
  const fullOutputSchemas = fullOutputSchemasFromEnv(opts.env);
  // The demo keeps its state (action log, marks, locks) in a temp dir of its own, so it never
  // writes to the real config dir; it runs under the person's policy.json all the same.
  if (opts.demo) opts = { ...opts, env: await demoStateEnv(opts.env, log) };
  const sandbox = opts.demo ? await startDemoSandbox() : undefined;
  try {
    return await assemble(opts, {
      envTiers,
      clock,
      log,
      limits,
      confirmMode,
      format,
      fullOutputSchemas,
      sandbox,
    });
  } catch (e) {
    await sandbox?.close();
    throw e;
  }
}

async function assemble(
  opts: RuntimeOptions,
  pre: {
    envTiers: ReadonlySet<Tier>;
    clock: Clock;
    log: Logger;
    limits: Limits;
    confirmMode: ReturnType<typeof confirmModeFromEnv>;
    format: OutputFormat;
    fullOutputSchemas: boolean;
    sandbox: Sandbox | undefined;
  },
): Promise<BuiltRuntime> {
  const { envTiers, clock, log, limits, confirmMode, format, fullOutputSchemas, sandbox } = pre;
  const account = opts.demo ? 'demo' : accountName(opts.env, opts.account);
  // A tier the stored token was not granted is not listed (one small file read, no key needed;
  // with MAILWARDEN_STATE=postgres://… one row of the state database).
  const granted = opts.demo
    ? { tiers: envTiers, dropped: [] }
    : await tiersGrantedFor(await accountsStore(opts.env), account, envTiers);
  const tiers = granted.tiers;
  if (granted.dropped.length > 0) {
    log.warn('tiers not granted by the stored token are off; run `mailwarden auth` to grant them', {
      account,
      tiers: granted.dropped,
    });
  }
  // Pinned (--account / MAILWARDEN_ACCOUNT): that one account; else accounts.json, else "default".
  const pinned = opts.account !== undefined || (opts.env['MAILWARDEN_ACCOUNT'] ?? '') !== '';
  const routing = accountRouter({
    env: opts.env,
    serverTiers: tiers,
    demo: sandbox ? { name: 'demo', address: DEMO_ACCOUNT_ADDRESS } : undefined,
    pinned: !sandbox && pinned ? account : undefined,
    open: (name, accountTiers) =>
      (sandbox
        ? Promise.resolve(openDemoMailbox(sandbox, accountTiers, limits))
        : openConfiguredMailbox(opts.env, name, accountTiers, clock, limits)
      ).catch((e: unknown) => {
        // The client gets the envelope; MAILWARDEN_DEBUG=1 puts the whole error on stderr.
        if (debugOn(opts.env))
          log.warn('opening the mailbox failed (MAILWARDEN_DEBUG)', { account: name, error: errorChain(e) });
        throw e;
      }),
  });
  const mailbox = (): Promise<Mailbox> => routing.mailboxFor();
  // MAILWARDEN_STATE: files unless a PostgreSQL URL is set; only then is its module (and the
  // driver) loaded, and the database is opened and migrated now, so a bad one stops the start.
  // The action log is the file in the state dir (the demo's own: demoStateEnv) or the database's
  // table; every record is appended there and every reader reads it there (src/cli/state.ts).
  const state = await openState(opts.env);
  const { actionLog, pg: pgState } = state;
  // Loaded on the first write (its chunk, with the file-lock stack, is not needed for tools/list).
  let service: Promise<PolicyService> | undefined;
  const policy = (): Promise<PolicyService> =>
    (service ??= import('../policy/service.js').then((m) =>
      m.policyService(opts.env, actionLog, clock, pgState?.policyStore),
    ));
  const tools = await startTools((defined) =>
    withCallBudget(defined, limits.callBudgetMs, { debug: debugOn(opts.env) }),
  );
  // The whole output schemas are built from the definitions, not taken from the bundle's table.
  if (fullOutputSchemas) await tools.load();
  const runtime: ServerRuntime = {
    tools: tools.tools,
    loadTools: tools.load,
    policy: {
      gateFor: async (account, mb, client) => (await policy()).gateFor(account, mb, client),
      movesToday: async (account, now, tz) => (await policy()).movesToday(account, now, tz),
      effective: async (account) => (await policy()).effective(account),
    },
    inboxMarks: pgState?.inboxMarks ?? inboxMarkStore(join(stateDir(opts.env), 'marks')),
    // Bulk preview tokens: the state database, or files under the state dir (previews/ACCOUNT/).
    previews: pgState?.previews ?? filePreviewStore(join(stateDir(opts.env), 'previews')),
    // Where the server's own timers claim each account's run (src/policy/timer-slots.ts): the
    // state database, or the config dir (loaded when a timer first runs: the file-lock stack is
    // not on the start-up path).
    timerSlots: pgState?.timerSlots ?? {
      claim: async (timer, account, everyMs) =>
        (await import('../policy/timer-slots.js')).fileTimerSlots(opts.env).claim(timer, account, everyMs),
    },
    // Read at start so a bad MAILWARDEN_CONFIRM stops the server instead of a later change.
    confirmMode,
    // MAILWARDEN_FORMAT, read at start like MAILWARDEN_CONFIRM.
    format,
    fullOutputSchemas,
    accounts: routing,
    tiers,
    mailbox,
    actionLog,
    clock,
    log,
    version: VERSION,
    ...(opts.env['MAILWARDEN_DOWNLOAD_DIR'] ? { downloadDir: opts.env['MAILWARDEN_DOWNLOAD_DIR'] } : {}),
    // A sandbox mailbox's senders are fictional: never contacted, not even looked up in DNS.
    outbound:
      opts.demo || opts.env['MAILWARDEN_SANDBOX_URL']
        ? offlineOutbound(
            'this server works a sandbox mailbox, whose senders are fictional: mailwarden never contacts them (dryRun shows what would be called)',
          )
        : // The unsubscribe ledger: shared through the state database, else this process's memory.
          liveOutbound(pgState?.sentLedger),
  };
  return {
    runtime,
    ...(sandbox ? { sandbox } : {}),
    async close() {
      await routing.close();
      await sandbox?.close();
      await state.close();
    },
  };
}
