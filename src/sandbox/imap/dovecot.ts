/**
 * Throwaway Dovecot servers for tests, benchmarks and `mailwarden demo --imap`: one private
 * instance per call, configured from a temp dir, gone again after stop(). The config text lives
 * in dovecot-config.ts; this file owns the process: ports, certificate, start, readiness, stop.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { X509Certificate, generateKeyPair } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { renderDovecotConfig, virtualMailboxes } from './dovecot-config.js';
import type { BridgeOptions, DovecotProfile, RunAs } from './dovecot-config.js';
import { guard, killGroup, processGroupAlive } from './process.js';

const run = promisify(execFile);

export interface DovecotOptions {
  profile: DovecotProfile;
  /** Bridge profile only: All Mail shown or hidden, IDLE on or off. */
  bridge?: BridgeOptions;
  user?: string;
  password?: string;
}

export interface DovecotServer {
  profile: DovecotProfile;
  bridge: BridgeOptions;
  host: '127.0.0.1';
  /** Implicit TLS (imaps). */
  tlsPort: number;
  /** Cleartext with STARTTLS offered: seeding, and fault proxies that must read commands. */
  plainPort: number;
  /** ManageSieve (RFC 5804), full profile only: Bridge has no filters over IMAP. */
  sievePort: number | undefined;
  user: string;
  password: string;
  certPem: string;
  /** The certificate's private key: the bridge front end terminates STARTTLS with the same pair. */
  keyPem: string;
  /** Lower-case hex SHA-256 of the certificate's DER, no colons: what a pin compares. */
  certSha256: string;
  configPath: string;
  /** The user's maildir (LAYOUT=fs: folder X is mailDir/X). */
  mailDir: string;
  logPath: string;
  /** The master's pid; it leads its own process group, so the whole instance can be checked. */
  pid: number;
  /** `doveadm -c configPath …args`; resolves to stdout, rejects with stderr on failure. */
  doveadm(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const TERM_GRACE_MS = 2_000;

/** Free loopback ports, held open together so two calls cannot be handed the same one. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/** Dovecot refuses to run login processes as root, so as root use the package's own users. */
async function runAsUsers(): Promise<RunAs> {
  if (process.getuid?.() !== 0) {
    const me = os.userInfo();
    const { stdout } = await run('id', ['-gn']);
    const group = stdout.trim();
    return {
      internalUser: me.username,
      internalGroup: group,
      loginUser: me.username,
      uid: me.uid,
      gid: me.gid,
      root: false,
    };
  }
  const passwd = await readFile('/etc/passwd', 'utf8');
  const entry = (name: string): { uid: number; gid: number } => {
    const fields = passwd
      .split('\n')
      .find((l) => l.startsWith(`${name}:`))
      ?.split(':');
    if (!fields || fields.length < 4) {
      throw new Error(`user "${name}" not found: install Debian's dovecot-core, which creates it`);
    }
    return { uid: Number(fields[2]), gid: Number(fields[3]) };
  };
  const dovecot = entry('dovecot');
  entry('dovenull');
  return { internalUser: 'dovecot', internalGroup: 'dovecot', loginUser: 'dovenull', ...dovecot, root: true };
}

// RSA key generation is a prime search: 50–800 ms here, most of a start. One key per process,
// and a fresh certificate (own serial, own fingerprint) per server, keeps starts near 0.3 s.
let keyPem: Promise<string> | undefined;

async function makeCertificate(dir: string): Promise<{ certPath: string; keyPath: string }> {
  keyPem ??= promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).then((pair) => pair.privateKey);
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  await writeFile(keyPath, await keyPem, { mode: 0o600 });
  // SAN, not CN, is what TLS clients check (RFC 6125); both names a test might dial are in it.
  const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'];
  await run('openssl', ['req', '-x509', '-key', keyPath, '-days', '2', ...subject, '-out', certPath]);
  return { certPath, keyPath };
}

async function tail(file: string, lines = 15): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(empty)';
  }
}

