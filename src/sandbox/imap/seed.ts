/**
 * Puts a SeedUser (the demo corpus, or a test's own) into a throwaway Dovecot, so one table of
 * expected answers runs against the Gmail sandbox and real IMAP alike. Gmail's labels become what
 * an IMAP server of the profile has: folders for the system labels, and for user labels keywords
 * (full) or one copy per label folder (bridge, as Proton Mail Bridge shows labels).
 */
import { ImapFlow } from 'imapflow';
import { rawBytes } from '../message.js';
import type { SeedMessage, SeedUser } from '../seed.js';
import { withGluonId } from './bridge-front.js';
import { FOLDERS } from './dovecot-config.js';
import type { DovecotProfile } from './dovecot-config.js';
import type { DovecotServer } from './dovecot.js';

export interface SeedReport {
  /** Messages APPENDed, copies included. */
  appended: number;
  byFolder: Record<string, number>;
  /** Label name → the keyword it became (full profile; empty for bridge). */
  keywords: Record<string, string>;
}

export interface SeedOptions {
  /** Seed only the messages this accepts. */
  filter?: (message: SeedMessage) => boolean;
}

export interface AppendOptions {
  flags?: string[];
  internalDate?: Date | number;
}

/** Gmail's system labels: each maps to a folder or flag, or to nothing IMAP has. */
const SYSTEM_LABELS = new Set([
  'INBOX',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'SPAM',
  'TRASH',
  'DRAFT',
  'CHAT',
]);

/**
 * An IMAP keyword for a Gmail label name. A keyword is an atom (RFC 3501 §9: no space, parens,
 * braces, quotes, backslash, %, *, ] or controls); keeping a conservative set of characters and
 * replacing the rest by `_` gives the same keyword for the same name on every run.
 */
export function keywordForLabel(name: string): string {
  const keyword = name.replace(/[^A-Za-z0-9/_.-]/g, '_');
  return keyword === '' ? '_' : keyword;
}

export interface Placement {
  /** One APPEND per entry, in this order. */
  folders: string[];
  flags: string[];
}

/**
 * Where a message with these Gmail labels lives on an IMAP server of the profile. A message that
 * is both in INBOX and SENT (a note to oneself) is delivered and also kept in Sent: two copies.
 */
export function placeMessage(
  labelIds: readonly string[],
  profile: DovecotProfile,
  labelName: (id: string) => string,
): Placement {
  const layout = FOLDERS[profile];
  const has = (id: string): boolean => labelIds.includes(id);
  const folders: string[] = [];
  if (has('TRASH')) folders.push(layout.trash);
  else if (has('SPAM')) folders.push(layout.junk);
  else if (has('DRAFT')) folders.push(layout.drafts);
  else if (has('INBOX')) folders.push(layout.inbox, ...(has('SENT') ? [layout.sent] : []));
  else if (has('SENT')) folders.push(layout.sent);
  else folders.push(layout.archive);

  const flags: string[] = [];
  if (!has('UNREAD')) flags.push('\\Seen');
  if (has('STARRED')) flags.push('\\Flagged');
  if (has('DRAFT')) flags.push('\\Draft');
  // CATEGORY_* and IMPORTANT have no IMAP counterpart and are dropped.
  const userLabels = labelIds.filter((id) => !SYSTEM_LABELS.has(id) && !id.startsWith('CATEGORY_'));
  for (const id of userLabels) {
    if (layout.labelsRoot) folders.push(`${layout.labelsRoot}/${labelName(id)}`);
    else flags.push(keywordForLabel(labelName(id)));
  }
  return { folders, flags };
}

function connect(server: DovecotServer): ImapFlow {
  // The plain port without STARTTLS: this is setup on loopback, not the code under test.
  return new ImapFlow({
    host: server.host,
    port: server.plainPort,
    secure: false,
    doSTARTTLS: false,
    auth: { user: server.user, pass: server.password },
    logger: false,
    connectionTimeout: 10_000,
    socketTimeout: 60_000,
  });
}

/** Runs `work` on a plain loopback login, as another mail client would (setup and tests). */
export async function withClient<T>(
  server: DovecotServer,
  work: (client: ImapFlow) => Promise<T>,
): Promise<T> {
  const client = connect(server);
  // A socket error after the work is done must not become an unhandled 'error' event.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** Creates the folder and its parents if missing, and subscribes it as a mail client would. */
async function ensureFolder(client: ImapFlow, folder: string): Promise<void> {
  const parts = folder.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const name = parts.slice(0, i).join('/');
    const created = await client.mailboxCreate(name).catch((err: unknown) => {
      const text = (err as { responseText?: string }).responseText ?? '';
      if (/exists/i.test(text)) return undefined;
      throw err;
    });
    if (created?.created) await client.mailboxSubscribe(name);
  }
}

