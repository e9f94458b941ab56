import { ImapFlow } from 'imapflow';
import { MailError, isMailError } from '../../mail/errors.js';
import { resumeAt, stopAt } from './reader.js';
import {
  asMailError,
  cancelledError,
  describeCommandError,
  describeConnectError,
  droppedError,
  plainRefusedError,
  timedOutError,
} from './connection-errors.js';
import type { ImapSession } from './session.js';
import type { ImapSettings } from './settings.js';
import { isLoopbackHost, tlsPlan } from './tls.js';
import type { TlsPlan } from './tls.js';

/**
 * The IMAP transport: one authenticated imapflow connection per session, opened on first use,
 * reused, closed when idle. Callers take turns (the mailbox code SELECTs folders, so two callers
 * on one connection would read each other's mailbox), every wait is bounded, and nothing a
 * server or the network does can throw outside a `use()` promise.
 */

export interface ImapSessionOptions {
  /** The account name, for the fixes error messages print. */
  account?: string;
  /** TCP connect plus TLS handshake. */
  connectionTimeoutMs?: number;
  /** From connected to the server's greeting. */
  greetingTimeoutMs?: number;
  /** Silence while a command waits for its answer (imapflow's socketTimeout). */
  socketTimeoutMs?: number;
  /** The whole of one `use()`: connecting, `fn`, and the one reconnect of a read. */
  deadlineMs?: number;
  /** Close the connection after this long without a `use()`. */
  idleMs?: number;
  /** ENABLE QRESYNC (RFC 7162) as well as CONDSTORE. */
  qresync?: boolean;
}

export interface PooledImapSession extends ImapSession {
  /** Successful logins so far: one per connection this session opened. */
  logins(): number;
}

const DEFAULTS = {
  connectionTimeoutMs: 15_000,
  greetingTimeoutMs: 15_000,
  // Proton Mail Bridge can take over a second per command and longer while it syncs.
  socketTimeoutMs: 60_000,
  deadlineMs: 60_000,
  idleMs: 5 * 60_000,
};
/** How long a polite LOGOUT may take before the socket is simply destroyed. */
const LOGOUT_GRACE_MS = 2_000;

interface Conn {
  client: ImapFlow;
  plan: TlsPlan;
  alive: boolean;
}

type Exec = (...args: unknown[]) => Promise<unknown>;

function noop(): void {}

/** The budget's own error; a write already sent when it ran out has an unknown outcome. */
function budgetError(reason: MailError, retry: boolean, started: boolean): MailError {
  if (retry || !started) return reason;
  return new MailError(
    'deadline_exceeded',
    `${reason.message} A change was already sent when the budget ran out: its outcome is unknown until the mailbox is read again.`,
    { retryable: false, cause: reason },
  );
}

export function openImapSession(
  settings: ImapSettings,
  password: string,
  options: ImapSessionOptions = {},
): PooledImapSession {
  return new Pool(settings, password, { ...DEFAULTS, ...options });
}

class Pool implements PooledImapSession {
  private tail: Promise<void> = Promise.resolve();
  /** Settles when a stopped call's last command has finished (or its connection was closed). */
  private draining: Promise<void> = Promise.resolve();
  private conn: Conn | undefined;
  /** A connection being set up, so a deadline or close() can destroy it. */
  private opening: Conn | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private sent = 0;
  private loginCount = 0;
  private caps: ReadonlySet<string> = new Set();
  private closed = false;
  private readonly account: string;
  private readonly where: string;

  constructor(
    private readonly settings: ImapSettings,
    private readonly password: string,
    private readonly o: ImapSessionOptions & typeof DEFAULTS,
  ) {
    this.account = o.account ?? 'NAME';
    this.where = `${settings.host}:${settings.port}`;
  }

  commands(): number {
    return this.sent;
  }

  logins(): number {
    return this.loginCount;
  }

  capabilities(): ReadonlySet<string> {
    return this.caps;
  }

