import { MailError, isMailError } from '../../mail/errors.js';
import type { ImapSettings } from './settings.js';
import { explainVerifyFailure, isVerifyFailure } from './tls.js';
import type { TlsPlan } from './tls.js';

/**
 * imapflow and Node errors turned into MailErrors a person can act on. Messages name the host,
 * the account and the command that fixes things; they never contain the password, and server
 * text is cut short and stripped of control characters before it is shown.
 */

interface ImapErrorFields {
  code?: unknown;
  message?: unknown;
  name?: unknown;
  authenticationFailed?: unknown;
  tlsFailed?: unknown;
  responseStatus?: unknown;
  responseText?: unknown;
  serverResponseCode?: unknown;
  mailboxMissing?: unknown;
  command?: unknown;
}

const fields = (e: unknown): ImapErrorFields => (e !== null && typeof e === 'object' ? e : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Server-supplied text, shortened: it ends up in terminals and tool results. */
export function serverText(v: unknown): string | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/** A word a POSIX shell reads back as itself: quoted unless it holds only safe characters. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The settings as `accounts add` flags, so a fix can be pasted as it is (the password is never
 * among them): the pinned certificate and the authserv-id go along, each word shell-quoted.
 */
export function addCommand(account: string, s: ImapSettings): string {
  const security =
    s.security === 'tls' ? '--tls' : s.security === 'starttls' ? '--starttls' : '--insecure-loopback';
  const pin = s.pinSha256 === undefined ? '' : ` --pin-sha256 ${s.pinSha256}`;
  const authserv = s.authservId === undefined ? '' : ` --authserv-id ${shellWord(s.authservId)}`;
  return `mailwarden accounts add ${shellWord(account)} --imap --host ${shellWord(s.host)} --port ${s.port} ${security} --user ${shellWord(s.user)}${pin}${authserv}`;
}

const BRIDGE_PORT = 1143;

export async function describeConnectError(
  e: unknown,
  settings: ImapSettings,
  plan: TlsPlan,
  account: string,
): Promise<MailError> {
  if (isMailError(e)) return e;
  const f = fields(e);
  const code = str(f.code) ?? '';
  const message = str(f.message) ?? String(e);
  const where = `${settings.host}:${settings.port}`;
  const retryLater = { retryable: true, cause: e };
  if (/Login is disabled/i.test(message))
    return new MailError(
      'forbidden_operation',
      `${where} refuses LOGIN on this connection (LOGINDISABLED): it wants TLS first. Use --tls or --starttls (${addCommand(account, settings)}).`,
      { retryable: false },
    );
  if (f.authenticationFailed === true || f.name === 'AuthenticationFailure') {
    const said = serverText(f.responseText);
    const bridge =
      settings.port === BRIDGE_PORT
        ? ' For Proton Mail Bridge the password is the one Bridge shows for this account, not your Proton password.'
        : '';
    return new MailError(
      'needs_reauth',
      `${where} refused the login for ${settings.user}${said === undefined ? '' : ` ("${said}")`}.${bridge} ` +
        `If the password changed, store the new one: ${addCommand(account, settings)} --password-stdin`,
      { retryable: false },
    );
  }
  if (isVerifyFailure(e)) return explainVerifyFailure(e, settings, plan, account);
  if (f.tlsFailed === true && code === '' && /STARTTLS/.test(message))
    return new MailError(
      'forbidden_operation',
      `${where} did not let the connection switch to TLS (${message}); mailwarden never sends the password in clear. ` +
        'If the server speaks TLS from the start (usually port 993), use --tls.',
      { retryable: false },
    );
  switch (code) {
    case 'ECONNREFUSED':
      return new MailError(
        'network_error',
        `nothing is listening on ${where} (connection refused).` +
          (settings.port === BRIDGE_PORT
            ? ' Is Proton Mail Bridge running? Start it and sign in, then try again.'
            : ' Check --host and --port, and that the server is up.'),
        retryLater,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new MailError(
        'network_error',
        `${settings.host} does not resolve (${code}); check --host and the network.`,
        retryLater,
      );
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new MailError(
        'network_error',
        `no connection to ${where} (${code}); check the host, the port and any firewall.`,
        retryLater,
      );
    case 'GREETING_TIMEOUT':
      return new MailError(
        'upstream_unavailable',
        `${where} accepted the connection but sent no IMAP greeting. ` +
          (settings.security === 'tls'
            ? 'If the port expects plain IMAP then STARTTLS (143, Bridge 1143), use --starttls.'
            : 'If the port expects TLS from the start (993), use --tls.'),
        retryLater,
      );
    case 'UPGRADE_TIMEOUT':
    case 'ETIMEOUT':
      return new MailError(
        'upstream_unavailable',
        `${where} stopped answering during login (${code}).`,
        retryLater,
      );
    default:
  }
  if (code.startsWith('ERR_SSL') || code === 'EPROTO')
    return new MailError(
      'network_error',
      `the TLS handshake with ${where} failed (${code}). ` +
        (settings.security === 'tls'
          ? 'If the port speaks plain IMAP first (143, Bridge 1143), use --starttls.'
          : 'Check that the port is the IMAP port.'),
      retryLater,
    );
  return new MailError(
    'network_error',
    `the connection to ${where} failed during login (${code === '' ? message : code}); try again, and check the server if it keeps happening.`,
    retryLater,
  );
}

/** An error from inside a `use()` whose connection is still up: the server answered NO or BAD, or our code threw. */
export function describeCommandError(e: unknown, where: string): MailError {
  if (isMailError(e)) return e;
  const f = fields(e);
  const status = str(f.responseStatus);
  const said = serverText(f.responseText) ?? serverText(f.message) ?? 'no reason given';
  const command = str(f.command) ?? 'a command';
  const responseCode = str(f.serverResponseCode)?.toUpperCase();
  if (f.mailboxMissing === true || responseCode === 'NONEXISTENT')
    return new MailError('not_found', `${where}: the folder does not exist (${said})`, { cause: e });
  if (status === undefined)
    return new MailError('internal_error', `IMAP handling at ${where} failed: ${said}`, { cause: e });
  switch (responseCode) {
    case 'NOPERM':
      return new MailError('forbidden_operation', `${where} does not allow ${command} here (${said})`, {
        cause: e,
      });
    case 'INUSE':
    case 'UNAVAILABLE':
    case 'LIMIT':
      return new MailError(
        'upstream_unavailable',
        `${where} is busy (${responseCode}: ${said}); try again shortly`,
        {
          retryable: true,
          cause: e,
        },
      );
    default:
  }
  // BAD means the server did not understand us: our bug or a server quirk, not the user's.
  if (status === 'BAD')
    return new MailError('internal_error', `${where} rejected ${command} as malformed (${said})`, {
      cause: e,
    });
  return new MailError('upstream_unavailable', `${where} refused ${command} (${said})`, {
    retryable: false,
    cause: e,
  });
}

/** What use() rejects with, whatever reached it; an AbortSignal's own reason included. */
export function asMailError(e: unknown, where: string): MailError {
  if (isMailError(e)) return e;
  if (e instanceof Error && e.name === 'AbortError') return cancelledError(where, true, false);
  return describeCommandError(e, where);
}

export function plainRefusedError(account: string, host: string): MailError {
  return new MailError(
    'forbidden_operation',
    `account "${account}" uses plain IMAP (insecure-loopback) to ${host}, which is not a loopback address: ` +
      `the password would cross the network in clear. Use --tls or --starttls (mailwarden accounts add ${account} --imap …).`,
    { retryable: false },
  );
}

/** `started`: fn had the connection, so a write may have reached the server. */
export function timedOutError(
  where: string,
  deadlineMs: number,
  retry: boolean,
  started: boolean,
): MailError {
  const base = `${where} did not finish within ${deadlineMs / 1000} s; the connection was closed`;
  if (!retry && started)
    return new MailError(
      'upstream_unavailable',
      `${base}, so the outcome of the change is unknown: it may or may not have been applied. Check the mailbox before repeating it.`,
      { retryable: false },
    );
  return new MailError(
    'upstream_unavailable',
    `${base}. Try again; if it keeps happening the server is overloaded or unreachable (Proton Mail Bridge is slow while it syncs).`,
    { retryable: true },
  );
}

export function cancelledError(where: string, retry: boolean, started: boolean): MailError {
  const unknown = !retry && started ? ' after the change was sent: its outcome is unknown' : '';
  return new MailError('network_error', `the IMAP call to ${where} was cancelled${unknown}`, {
    retryable: false,
  });
}

export function droppedError(where: string, e: unknown, retry: boolean): MailError {
  const code = str(fields(e).code);
  const why = code === undefined ? '' : ` (${code})`;
  if (!retry)
    return new MailError(
      'network_error',
      `the connection to ${where} dropped${why} while a change was being made, so its outcome is unknown: ` +
        'the server may have applied it. Check the mailbox before repeating it.',
      { retryable: false, cause: e },
    );
  return new MailError(
    'network_error',
    `the connection to ${where} dropped${why} twice during one read; try again, and check the network or the server if it keeps happening.`,
    { retryable: true, cause: e },
  );
}
