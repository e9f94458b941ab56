import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';

/**
 * Authenticated encryption for secrets at rest: AES-256-GCM (NIST SP 800-38D) with a fresh
 * 96-bit nonce per seal, and scrypt (RFC 7914) to turn a passphrase into a key. Pure node:crypto,
 * so nothing here needs a native module or a network.
 */

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  alg: 'aes-256-gcm';
  /** base64 */
  iv: string;
  /** base64 */
  tag: string;
  /** base64 */
  data: string;
}

/** scrypt cost, stored beside the salt so a later release can raise it without breaking old files. */
export interface ScryptParams {
  name: 'scrypt';
  /** base64, 16 random bytes */
  salt: string;
  N: number;
  r: number;
  p: number;
}

/** Thrown when a key does not open a sealed value: wrong key, or the file was altered. */
export class DecryptError extends Error {
  constructor() {
    super('the key does not open this value (wrong key or altered data)');
    this.name = 'DecryptError';
  }
}

export function randomKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function seal(key: Buffer, plaintext: string, aad: string): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  // The associated data binds the clear metadata (address, scopes, issue time) to the secret:
  // editing one of them makes the token fail to open instead of silently lying.
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    alg: 'aes-256-gcm',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

export function unseal(key: Buffer, sealed: Sealed, aad: string): string {
  const iv = Buffer.from(sealed.iv, 'base64');
  const tag = Buffer.from(sealed.tag, 'base64');
  if (sealed.alg !== 'aes-256-gcm' || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new DecryptError();
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new DecryptError();
  }
}

/**
 * N = 2^15, r = 8 (≈ 32 MiB, ≈ 0.1 s here): RFC 7914 §2's interactive-use range. It runs once per
 * process start that opens the token, never per request.
 */
export function newScryptParams(): ScryptParams {
  return { name: 'scrypt', salt: randomBytes(16).toString('base64'), N: 2 ** 15, r: 8, p: 1 };
}

/** Bounds on stored parameters, so an edited file cannot make us allocate gigabytes or spin. */
function checkParams(p: ScryptParams): void {
  const pow2 = Number.isInteger(Math.log2(p.N));
  if (p.name !== 'scrypt' || !pow2 || p.N < 2 ** 10 || p.N > 2 ** 20 || p.r < 1 || p.r > 32 || p.p !== 1) {
    throw new DecryptError();
  }
}

export function deriveKey(passphrase: string, params: ScryptParams): Promise<Buffer> {
  checkParams(params);
  const salt = Buffer.from(params.salt, 'base64');
  // Node's default maxmem (32 MiB) is exactly 128·N·r for our defaults, which scrypt refuses.
  const maxmem = 256 * params.N * params.r;
  return new Promise((resolve, reject) => {
    scrypt(
      passphrase.normalize('NFC'),
      salt,
      KEY_BYTES,
      { N: params.N, r: params.r, p: params.p, maxmem },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}
