import { invalidInput } from '../mail/errors.js';
import type { Env } from './config.js';
import { KEY_BYTES, randomKey } from './crypto.js';

/**
 * Where the token-encryption key lives: the OS keyring (macOS Keychain, Windows Credential
 * Manager, Secret Service / keyutils on Linux) through @napi-rs/keyring. The backend is an
 * interface so tests can run the keyring path without a desktop session.
 */
export interface KeyringBackend {
  readonly name: string;
  /** The stored secret, or null when there is none. Throws KeystoreUnavailable when the store cannot be used. */
  get(service: string, account: string): Promise<string | null>;
  set(service: string, account: string, secret: string): Promise<void>;
}

export const KEYRING_SERVICE = 'mailwarden';
export const KEYRING_ACCOUNT = 'token-key';

/** The OS keyring could not be reached; `message` carries the platform's own words. */
export class KeystoreUnavailable extends Error {
  constructor(detail: string) {
    super(`the OS keyring is not available (${detail})`);
    this.name = 'KeystoreUnavailable';
  }
}

function detailOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

interface NapiEntry {
  getPassword(): string | null;
  setPassword(password: string): void;
}
type NapiModule = {
  Entry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: 'secret-service' } },
  ) => NapiEntry;
};

/**
 * The real OS keyring. The native module is loaded on first use only, so a server that never
 * touches the keyring (passphrase, MAILWARDEN_KEYSTORE=off) never loads it. Without a platform
 * store (headless Linux: no D-Bus session, no Secret Service) calls fail with "Couldn't access
 * platform storage" or the constructor throws a D-Bus error: both become KeystoreUnavailable.
 */
export function osKeyring(): KeyringBackend {
  let loaded: Promise<NapiModule> | undefined;
  const entry = async (service: string, account: string): Promise<NapiEntry> => {
    loaded ??= import('@napi-rs/keyring') as Promise<NapiModule>;
    try {
      const mod = await loaded;
      // On Linux the default store includes the kernel keyutils keyring, which lives in memory:
      // a key kept only there is gone after a reboot and the token with it (measured here: the
      // first write of a process fails, later ones land in keyutils). Secret Service persists.
      return new mod.Entry(
        service,
        account,
        process.platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined,
      );
    } catch (e) {
      throw new KeystoreUnavailable(detailOf(e));
    }
  };
  return {
    name: 'OS keyring',
    async get(service, account) {
      const e = await entry(service, account);
      try {
        return e.getPassword();
      } catch (err) {
        throw new KeystoreUnavailable(detailOf(err));
      }
    },
    async set(service, account, secret) {
      const e = await entry(service, account);
      try {
        e.setPassword(secret);
      } catch (err) {
        throw new KeystoreUnavailable(detailOf(err));
      }
    },
  };
}

/** An in-process keyring: tests, and anyone embedding mailwarden with their own secret store. */
export class MemoryKeyring implements KeyringBackend {
  readonly name = 'in-memory keyring';
  readonly entries = new Map<string, string>();
  get(service: string, account: string): Promise<string | null> {
    return Promise.resolve(this.entries.get(`${service}\u0000${account}`) ?? null);
  }
  set(service: string, account: string, secret: string): Promise<void> {
    this.entries.set(`${service}\u0000${account}`, secret);
    return Promise.resolve();
  }
}

export type KeystoreMode = 'auto' | 'off';

/** MAILWARDEN_KEYSTORE: auto (default) tries the OS keyring; off never touches it. */
export function keystoreMode(env: Env): KeystoreMode {
  const raw = (env['MAILWARDEN_KEYSTORE'] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'auto') return 'auto';
  if (raw === 'off') return 'off';
  throw invalidInput('MAILWARDEN_KEYSTORE', `"${raw}" is not one of auto, off`);
}

function decodeKey(stored: string): Buffer | undefined {
  const key = Buffer.from(stored, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

/** The token key, or undefined when the keyring holds none (or holds something that is not one). */
export async function loadKey(
  backend: KeyringBackend,
  service = KEYRING_SERVICE,
  account = KEYRING_ACCOUNT,
): Promise<Buffer | undefined> {
  const stored = await backend.get(service, account);
  return stored === null ? undefined : decodeKey(stored);
}

/**
 * The existing key, or a new random one stored and read back. Reading back matters: some
 * backends accept a write they cannot return (a locked collection), and a token sealed with a
 * key nobody can fetch again is a token lost.
 */
export async function loadOrCreateKey(
  backend: KeyringBackend,
  service = KEYRING_SERVICE,
  account = KEYRING_ACCOUNT,
): Promise<Buffer> {
  const existing = await loadKey(backend, service, account);
  if (existing !== undefined) return existing;
  const key = randomKey();
  await backend.set(service, account, key.toString('base64'));
  const back = await loadKey(backend, service, account);
  if (back === undefined || !back.equals(key)) {
    throw new KeystoreUnavailable(`${backend.name} accepted the key but did not return it`);
  }
  return key;
}
