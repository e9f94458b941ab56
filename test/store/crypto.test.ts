import { describe, expect, it } from 'vitest';
import { DecryptError, deriveKey, newScryptParams, randomKey, seal, unseal } from '../../src/store/crypto.js';

describe('AES-256-GCM sealing', () => {
  it('round-trips, and refuses a wrong key, altered data or different associated data', () => {
    const key = randomKey();
    const sealed = seal(key, 'refresh-token', 'aad');
    expect(sealed.alg).toBe('aes-256-gcm');
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(unseal(key, sealed, 'aad')).toBe('refresh-token');
    expect(() => unseal(randomKey(), sealed, 'aad')).toThrow(DecryptError);
    expect(() => unseal(key, sealed, 'other')).toThrow(DecryptError);
    const data = Buffer.from(sealed.data, 'base64');
    data[0] = (data[0] ?? 0) ^ 1;
    expect(() => unseal(key, { ...sealed, data: data.toString('base64') }, 'aad')).toThrow(DecryptError);
    expect(() => unseal(key, { ...sealed, tag: 'AAAA' }, 'aad')).toThrow(DecryptError);
  });
});

describe('scrypt key derivation', () => {
  it('is deterministic per salt, differs across salts, and refuses absurd stored parameters', async () => {
    const params = newScryptParams();
    const a = await deriveKey('pass', params);
    expect(a).toHaveLength(32);
    expect((await deriveKey('pass', params)).equals(a)).toBe(true);
    expect((await deriveKey('pass', newScryptParams())).equals(a)).toBe(false);
    expect(() => deriveKey('pass', { ...params, N: 2 ** 30 })).toThrow(DecryptError);
    expect(() => deriveKey('pass', { ...params, N: 1000 })).toThrow(DecryptError);
  });
});