  use<T>(
    fn: (client: ImapFlow) => Promise<T>,
    options: { retry: boolean; signal?: AbortSignal },
  ): Promise<T> {
    const { signal } = options;
    const turn = this.tail;
    let queued = true;
    const work = (async () => {
      await turn;
      // A call stopped by its budget lets its command on the wire finish first (see exclusive).
      await this.draining;
      queued = false;
      signal?.throwIfAborted();
      return this.exclusive(fn, options);
    })();
    this.tail = work.then(noop, noop);
    return new Promise<T>((resolve, reject) => {
      // A caller that gives up while queued leaves at once (its turn is skipped when it comes);
      // once running, exclusive() owns the abort, since only it knows whether a change was sent.
      const onAbort = (): void => {
        if (queued) reject(cancelledError(this.where, options.retry, false));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted === true) onAbort();
      work
        .then(resolve, (e: unknown) => reject(asMailError(e, this.where)))
        .finally(() => signal?.removeEventListener('abort', onAbort));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearIdle();
    this.opening?.client.close();
    const conn = this.conn;
    this.conn = undefined;
    if (conn !== undefined) await this.retire(conn);
    await this.tail;
  }

  private async exclusive<T>(
    fn: (client: ImapFlow) => Promise<T>,
    options: { retry: boolean; signal?: AbortSignal },
  ): Promise<T> {
    this.clearIdle();
    let started = false;
    let current: Conn | undefined;
    let stopReason: 'deadline' | 'abort' | undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    // One promise that rejects when the deadline passes or the caller aborts; every await below
    // races it, and whichever connection is in use then is destroyed so nothing keeps running.
    let running: Promise<T> | undefined;
    const stop = new Promise<never>((_, reject) => {
      const halt = (why: 'deadline' | 'abort'): void => {
        stopReason = why;
        this.opening?.client.close();
        const reason: unknown = options.signal?.reason;
        const budget = why === 'abort' && isMailError(reason) && reason.code === 'deadline_exceeded';
        if (budget && current !== undefined && running !== undefined && current.alive) {
          // The call's budget ran out, not the connection: the command on the wire finishes and
          // the call's next step refuses to start (reader.ts going()), so the next call finds a
          // healthy, logged-in connection. One that has not finished within the deadline is cut.
          const conn = current;
          stopAt(conn.client, reason);
          let cut: NodeJS.Timeout | undefined;
          this.draining = Promise.race([
            running.then(noop, noop),
            new Promise<void>((resolve) => {
              cut = setTimeout(() => {
                conn.client.close();
                resolve();
              }, this.o.deadlineMs);
            }),
          ]).finally(() => clearTimeout(cut));
          reject(budgetError(reason, options.retry, started));
          return;
        }
        current?.client.close();
        reject(
          why === 'deadline'
            ? timedOutError(this.where, this.o.deadlineMs, options.retry, started)
            : budget
              ? budgetError(reason, options.retry, started)
              : cancelledError(this.where, options.retry, started),
        );
      };
      timer = setTimeout(() => halt('deadline'), this.o.deadlineMs);
      onAbort = () => halt('abort');
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    stop.catch(noop);
    try {
      for (let attempt = 0; ; attempt++) {
        if (this.closed)
          throw new MailError('internal_error', `the IMAP session for ${this.where} was closed`);
        current = undefined;
        const opening = this.connection();
        opening.catch(noop);
        current = await Promise.race([opening, stop]);
        this.watchdog(current, true);
        try {
          started = true;
          resumeAt(current.client);
          running = fn(current.client);
          running.catch(noop);
          return await Promise.race([running, stop]);
        } catch (e) {
          if (stopReason !== undefined) throw e;
          if (current.alive && current.client.usable) throw describeCommandError(e, this.where);
          this.forget(current);
          // A read is safe to repeat; a write that lost its connection may or may not have landed.
          if (options.retry && attempt === 0) continue;
          throw droppedError(this.where, e, options.retry);
        }
      }
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) options.signal?.removeEventListener('abort', onAbort);
      if (!this.closed) this.armIdle();
    }
  }

  /** The live connection, or a new one: connect, STARTTLS or TLS with the pin, LOGIN. */
  private async connection(): Promise<Conn> {
    const live = this.conn;
    if (live !== undefined && live.alive && live.client.usable) return live;
    if (live !== undefined) this.forget(live);
    const { settings } = this;
    if (settings.security === 'insecure-loopback' && !isLoopbackHost(settings.host))
      throw plainRefusedError(this.account, settings.host);
    const plan = tlsPlan(settings);
    const client = new ImapFlow({
      host: settings.host,
      port: settings.port,
      secure: settings.security === 'tls',
      // Required, not opportunistic: a server that does not offer STARTTLS never sees LOGIN.
      doSTARTTLS: settings.security === 'starttls',
      auth: { user: settings.user, pass: this.password },
      tls: plan.options,
      logger: false,
      // Between calls the pool closes idle connections itself; IDLE would only add a DONE round
      // trip (slow on Bridge) before every command.
      disableAutoIdle: true,
      // Plain bytes on the wire keep command counts exact and let the test proxy see commands.
      disableCompression: true,
      connectionTimeout: this.o.connectionTimeoutMs,
      greetingTimeout: this.o.greetingTimeoutMs,
      socketTimeout: this.o.socketTimeoutMs,
      ...(this.o.qresync === true ? { qresync: true } : {}),
    });
    const conn: Conn = { client, plan, alive: true };
    this.countCommands(client);
    // Without an 'error' listener an EventEmitter throws: a server dropping an idle connection
    // would take the process down. The next use() sees `alive` false and reconnects.
    client.on('error', () => {
      conn.alive = false;
    });
    client.on('close', () => {
      conn.alive = false;
      if (this.conn === conn) {
        this.conn = undefined;
        this.clearIdle();
      }
    });
    this.opening = conn;
    try {
      await client.connect();
    } catch (e) {
      conn.alive = false;
      client.close();
      throw await describeConnectError(e, settings, plan, this.account);
    } finally {
      if (this.opening === conn) this.opening = undefined;
    }
    this.loginCount++;
    this.caps = new Set([...client.capabilities.keys()].map((k) => k.toUpperCase()));
    spareListings(client);
    if (this.closed) {
      client.close();
      throw new MailError('internal_error', `the IMAP session for ${this.where} was closed`);
    }
    this.conn = conn;
    return conn;
  }

  /**
   * Every command imapflow sends goes through its (internal) exec(); counting there includes the
   * ones it sends on its own (CAPABILITY, ID, LOGIN/AUTHENTICATE, ENABLE, NAMESPACE).
   */
  private countCommands(client: ImapFlow): void {
    const target = client as unknown as { exec?: Exec };
    const exec = target.exec;
    if (typeof exec !== 'function')
      throw new MailError(
        'internal_error',
        'imapflow no longer has exec(); the command count needs updating',
      );
    target.exec = (...args: unknown[]) => {
      this.sent++;
      return exec.apply(client, args);
    };
  }

  private forget(conn: Conn): void {
    conn.alive = false;
    conn.client.close();
    if (this.conn === conn) this.conn = undefined;
  }

  /** LOGOUT politely, but never wait long for it: the socket is destroyed either way. */
  private async retire(conn: Conn): Promise<void> {
    conn.alive = false;
    if (conn.client.usable) {
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        conn.client.logout().catch(noop),
        new Promise<void>((resolve) => (grace = setTimeout(resolve, LOGOUT_GRACE_MS))),
      ]);
      clearTimeout(grace);
    }
    conn.client.close();
  }

  /**
   * imapflow's inactivity watchdog (socketTimeout) treats a quiet pooled connection as dead, so
   * it runs only while a call holds the connection; between calls the idle timer governs.
   */
  private watchdog(conn: Conn, on: boolean): void {
    const socket = (conn.client as unknown as { socket?: { setTimeout?: (ms: number) => unknown } }).socket;
    if (typeof socket?.setTimeout === 'function') socket.setTimeout(on ? this.o.socketTimeoutMs : 0);
  }

  private armIdle(): void {
    this.clearIdle();
    const conn = this.conn;
    if (conn === undefined) return;
    this.watchdog(conn, false);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.conn !== conn) return;
      // Retired inside the queue, so an idle close never cuts a call that just started.
      const run = this.tail.then(() =>
        this.conn === conn && !this.idleTimer ? this.idleClose(conn) : undefined,
      );
      this.tail = run.then(noop, noop);
    }, this.o.idleMs);
    // The timer alone must not keep a process alive that has nothing else to do.
    this.idleTimer.unref();
  }

  private async idleClose(conn: Conn): Promise<void> {
    this.conn = undefined;
    await this.retire(conn);
  }

  private clearIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

/**
 * Two listings imapflow would otherwise send on every new connection, on Bridge a second each:
 * - its SELECT first runs `LIST "" <path>` (and LSUB) for a folder it has not listed yet, only to
 *   copy the folder's delimiter and special-use flag into the answer. INBOX exists on every server
 *   (RFC 3501 §5.1), so it is entered as listed, and the gate's first EXAMINE INBOX goes out alone;
 * - every LIST is followed by an LSUB to learn subscriptions, which nothing here reads (the folder
 *   model takes every listed folder, subscribed or not). `skipLsub` is imapflow's own latch for a
 *   server that refuses LSUB.
 */
function spareListings(client: ImapFlow): void {
  const inner = client as unknown as { folders?: Map<string, unknown>; skipLsub?: boolean };
  inner.skipLsub = true;
  if (inner.folders instanceof Map && !inner.folders.has('INBOX'))
    inner.folders.set('INBOX', {
      path: 'INBOX',
      pathAsListed: 'INBOX',
      name: 'INBOX',
      delimiter: client.namespace?.delimiter ?? '/',
      parent: [],
      parentPath: '',
      flags: new Set<string>(),
      specialUse: '\\Inbox',
      listed: true,
      subscribed: true,
    });
}
