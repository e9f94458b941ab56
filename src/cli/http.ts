import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { scopedRuntime } from '../mcp/clients.js';
import { REVIEW_PATH, bearerMatches, parseAllowedClients, serveHttp } from '../mcp/http.js';
import type { HttpClient } from '../mcp/http.js';
import { clientForToken } from '../policy/clients.js';
import type { ClientEntry } from '../policy/clients.js';
import { clientsPath, clientsSource } from '../store/clients.js';
import { envFlag } from '../store/config.js';
import type { Env } from '../store/config.js';
import { buildRuntime, stderrLogger, VERSION } from './runtime.js';
import { startRuleSweeps } from './sweep-rules.js';
import { contextOutsideCall } from './sweep.js';
import type { ServerRuntime } from '../mcp/server.js';
import type { ReviewApp } from '../review/server.js';

export interface HttpCommand {
  demo: boolean;
  env: Env;
  /** --port, else PORT, else 8787. */
  port?: string;
  account?: string;
}

const DEFAULT_PORT = 8787;
const LOOPBACK_BIND = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** A positive whole number from the environment, or undefined when unset. */
function positiveInt(env: Env, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a whole number of 1 or more, not "${raw}"`);
  return n;
}

function portOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`port must be 0..65535, not "${raw}"`);
  return port;
}

/** The review page under /review: a first login token now, the page's code on its first request. */
function reviewMount(runtime: ServerRuntime, env: Env, demo: boolean) {
  const first = randomBytes(32).toString('base64url');
  const mount = {
    first,
    origin: '',
    load: async () => {
      app ??= import('../review/server.js').then(({ createReviewApp }) =>
        createReviewApp(
          {
            runtime,
            env,
            demo,
            contextFor: (account, logAs) => contextOutsideCall(runtime, account, { logAs }),
          },
          {
            base: REVIEW_PATH,
            logins: [first],
            // Each link works once; the operator gets the next one where they saw the first.
            onSignIn: (a) => console.error(`review page: next login link: ${a.loginUrl(mount.origin)}`),
          },
        ),
      );
      return app;
    },
  };
  let app: Promise<{ handle: ReviewApp['handle'] }> | undefined;
  return mount;
}

/**
 * `mailwarden http`: the same server over Streamable HTTP. Anyone who can reach the port could
 * work the mailbox, so a bearer token is required unless the operator says otherwise in so many
 * words (MAILWARDEN_ALLOW_NO_TOKEN=1).
 */
/** A bearer token is set (MAILWARDEN_TOKEN or clients.json), or the operator said in so many words to serve without one. */
export function tokenConfigured(env: Env): boolean {
  return (
    (env['MAILWARDEN_TOKEN']?.trim() ?? '') !== '' ||
    envFlag(env, 'MAILWARDEN_ALLOW_NO_TOKEN') ||
    existsSync(clientsPath(env))
  );
}

/**
 * Who a request is: a client of clients.json (its accounts, its tiers, its name in the log) or
 * MAILWARDEN_TOKEN (every account, as before clients.json existed). Both kinds work side by side.
 * clients.json is re-read when it changes; one that became invalid lets none of its clients in
 * (MAILWARDEN_TOKEN still works) until it is fixed, and says so on stderr.
 */
function authenticator(
  runtime: ServerRuntime,
  env: Env,
  envToken: string,
): (authorization: string | string[] | undefined) => Promise<HttpClient | undefined> {
  const source = clientsSource(env);
  const scoped = new Map<string, HttpClient>();
  let warned = '';
  const everyAccount: HttpClient = { key: 'MAILWARDEN_TOKEN', runtime };
  return async (authorization) => {
    let list: ClientEntry[] | undefined;
    try {
      list = await source();
      warned = '';
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== warned)
        stderrLogger.warn('clients.json cannot be used; its clients are refused until it is fixed', {
          error: why,
        });
      warned = why;
      list = [];
    }
    const m = typeof authorization === 'string' ? /^Bearer +([^\s]+) *$/i.exec(authorization) : null;
    // Both compared every time, so the time taken does not say which kind of token was tried.
    const client = clientForToken(list ?? [], m?.[1] ?? '');
    const envMatch = envToken !== '' && bearerMatches(authorization, envToken);
    if (client !== undefined && m !== null) {
      const key = JSON.stringify([client.name, client.tokenSha256, client.accounts, client.tiers]);
      let hit = scoped.get(key);
      if (hit === undefined) {
        hit = { key, runtime: scopedRuntime(runtime, client) };
        scoped.set(key, hit);
      }
      return hit;
    }
    if (envMatch) return everyAccount;
    // MAILWARDEN_ALLOW_NO_TOKEN=1, and no clients.json: anyone, as before.
    if (envToken === '' && list === undefined && envFlag(env, 'MAILWARDEN_ALLOW_NO_TOKEN'))
      return everyAccount;
    return undefined;
  };
}

export async function runHttp(cmd: HttpCommand): Promise<void> {
  const env = cmd.env;
  const token = env['MAILWARDEN_TOKEN']?.trim() ?? '';
  if (!tokenConfigured(env)) {
    throw new Error(
      'MAILWARDEN_TOKEN is not set. HTTP clients must send it as "Authorization: Bearer <token>"; ' +
        'set it (for example `export MAILWARDEN_TOKEN=$(openssl rand -hex 32)`), or set ' +
        'MAILWARDEN_ALLOW_NO_TOKEN=1 to serve without one.',
    );
  }
  const clientsFile = existsSync(clientsPath(env));
  if (clientsFile && token === '' && envFlag(env, 'MAILWARDEN_ALLOW_NO_TOKEN'))
    throw new Error(
      `MAILWARDEN_ALLOW_NO_TOKEN=1 and ${clientsPath(env)} are both set: clients.json gives each client its own token, so serving without one would undo it. Unset MAILWARDEN_ALLOW_NO_TOKEN, or remove clients.json.`,
    );
  // A broken clients.json stops the start, with the field at fault.
  const startClients = clientsFile ? await clientsSource(env)() : undefined;
  const port = portOf(cmd.port ?? env['PORT']);
  const host = env['MAILWARDEN_HOST']?.trim() || '127.0.0.1';
  const allowedHosts = (env['MAILWARDEN_ALLOWED_HOSTS'] ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  const idleSeconds = positiveInt(env, 'MAILWARDEN_SESSION_IDLE_SECONDS');
  const maxSessions = positiveInt(env, 'MAILWARDEN_MAX_SESSIONS');
  const clients = env['MAILWARDEN_ALLOWED_CLIENTS'];
  const allowedClients =
    clients === undefined || clients.trim() === '' ? undefined : parseAllowedClients(clients);

  const built = await buildRuntime({ demo: cmd.demo, env, ...(cmd.account ? { account: cmd.account } : {}) });
  // The review page is for the person at this machine: on loopback only, with a login of its own
  // (never the bearer), its code loaded on its first request.
  const review = LOOPBACK_BIND.test(host) ? reviewMount(built.runtime, env, cmd.demo) : undefined;
  let server;
  try {
    server = await serveHttp(built.runtime, {
      host,
      port,
      token: token === '' ? undefined : token,
      // Installed even without clients.json, so one written later is read on the next request.
      authenticate: authenticator(built.runtime, env, token),
      allowedHosts,
      allowedClients,
      ...(idleSeconds === undefined ? {} : { sessionIdleMs: idleSeconds * 1000 }),
      ...(maxSessions === undefined ? {} : { maxSessions }),
      ...(review === undefined ? {} : { review: review.load }),
    });
  } catch (e) {
    await built.close();
    throw e;
  }
  if (startClients !== undefined)
    stderrLogger.info('HTTP clients from clients.json', {
      clients: startClients.length,
      ...(token === '' ? {} : { alsoMailwardenToken: 'every account' }),
    });
  if (token === '' && startClients === undefined)
    stderrLogger.warn('serving without a bearer token (MAILWARDEN_ALLOW_NO_TOKEN=1)');
  else if (token !== '' && token.length < 32)
    stderrLogger.warn('MAILWARDEN_TOKEN is short; use 32 or more random characters');
  if (!LOOPBACK_BIND.test(host) && allowedClients === undefined)
    stderrLogger.warn('listening beyond loopback with no MAILWARDEN_ALLOWED_CLIENTS', { host });
  if (built.sandbox) stderrLogger.info('serving the sandbox mailbox', { sandbox: built.sandbox.url });
  console.error(`mailwarden ${VERSION}: MCP over Streamable HTTP at ${server.url}`);
  if (review !== undefined) {
    const origin = new URL(server.url).origin;
    console.error(
      `review page (open once; the link works once): ${origin}${REVIEW_PATH}/login?token=${review.first}`,
    );
    review.origin = origin;
  }

  // policy.json's sender rules, at start and every sweepRulesEveryMinutes.
  const ruleSweeps = startRuleSweeps(built.runtime);
  const open = server;
  let closing = false;
  const shutdown = (): void => {
    // A second signal means "now".
    if (closing) process.exit(1);
    closing = true;
    // A rule sweep under way ends first, so its moves get their outcome lines in the log.
    void Promise.all([ruleSweeps.stop(), open.close()])
      .then(() => built.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
