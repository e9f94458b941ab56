import { MailError } from '../mail/errors.js';
import type { Env } from './config.js';

/**
 * Where the state shared between calls lives (MAILWARDEN_STATE): files in the state dir (unset,
 * empty or `files`, the default), or a PostgreSQL database (`postgres://…` or `postgresql://…`).
 * Only the setting is read here; the database module and its driver are loaded by whoever opens
 * a PostgreSQL state, so a files install never loads them.
 */
export type StateSetting = { kind: 'files' } | { kind: 'postgres'; url: string };

export function stateSetting(env: Env): StateSetting {
  const raw = (env['MAILWARDEN_STATE'] ?? '').trim();
  if (raw === '' || raw === 'files') return { kind: 'files' };
  if (/^postgres(ql)?:\/\//.test(raw)) return { kind: 'postgres', url: raw };
  throw new MailError(
    'invalid_input',
    `MAILWARDEN_STATE: ${JSON.stringify(redactUrl(raw))} is not allowed; use "files" (the default: state in files under the state dir) or a PostgreSQL URL, postgres://user@host:port/database`,
    { field: 'MAILWARDEN_STATE', retryable: false },
  );
}

/** A URL as it may be shown: any password replaced by "***". */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
