import { invalidInput } from '../mail/errors.js';
import type { MailError } from '../mail/errors.js';
import type { ImapSecurity, ImapSettings } from '../providers/imap/settings.js';

/**
 * The `imap` object of an accounts.json entry, checked field by field on every read: the file is
 * hand-editable, and a typo must fail with its name rather than connect somewhere unexpected.
 * Secrets are refused outright; the password lives in tokens/imap/<name>.json.
 */

const SECURITY: readonly ImapSecurity[] = ['tls', 'starttls', 'insecure-loopback'];
const FIELDS = ['host', 'port', 'security', 'user', 'pinSha256', 'pinCertPem', 'authservId'] as const;
const SECRET = /pass|secret|token|credential|key/i;

/** `at` is the dotted path shown in errors, e.g. `imap` (accounts.json adds the entry's index). */
export function parseImapSettings(raw: unknown, at: string): ImapSettings {
  const bad = (field: string, problem: string): MailError => invalidInput(`${at}.${field}`, problem);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidInput(
      at,
      'provider "imap" is not supported without an "imap" object (host, port, security, user)',
    );
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (SECRET.test(k))
      throw bad(
        k,
        'secrets never go in accounts.json; `mailwarden accounts add NAME --imap …` stores the password encrypted',
      );
    if (!(FIELDS as readonly string[]).includes(k))
      throw bad(k, `unknown field; allowed: ${FIELDS.join(', ')}`);
  }
  const text = (k: string, required: boolean): string | undefined => {
    const v = o[k];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v.trim() === '') throw bad(k, 'must be a non-empty string');
    return v.trim();
  };
  const host = text('host', true) as string;
  if (/[\s/@]/.test(host)) throw bad('host', `"${host}" is not a host name or address`);
  const port = o['port'];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    throw bad('port', 'must be a whole number from 1 to 65535');
  const security = o['security'];
  if (typeof security !== 'string' || !(SECURITY as readonly string[]).includes(security))
    throw bad('security', `must be one of ${SECURITY.join(', ')}`);
  const out: ImapSettings = {
    host,
    port,
    security: security as ImapSecurity,
    user: text('user', true) as string,
  };
  const pin = text('pinSha256', false);
  if (pin !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(pin))
      throw bad('pinSha256', 'must be 64 lower-case hex digits (SHA-256, no colons)');
    out.pinSha256 = pin;
  }
  const pem = text('pinCertPem', false);
  if (pem !== undefined) {
    if (pin === undefined) throw bad('pinCertPem', 'is only used together with pinSha256');
    if (!pem.startsWith('-----BEGIN CERTIFICATE-----')) throw bad('pinCertPem', 'must be a PEM certificate');
    out.pinCertPem = `${pem}\n`;
  }
  if (security === 'insecure-loopback' && pin !== undefined)
    throw bad('pinSha256', 'plain IMAP (insecure-loopback) has no certificate to pin');
  const authservId = text('authservId', false);
  if (authservId !== undefined) out.authservId = authservId;
  return out;
}