/** Resolves once a connection gets an untagged OK greeting: the login process is really up. */
function greeted(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n')) done(data.startsWith('* OK'));
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

async function waitReady(child: ChildProcess, port: number, deadline: number): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exited early (code ${String(code)}, signal ${String(signal)})`;
  });
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) exited ??= 'exited early';
    if (exited) throw new Error(exited);
    if (await greeted(port, Math.max(100, deadline - Date.now()))) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(exited ?? `no IMAP greeting on port ${port} within ${START_TIMEOUT_MS} ms`);
}

async function attempt(options: Required<DovecotOptions>, runAs: RunAs): Promise<DovecotServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mailwarden-dovecot-'));
  try {
    // The mail user (dovecot) must traverse the dir to reach the home inside it.
    await chmod(dir, 0o755);
    const home = path.join(dir, 'home');
    const mailDir = path.join(home, 'Maildir');
    const logPath = path.join(dir, 'dovecot.log');
    const stdioPath = path.join(dir, 'stdio.log');
    const configPath = path.join(dir, 'dovecot.conf');
    const passwdPath = path.join(dir, 'passwd');
    const sieve = options.profile === 'full';
    const [certFiles, ports] = await Promise.all([makeCertificate(dir), freePorts(sieve ? 3 : 2)]);
    const [tlsPort, plainPort, sievePort] = ports as [number, number, number | undefined];
    const virtuals = virtualMailboxes(options.profile, options.bridge);
    // Everything the mail processes write (maildir, indexes, virtual definitions' indexes) is
    // owned by the mail user; the virtual definitions only need to be readable.
    const owned = [home, mailDir, path.join(home, 'virtual-index')];
    for (const v of virtuals) {
      const vdir = path.join(dir, 'virtual', v.key);
      await mkdir(vdir, { recursive: true });
      await writeFile(path.join(vdir, 'dovecot-virtual'), v.definition);
      owned.push(vdir, path.join(home, 'virtual-index', v.key));
    }
    for (const p of owned) {
      await mkdir(p, { recursive: true });
      await chown(p, runAs.uid, runAs.gid);
    }
    // The auth process runs as the internal user, not root.
    await writeFile(passwdPath, `${options.user}:{PLAIN}${options.password}::::::\n`, { mode: 0o600 });
    await chown(passwdPath, runAs.uid, runAs.gid);
    const instanceName = `mailwarden-${path.basename(dir).slice(-6)}`;
    await writeFile(
      configPath,
      renderDovecotConfig({
        profile: options.profile,
        instanceName,
        dir,
        home,
        logPath,
        passwdPath,
        ...certFiles,
        tlsPort,
        plainPort,
        sievePort,
        runAs,
        bridge: options.bridge,
      }),
    );

    const out = openSync(stdioPath, 'a');
    // detached: the master leads a process group, so stop() and the exit hook reach its children.
    const child = spawn('dovecot', ['-c', configPath, '-F'], { detached: true, stdio: ['ignore', out, out] });
    closeSync(out);
    const pid = child.pid;
    if (pid === undefined) throw new Error('could not spawn dovecot (is it installed and on PATH?)');
    child.unref();
    const guarded = guard(pid, dir);
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        // The whole group at once: signalled alone, the master waits about a second for its
        // log process before it exits.
        killGroup(pid, 'SIGTERM');
        const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), TERM_GRACE_MS);
        await exited;
        clearTimeout(timer);
        for (let i = 0; i < 40 && processGroupAlive(pid); i++) await new Promise((r) => setTimeout(r, 25));
        killGroup(pid, 'SIGKILL');
        guarded.release();
        await rm(dir, { recursive: true, force: true });
      })());

    try {
      await waitReady(child, plainPort, Date.now() + START_TIMEOUT_MS);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const detail = `${await tail(logPath)}\n${await tail(stdioPath)}`;
      await stop();
      throw new Error(`dovecot did not start: ${why}. Last lines of ${logPath}:\n${detail}`);
    }

    const certPem = await readFile(certFiles.certPath, 'utf8');
    const keyPem = await readFile(certFiles.keyPath, 'utf8');
    const certSha256 = new X509Certificate(certPem).fingerprint256.replace(/:/g, '').toLowerCase();
    return {
      profile: options.profile,
      bridge: options.bridge,
      host: '127.0.0.1',
      tlsPort,
      plainPort,
      sievePort,
      user: options.user,
      password: options.password,
      certPem,
      keyPem,
      certSha256,
      configPath,
      mailDir,
      logPath,
      pid,
      async doveadm(args: string[]): Promise<string> {
        try {
          const { stdout } = await run('doveadm', ['-c', configPath, ...args], {
            timeout: 15_000,
            maxBuffer: 64 * 1024 * 1024,
          });
          return stdout;
        } catch (err) {
          const e = err as { stderr?: string; message: string };
          throw new Error(`doveadm ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
        }
      },
      stop,
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts a private Dovecot on two free loopback ports (implicit TLS and plain+STARTTLS) with one
 * user, a fresh self-signed certificate and the profile's folders. About half a second.
 */
export async function startDovecot(options: DovecotOptions): Promise<DovecotServer> {
  const full: Required<DovecotOptions> = {
    profile: options.profile,
    bridge: options.profile === 'bridge' ? (options.bridge ?? {}) : {},
    user: options.user ?? 'alice',
    password: options.password ?? 'mailwarden-test',
  };
  if (!/^[A-Za-z0-9._@+-]+$/.test(full.user) || /[:\n]/.test(full.password)) {
    throw new Error('user must be a plain login name and password must not contain ":" or newlines');
  }
  // Dovecot's config syntax would need quoting for such paths; refuse clearly instead.
  if (/\s/.test(os.tmpdir()))
    throw new Error(`the temp dir "${os.tmpdir()}" contains whitespace; set TMPDIR`);
  const runAs = await runAsUsers();
  // A free port can be taken between our probe and Dovecot's bind; a second try settles it.
  for (let i = 1; ; i++) {
    try {
      return await attempt(full, runAs);
    } catch (err) {
      if (i >= 3 || !(err instanceof Error) || !/Address already in use/.test(err.message)) throw err;
    }
  }
}
