import { X509Certificate, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { connect as netConnect, isIP } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import type { ConnectionOptions, PeerCertificate } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { MailError, invalidInput } from '../../mail/errors.js';
import type { ImapSecurity, ImapSettings } from './settings.js';

/**
 * Certificate trust for IMAP: normal verification (Node's CA list, hostname check), or a pin to
 * exactly one certificate by the SHA-256 of its DER (Proton Mail Bridge presents a self-signed
 * certificate of its own on 127.0.0.1). No connection that authenticates ever turns verification
 * off; the only unverified TLS here is the probe below, which sends nothing but STARTTLS.
 */

export interface ServerCertificate {
  /** The leaf certificate, PEM. */
  pem: string;
  /** Lower-case hex SHA-256 of the DER, no colons (the form settings keep). */
  sha256: string;
}

/** Accepts `AB:CD:…`, spaces and either case (what openssl and browsers print); returns the stored form. */
export function normalizeSha256(value: string, field: string): string {
  const hex = value.replace(/[\s:]/g, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw invalidInput(field, 'a SHA-256 fingerprint is 64 hex digits (colons allowed)');
  return hex;
}

function fromDer(der: Buffer): ServerCertificate {
  return {
    pem: new X509Certificate(der).toString(),
    sha256: createHash('sha256').update(der).digest('hex'),
  };
}

/** The first certificate in a PEM text; `source` names it in the error. */
export function certificateFromPem(pem: string, source: string): ServerCertificate {
  try {
    return fromDer(new X509Certificate(pem).raw);
  } catch (e) {
    throw invalidInput(source, `not a PEM certificate (${(e as Error).message})`);
  }
}

/** `--pin-cert FILE`: Bridge's exported cert.pem, or any PEM file whose first certificate is the leaf. */
export async function readPinCertFile(path: string): Promise<ServerCertificate> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw invalidInput(
      '--pin-cert',
      `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
    );
  }
  return certificateFromPem(text, '--pin-cert');
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) or the name localhost: traffic that never leaves the machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === 'localhost.') return true;
  if (!ipaddr.isValid(h)) return false;
  const addr = ipaddr.parse(h);
  const v4 = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress();
  return (v4 ? (addr as ipaddr.IPv6).toIPv4Address() : addr).range() === 'loopback';
}

const servernameFor = (host: string): { servername?: string } =>
  isIP(host) === 0 ? { servername: host } : {};

function selfSigned(pem: string): boolean {
  let x: X509Certificate;
  try {
    x = new X509Certificate(pem);
  } catch {
    throw invalidInput(
      'imap.pinCertPem',
      'not a certificate; pin again with --pin-from-server or --pin-cert',
    );
  }
  return x.checkIssued(x);
}

/** TLS options for one connection, and what that connection was shown (read after a failure). */
export interface TlsPlan {
  options: ConnectionOptions;
  /** The SHA-256 checkServerIdentity saw; undefined when the chain check failed before it. */
  presented(): string | undefined;
}

/** Raised from checkServerIdentity; Node destroys the socket with it before anything is sent. */
export class PinMismatch extends Error {
  readonly code = 'MAILWARDEN_PIN_MISMATCH';
  constructor(
    readonly expected: string,
    readonly presented: string,
  ) {
    super(`certificate SHA-256 ${presented} is not the pinned ${expected}`);
    this.name = 'PinMismatch';
  }
}

export function tlsPlan(settings: ImapSettings): TlsPlan {
  const pin = settings.pinSha256;
  if (pin === undefined) return { options: {}, presented: () => undefined };
  let seen: string | undefined;
  const options: ConnectionOptions = {
    // The pin replaces the hostname check (Bridge's certificate names 127.0.0.1, a pinned public
    // server keeps its name in the certificate we pinned): the exact certificate is the identity.
    checkServerIdentity: (_host: string, cert: PeerCertificate) => {
      seen = createHash('sha256').update(cert.raw).digest('hex');
      return seen === pin ? undefined : new PinMismatch(pin, seen);
    },
  };
  const pem = settings.pinCertPem;
  // A self-signed leaf is its own trust anchor; a CA-issued one still chains to the public roots
  // (OpenSSL wants a chain ending in a self-signed root), and the pin then narrows it to one.
  if (pem !== undefined) options.ca = selfSigned(pem) ? [pem] : [...rootCertificates, pem];
  return { options, presented: () => seen };
}

// OpenSSL verification results as Node reports them (X509_V_ERR_* names).
const VERIFY_FAILURE =
  /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY|DECRYPT)|ALTNAME|HOSTNAME_MISMATCH|INVALID_CA|PATH_LENGTH|INVALID_PURPOSE/;

export function isVerifyFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (VERIFY_FAILURE.test(code) || code === 'MAILWARDEN_PIN_MISMATCH');
}

export function updatePinFix(account: string): string {
  return `mailwarden accounts add ${account} --imap … --pin-from-server`;
}

export function pinMismatchError(
  account: string,
  where: string,
  expected: string,
  presented: string,
): MailError {
  return new MailError(
    'forbidden_operation',
    `${where} presented a certificate with SHA-256 ${presented}, but account "${account}" is pinned to ${expected}; ` +
      `nothing was sent. If you reinstalled or reset Bridge, update the pin (${updatePinFix(account)}); ` +
      `otherwise something else is listening on the Bridge port.`,
    { retryable: false },
  );
}

/**
 * The MailError for a failed certificate check. When the chain check failed before the pin could
 * be compared (another self-signed certificate), the presented one is learned by `probe`.
 */
export async function explainVerifyFailure(
  e: unknown,
  settings: ImapSettings,
  plan: TlsPlan,
  account: string,
  probe: () => Promise<ServerCertificate> = () =>
    fetchServerCertificate(settings.host, settings.port, settings.security),
): Promise<MailError> {
  const where = `${settings.host}:${settings.port}`;
  const code = String((e as { code?: unknown }).code);
  const pin = settings.pinSha256;
  if (pin === undefined)
    return new MailError(
      'forbidden_operation',
      `the certificate of ${where} is not trusted (${code}); nothing was sent. A server with a self-signed certificate ` +
        `(Proton Mail Bridge) needs a pin: ${updatePinFix(account)} (or --pin-cert FILE with the certificate it exported).`,
      { retryable: false },
    );
  const seen = e instanceof PinMismatch ? e.presented : plan.presented();
  if (seen !== undefined && seen !== pin) return pinMismatchError(account, where, pin, seen);
  const shown = await probe().then(
    (c) => c.sha256,
    () => undefined,
  );
  if (shown !== undefined && shown !== pin) return pinMismatchError(account, where, pin, shown);
  const missingPem =
    settings.pinCertPem === undefined ? ' (accounts.json has the pin but not the certificate)' : '';
  return new MailError(
    'forbidden_operation',
    `${where} presented the pinned certificate, but it does not verify (${code})${missingPem}; nothing was sent. ` +
      `If it expired or Bridge was reset, update the pin (${updatePinFix(account)}).`,
    { retryable: false },
  );
}

/** How long the STARTTLS probe waits for the server's greeting (Bridge greets within a second). */
const GREETING_MS = 5_000;

/** What the STARTTLS probe reads before giving up: a greeting and a tagged answer fit easily. */
const PROBE_MAX_BYTES = 64 * 1024;

/**
 * The certificate a server presents, for `--pin-from-server`, `--pin-sha256` and for naming the
 * presented certificate when a pinned chain check fails. Verification is deliberately off on this
 * one connection: its purpose is to see a certificate nobody vouches for yet. It therefore never
 * sends credentials or any IMAP command but STARTTLS (implicit TLS: nothing at all), and is
 * destroyed as soon as the handshake shows the certificate.
 */
export function fetchServerCertificate(
  host: string,
  port: number,
  security: ImapSecurity,
  options: { timeoutMs?: number } = {},
): Promise<ServerCertificate> {
  if (security === 'insecure-loopback')
    return Promise.reject(
      invalidInput('security', 'plain IMAP (--insecure-loopback) has no certificate to pin'),
    );
  const timeoutMs = options.timeoutMs ?? 15_000;
  const where = `${host}:${port}`;
  return new Promise<ServerCertificate>((resolve, reject) => {
    const sockets: Socket[] = [];
    let done = false;
    const finish = (err: MailError | undefined, cert?: ServerCertificate): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(greetTimer);
      // Only the outermost socket: a TLS socket owns the plain one it wraps after STARTTLS, and
      // destroying that one underneath it crashes Node 20 (measured: SIGSEGV).
      sockets.at(-1)?.destroy();
      if (err !== undefined) reject(err);
      else resolve(cert as ServerCertificate);
    };
    const timer = setTimeout(
      () =>
        finish(new MailError('network_error', `${where} showed no certificate within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    // Each failure names its likely cause and the option that fixes it.
    const fail = (e: Error & { code?: string }): void => {
      const code = e.code ?? '';
      const why =
        code === 'ECONNREFUSED'
          ? `nothing is listening on ${where} (connection refused): check --host and --port, and that the server (Proton Mail Bridge: the app) is running`
          : code.startsWith('ERR_SSL') || code === 'EPROTO' || code === 'ECONNRESET'
            ? security === 'tls'
              ? `the TLS handshake with ${where} failed (${code}): the port may speak plain IMAP first (143; Bridge 1143); use --starttls instead of --tls`
              : `the TLS handshake after STARTTLS with ${where} failed (${code})`
            : `cannot fetch the certificate of ${where}: ${code || e.message}`;
      finish(new MailError('network_error', why, { cause: e }));
    };
    // A port that expects TLS from the start sends no greeting to a plain connection: say so
    // after a few seconds instead of waiting the whole probe out.
    const greetTimer =
      security === 'starttls'
        ? setTimeout(
            () =>
              finish(
                new MailError(
                  'network_error',
                  `${where} sent no IMAP greeting within ${GREETING_MS / 1000} s: the port may expect TLS from the start (usually 993); use --tls instead of --starttls`,
                ),
              ),
            Math.min(GREETING_MS, timeoutMs),
          )
        : undefined;
    const handshake = (plain?: Socket): void => {
      const t = tlsConnect(
        {
          host,
          port,
          ...servernameFor(host),
          ...(plain ? { socket: plain } : {}),
          rejectUnauthorized: false,
        },
        () => {
          const raw = t.getPeerCertificate().raw as Buffer | undefined;
          if (raw === undefined) finish(new MailError('network_error', `${where} presented no certificate`));
          else finish(undefined, fromDer(raw));
        },
      );
      sockets.push(t);
      t.on('error', fail);
    };
    if (security === 'tls') return handshake();
    const s = netConnect({ host, port });
    sockets.push(s);
    s.on('error', fail);
    let buffer = '';
    let sentStarttls = false;
    const onData = (chunk: Buffer): void => {
      clearTimeout(greetTimer);
      buffer += chunk.toString('latin1');
      if (buffer.length > PROBE_MAX_BYTES)
        return finish(new MailError('network_error', `${where} sent too much before STARTTLS`));
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const lineText = buffer.slice(0, nl).trimEnd();
        buffer = buffer.slice(nl + 1);
        if (!sentStarttls) {
          // RFC 3501 §7.1: the greeting is an untagged OK (PREAUTH leaves no room for STARTTLS).
          if (!/^\* OK\b/i.test(lineText))
            return finish(new MailError('upstream_unavailable', `${where} did not greet as an IMAP server`));
          sentStarttls = true;
          s.write('A STARTTLS\r\n');
        } else if (/^A OK\b/i.test(lineText)) {
          s.removeListener('data', onData);
          return handshake(s);
        } else if (/^A (NO|BAD)\b/i.test(lineText)) {
          return finish(
            new MailError('forbidden_operation', `${where} refused STARTTLS`, { retryable: false }),
          );
        }
      }
    };
    s.on('data', onData);
  });
}
