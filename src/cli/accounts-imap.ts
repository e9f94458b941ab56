import { MailError, invalidInput, isMailError } from '../mail/errors.js';
import { openImapSession } from '../providers/imap/connection.js';
import type { ImapSession } from '../providers/imap/session.js';
import { defaultPort } from '../providers/imap/settings.js';
import type { ImapSecurity, ImapSettings } from '../providers/imap/settings.js';
import {
  fetchServerCertificate,
  isLoopbackHost,
  normalizeSha256,
  readPinCertFile,
} from '../providers/imap/tls.js';
import type { ServerCertificate } from '../providers/imap/tls.js';
import { addAccount, checkName, parseTiers, readAccounts } from '../store/accounts.js';
import type { AccountEntry } from '../store/accounts.js';
import type { Env } from '../store/config.js';
import { writeImapPassword } from '../store/imap-secret.js';

/**
 * `mailwarden accounts add NAME --imap …`: settle the TLS trust (CA or pin), take the password
 * without echo, prove it with one login, then store the password encrypted and the settings in
 * accounts.json. Nothing is saved unless the login worked.
 */

type Flags = ReadonlyMap<string, string | true>;

function value(flags: Flags, k: string, what: string): string | undefined {
  const v = flags.get(k);
  if (v === undefined) return undefined;
  if (v === true || v.trim() === '') throw invalidInput(`--${k}`, `needs a value (${what})`);
  return v.trim();
}

function securityOf(flags: Flags): ImapSecurity {
  const chosen = (['tls', 'starttls', 'insecure-loopback'] as const).filter((k) => flags.has(k));
  if (chosen.length > 1)
    throw invalidInput(
      `--${chosen[1] ?? ''}`,
      'choose one of --tls (default), --starttls, --insecure-loopback',
    );
  return chosen[0] ?? 'tls';
}

/** The settings the flags describe; every refusal names its flag and what is allowed. */
export function imapSettingsFromFlags(flags: Flags): ImapSettings {
  const security = securityOf(flags);
  const host = value(flags, 'host', 'the IMAP server, e.g. 127.0.0.1 for Proton Mail Bridge');
  if (host === undefined)
    throw invalidInput('--host', 'required: the IMAP server, e.g. imap.fastmail.com or 127.0.0.1');
  if (/[\s/@]/.test(host)) throw invalidInput('--host', `"${host}" is not a host name or address`);
  const rawPort = value(flags, 'port', 'a port number');
  const port = rawPort === undefined ? defaultPort(security) : Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw invalidInput('--port', `"${rawPort ?? ''}" is not a port (1-65535)`);
  const user = value(flags, 'user', 'the IMAP login, usually the address');
  if (user === undefined) throw invalidInput('--user', 'required: the IMAP login (usually the mail address)');
  if (security === 'insecure-loopback' && !isLoopbackHost(host))
    throw invalidInput(
      '--insecure-loopback',
      `${host} is not a loopback address (127.0.0.1, ::1, localhost): plain IMAP would send the password across the network in clear. Use --tls or --starttls`,
    );
  const settings: ImapSettings = { host, port, security, user };
  const authservId = value(flags, 'authserv-id', 'the authserv-id in your server’s Authentication-Results');
  if (authservId !== undefined) {
    if (/[\s;]/.test(authservId)) throw invalidInput('--authserv-id', 'an authserv-id has no spaces or ";"');
    settings.authservId = authservId;
  }
  return settings;
}