/**
 * APPENDs every message of `user`, oldest first (so UID order is date order in each folder),
 * with its flags and INTERNALDATE, over one connection to the plain port.
 */
export async function seedDovecot(
  server: DovecotServer,
  user: SeedUser,
  options: SeedOptions = {},
): Promise<SeedReport> {
  const names = new Map(user.userLabels.map((l) => [l.id, l.name]));
  const labelName = (id: string): string => names.get(id) ?? id;
  const messages = user.threads
    .flatMap((t) => t.messages)
    .filter((m) => options.filter?.(m) ?? true)
    .map((m, order) => ({ m, order }))
    // Stable: equal dates keep corpus order.
    .sort((a, b) => a.m.internalDate - b.m.internalDate || a.order - b.order)
    .map(({ m }) => ({ m, placement: placeMessage(m.labelIds, server.profile, labelName) }));

  const report: SeedReport = { appended: 0, byFolder: {}, keywords: {} };
  if (!FOLDERS[server.profile].labelsRoot) {
    for (const label of user.userLabels) report.keywords[label.name] = keywordForLabel(label.name);
  }
  await withClient(server, async (client) => {
    const existing = new Set((await client.list()).map((m) => m.path));
    const wanted = [...new Set(messages.flatMap((x) => x.placement.folders))].sort();
    for (const folder of wanted) if (!existing.has(folder)) await ensureFolder(client, folder);
    for (const { m, placement } of messages) {
      // Bridge serves one gluon id per message, the same in every folder and label holding it.
      const raw = server.profile === 'bridge' ? withGluonId(Buffer.from(rawBytes(m.raw))) : rawBytes(m.raw);
      for (const folder of placement.folders) {
        const done = await client.append(folder, raw, placement.flags, new Date(m.internalDate));
        if (!done) throw new Error(`APPEND to ${folder} failed for a message dated ${m.internalDate}`);
        report.appended++;
        report.byFolder[folder] = (report.byFolder[folder] ?? 0) + 1;
      }
    }
  });
  return report;
}

/** Delivers one message (a test's "new mail arrives"); resolves to its UID where the server says. */
export async function appendMessage(
  server: DovecotServer,
  folder: string,
  raw: string | Uint8Array,
  options: AppendOptions = {},
): Promise<{ uid: number | undefined; uidValidity: number | undefined }> {
  return withClient(server, async (client) => {
    const date = options.internalDate === undefined ? undefined : new Date(options.internalDate);
    const bytes = server.profile === 'bridge' ? withGluonId(Buffer.from(rawBytes(raw))) : rawBytes(raw);
    const result = await client.append(folder, bytes, options.flags ?? [], date);
    if (!result) throw new Error(`APPEND to ${folder} failed`);
    return {
      uid: result.uid,
      uidValidity: result.uidValidity === undefined ? undefined : Number(result.uidValidity),
    };
  });
}

async function uidValidity(server: DovecotServer, folder: string): Promise<number> {
  const out = await server.doveadm(['mailbox', 'status', '-u', server.user, 'uidvalidity', folder]);
  const match = /uidvalidity=(\d+)/.exec(out);
  if (!match?.[1]) throw new Error(`no UIDVALIDITY for ${folder} in: ${out.trim()}`);
  return Number(match[1]);
}

/**
 * Empties the folder and gives it a new UIDVALIDITY, as a server does after rebuilding a mailbox:
 * every UID a client remembers for it becomes meaningless (RFC 3501 §2.3.1.1). Other folders are
 * deleted and re-created. INBOX cannot be deleted, so its messages are expunged and
 * `doveadm mailbox update --uid-validity` sets a higher value. Resolves to the new UIDVALIDITY.
 */
export async function recreateMailbox(server: DovecotServer, folder: string): Promise<number> {
  const before = await uidValidity(server, folder);
  const u = ['-u', server.user];
  if (folder.toUpperCase() !== 'INBOX') {
    await server.doveadm(['mailbox', 'delete', ...u, folder]);
    await server.doveadm(['mailbox', 'create', '-s', ...u, folder]);
  } else {
    await server.doveadm(['expunge', ...u, 'mailbox', folder, 'all']);
  }
  // A re-created folder normally gets a new value already; bump it where it did not (INBOX).
  if ((await uidValidity(server, folder)) === before) {
    const next = Math.max(before + 1, Math.floor(Date.now() / 1000));
    await server.doveadm(['mailbox', 'update', ...u, '--uid-validity', String(next), folder]);
  }
  const after = await uidValidity(server, folder);
  if (after === before) throw new Error(`UIDVALIDITY of ${folder} did not change (${before})`);
  return after;
}
