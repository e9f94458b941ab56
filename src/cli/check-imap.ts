import { isMailError } from '../mail/errors.js';
import { openImapSession } from '../providers/imap/connection.js';
import { addCommand } from '../providers/imap/connection-errors.js';
import type { ImapSettings } from '../providers/imap/settings.js';
import type { AccountEntry } from '../store/accounts.js';
import type { Env } from '../store/config.js';
import { imapPasswordProtection, readImapPassword } from '../store/imap-secret.js';
import type { TokenDeps } from '../store/tokens.js';
import type { CheckItem } from './check.js';

/**
 * `mailwarden check --account NAME` for an IMAP account: the stored password, the certificate
 * trust, the login, what the server offers, its special-use folders, the authserv-id, and one
 * read (EXAMINE, so nothing changes). One connection, one login.
 */

const PASSPHRASE = 'MAILWARDEN_TOKEN_PASSPHRASE';
/** What mailwarden uses when offered; without them it falls back (slower, or by name). */
const USEFUL = ['MOVE', 'UIDPLUS', 'CONDSTORE', 'QRESYNC', 'SPECIAL-USE', 'THREAD=REFERENCES', 'OBJECTID'];
const SPECIAL = ['\\Sent', '\\Drafts', '\\Trash', '\\Junk', '\\Archive', '\\All'];

function trustItem(s: ImapSettings): CheckItem {
  if (s.security === 'insecure-loopback')
    return { id: 'tls', status: 'ok', summary: `plain IMAP to ${s.host} (loopback only, no TLS)` };
  const how = s.security === 'tls' ? 'TLS' : 'STARTTLS';
  if (s.pinSha256 !== undefined)
    return {
      id: 'tls',
      status: 'ok',
      summary: `${how}, pinned to the certificate with SHA-256 ${s.pinSha256}; the server presented it`,
    };
  return {
    id: 'tls',
    status: 'ok',
    summary: `${how}, certificate verified against Node's CA list for ${s.host}`,
  };
}

export async function collectImapChecks(
  env: Env,
  entry: AccountEntry & { imap: ImapSettings },
  deps: TokenDeps = {},
): Promise<CheckItem[]> {
  const { name, imap: s } = entry;
  const items: CheckItem[] = [];
  const skipRest = (why: string): CheckItem[] => {
    for (const id of ['tls', 'login', 'capability', 'folders', 'authserv', 'read'] as const)
      if (!items.some((i) => i.id === id)) items.push({ id, status: 'skip', summary: why });
    return items;
  };

  let password: string;
  try {
    const protection = await imapPasswordProtection(env, name);
    password = await readImapPassword(env, name, deps);
    items.push(
      protection === 'none'
        ? {
            id: 'password',
            status: 'warn',
            summary: 'stored in PLAINTEXT',
            fix: `Set ${PASSPHRASE} (or use a session with an OS keyring) and store it again: ${addCommand(name, s)} --password-stdin`,
          }
        : { id: 'password', status: 'ok', summary: `stored, encrypted (${protection ?? '?'})` },
    );
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    items.push({
      id: 'password',
      status: 'fail',
      summary: 'the stored password cannot be read',
      fix: message,
    });
    return skipRest('needs the stored password');
  }

  const session = openImapSession(s, password, { account: name });
  try {
    const seen = await session.use(
      async (client) => {
        const folders = await client.list();
        const inbox = await client.mailboxOpen('INBOX', { readOnly: true });
        return { folders, exists: inbox.exists };
      },
      { retry: true },
    );
    items.push(trustItem(s));
    items.push({
      id: 'login',
      status: 'ok',
      summary: `logged in as ${s.user} at ${s.host}:${s.port} (${session.commands()} IMAP commands for this whole check)`,
    });
    const caps = [...session.capabilities()].sort();
    const missing = USEFUL.filter((c) => !session.capabilities().has(c));
    items.push({
      id: 'capability',
      status: 'ok',
      summary:
        caps.join(' ') +
        (missing.length === 0 ? '' : ` — not offered: ${missing.join(', ')} (mailwarden falls back)`),
    });
    const special = seen.folders
      .filter((f) => f.specialUse !== undefined && f.specialUse !== '')
      .map((f) => `${f.specialUse ?? ''} "${f.path}"`);
    const found = new Set(seen.folders.map((f) => f.specialUse));
    const absent = SPECIAL.filter((u) => !found.has(u));
    items.push(
      special.length === 0
        ? {
            id: 'folders',
            status: 'warn',
            summary: `no special-use folders (RFC 6154) among ${seen.folders.length}`,
            fix: 'mailwarden falls back to folder names (Sent, Trash, Spam…); check that they exist.',
          }
        : {
            id: 'folders',
            status: 'ok',
            summary: `${special.join(', ')}${absent.length === 0 ? '' : `; none marked ${absent.join(', ')}`}`,
          },
    );
    items.push(
      s.authservId === undefined
        ? {
            id: 'authserv',
            status: 'warn',
            summary:
              'no trusted authserv-id: sender authentication reads unchecked on every message of this mailbox',
            fix: `Find the id your server writes first in the topmost Authentication-Results header of mail it received (e.g. "mx.example.com; dkim=pass …"; only that header is ever read) and set it: ${addCommand(name, s)} --authserv-id ID`,
          }
        : { id: 'authserv', status: 'ok', summary: `trusts Authentication-Results from "${s.authservId}"` },
    );
    items.push({ id: 'read', status: 'ok', summary: `EXAMINE INBOX: ${seen.exists} messages` });
  } catch (e) {
    const code = isMailError(e) ? e.code : 'internal_error';
    const message = e instanceof Error ? e.message : String(e);
    const id = /certificate|STARTTLS|TLS handshake/.test(message) ? 'tls' : 'login';
    items.push({ id, status: 'fail', summary: `${s.host}:${s.port}: ${code}`, fix: message });
    return skipRest(`needs a working ${id === 'tls' ? 'certificate' : 'login'}`);
  } finally {
    await session.close();
  }
  return items;
}