/** --pin-sha256 / --pin-cert / --pin-from-server: the certificate to trust, or none (CA verification). */
async function pinFromFlags(
  flags: Flags,
  settings: ImapSettings,
  print: (line: string) => void,
): Promise<ServerCertificate | undefined> {
  const given = ['pin-sha256', 'pin-cert', 'pin-from-server'].filter((k) => flags.has(k));
  if (given.length === 0) return undefined;
  if (given.length > 1)
    throw invalidInput(`--${given[1] ?? ''}`, 'choose one of --pin-sha256, --pin-cert, --pin-from-server');
  if (settings.security === 'insecure-loopback')
    throw invalidInput(`--${given[0] ?? ''}`, 'plain IMAP (--insecure-loopback) has no certificate to pin');
  const where = `${settings.host}:${settings.port}`;
  const file = value(flags, 'pin-cert', 'a PEM file');
  if (file !== undefined) return readPinCertFile(file);
  const presented = await fetchServerCertificate(settings.host, settings.port, settings.security);
  const wanted = value(flags, 'pin-sha256', 'the SHA-256 fingerprint');
  if (wanted !== undefined) {
    const hex = normalizeSha256(wanted, '--pin-sha256');
    if (hex !== presented.sha256)
      throw invalidInput(
        '--pin-sha256',
        `${where} presents a certificate with SHA-256 ${presented.sha256}, not ${hex}; nothing was saved`,
      );
    return presented;
  }
  print(`${where} presents a certificate with SHA-256 ${presented.sha256}.`);
  print(
    'Pinning it is trust on first use: mailwarden trusts whatever answered just now. On your own machine ' +
      '(Proton Mail Bridge on 127.0.0.1) that is Bridge; elsewhere compare the fingerprint with one from the server’s operator.',
  );
  return presented;
}

const MAX_PASSWORD_BYTES = 64 * 1024;

async function readPasswordStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > MAX_PASSWORD_BYTES)
      throw invalidInput('--password-stdin', 'stdin is far too long for a password');
    chunks.push(b);
  }
  // One trailing newline is the shell's (echo, a file), not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Reads a line from the terminal in raw mode, echoing nothing. */
function promptHidden(prompt: string): Promise<string> {
  const { stdin, stderr } = process;
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (err?: MailError): void => {
      stdin.removeListener('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (err === undefined) resolve(typed);
      else reject(err);
    };
    const onData = (text: string): void => {
      for (const ch of text) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003' || (ch === '\u0004' && typed === ''))
          return finish(new MailError('invalid_input', 'cancelled: no password given; nothing was saved'));
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Where the password will come from, decided before anything touches the network. */
function passwordSource(flags: Flags): 'stdin' | 'tty' {
  if (flags.has('password-stdin')) return 'stdin';
  if (process.stdin.isTTY) return 'tty';
  throw invalidInput(
    '--password-stdin',
    'stdin is not a terminal, so the password cannot be typed without echo; pipe it in with --password-stdin',
  );
}

async function readPassword(source: 'stdin' | 'tty', settings: ImapSettings): Promise<string> {
  const password =
    source === 'stdin'
      ? await readPasswordStdin()
      : await promptHidden(`IMAP password for ${settings.user} at ${settings.host}: `);
  if (password === '') throw invalidInput('password', 'the password is empty; nothing was saved');
  return password;
}

/** Refusals that need accounts.json, checked before the password is asked for. */
function checkRegistry(list: readonly AccountEntry[], name: string, alias: string | undefined): void {
  const same = list.find((a) => a.name === name);
  if (same !== undefined && same.provider !== 'imap')
    throw invalidInput(
      'name',
      `"${name}" is a ${same.provider} account; remove it first or pick another name`,
    );
  const owner = (key: string): AccountEntry | undefined =>
    list.find((a) => a.name !== name && (a.name === key || a.alias === key));
  const clash = owner(name) ?? (alias === undefined ? undefined : owner(checkName(alias, 'alias')));
  if (clash !== undefined)
    throw invalidInput(alias === undefined ? 'name' : '--alias', `already names account "${clash.name}"`);
}

/**
 * Re-adding an account (a new password, say) keeps what was settled before unless a flag says
 * otherwise: the pinned certificate (a self-signed one such as Bridge's would fail CA checks
 * without it) and the authserv-id.
 */
function keepStoredTrust(
  list: readonly AccountEntry[],
  name: string,
  settings: ImapSettings,
  pinGiven: boolean,
  print: (line: string) => void,
): void {
  const old = list.find((a) => a.name === name && a.provider === 'imap')?.imap;
  if (old === undefined) return;
  if (!pinGiven && old.pinSha256 !== undefined && settings.security !== 'insecure-loopback') {
    settings.pinSha256 = old.pinSha256;
    if (old.pinCertPem !== undefined) settings.pinCertPem = old.pinCertPem;
    print(
      `Keeping the certificate pinned for "${name}" (SHA-256 ${old.pinSha256}); --pin-sha256, --pin-cert or --pin-from-server replaces it.`,
    );
  }
  if (settings.authservId === undefined && old.authservId !== undefined) settings.authservId = old.authservId;
}

export async function addImapAccount(
  rawName: string,
  flags: Flags,
  env: Env,
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<AccountEntry> {
  const name = checkName(rawName, 'name');
  const settings = imapSettingsFromFlags(flags);
  const alias = value(flags, 'alias', 'another name for the account');
  const tiers = value(flags, 'tiers', 'a list such as read,manage');
  if (tiers !== undefined) parseTiers(tiers, '--tiers');
  const list = await readAccounts(env);
  checkRegistry(list, name, alias);
  const source = passwordSource(flags);
  const pin = await pinFromFlags(flags, settings, print);
  if (pin !== undefined) {
    settings.pinSha256 = pin.sha256;
    settings.pinCertPem = pin.pem;
  }
  keepStoredTrust(list, name, settings, pin !== undefined, print);
  const password = await readPassword(source, settings);
  const session = openImapSession(settings, password, { account: name });
  try {
    await session.use(() => Promise.resolve(), { retry: true });
    print(`Logged in as ${settings.user} at ${settings.host}:${settings.port}.`);
    const stored = await writeImapPassword(env, name, password);
    if (stored.warning !== undefined) warn(`WARNING: the IMAP password is ${stored.warning}`);
    const entry = await addAccount(env, {
      name,
      imap: settings,
      replace: true,
      makeDefault: flags.has('default'),
      ...(alias === undefined ? {} : { alias }),
      ...(tiers === undefined ? {} : { tiers }),
      // The login is the address for most servers (Bridge, Fastmail, Dovecot with full names).
      ...(/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(settings.user) ? { address: settings.user } : {}),
    });
    await readyAgentLabel(env, entry, settings, session, print, warn);
    return entry;
  } finally {
    await session.close();
  }
}

/**
 * policy.json's agentLabel made ready on the login that proved the password. Where the label is a
 * folder (Proton Mail Bridge: Labels/NAME) the agent's first move out of the inbox would otherwise
 * pay its CREATE, a second on Bridge (bench/imap-loop.mjs). Only for an account the agent can
 * move mail in (the manage tier) and a label that is set. A failure leaves the account saved and
 * says so: the first move creates the folder, as it does when a person deletes it later.
 */
async function readyAgentLabel(
  env: Env,
  entry: AccountEntry,
  settings: ImapSettings,
  session: ImapSession,
  print: (line: string) => void,
  warn: (line: string) => void,
): Promise<void> {
  if (!entry.tiers.includes('manage')) return;
  const later = "the agent's first move out of the inbox creates it";
  try {
    const { effectivePolicy, loadPolicy } = await import('../policy/write-policy.js');
    const label = effectivePolicy(await loadPolicy(env), entry.name).rules.agentLabel;
    if (label === null) return;
    const { ImapMailbox } = await import('../providers/imap/mailbox.js');
    const mailbox = new ImapMailbox({ account: entry.name, settings, session });
    const ready = await mailbox.prepareAgentLabel(label);
    if (ready.kind === 'keyword') return;
    print(
      ready.created
        ? `Created the folder ${ready.place} for policy.json's agentLabel: mail the agent moves out of the inbox is also filed there.`
        : `The folder ${ready.place} for policy.json's agentLabel is there already.`,
    );
  } catch (e) {
    const why = isMailError(e) ? e.message : String(e);
    warn(`The account is saved, but the agent label's folder was not prepared (${why}); ${later}.`);
  }
}
