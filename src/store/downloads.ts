/**
 * The only place mailwarden writes files a person asked for (download_attachment,
 * export_thread). Mail chooses the file names and a model steered by mail chooses when to save,
 * so: files go only into MAILWARDEN_DOWNLOAD_DIR, resolved to its real path; names are
 * sanitised to one plain path segment; files are created with O_EXCL (an existing file, or a
 * symlink planted in the directory, is never opened — the next free "name (1).ext" is used);
 * mode 0600; and every write is appended to the action log, which must be writable first.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, realpath, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { isMailError, MailError } from '../mail/errors.js';
import { shownAs } from '../mail/fence-format.js';
import type { ActionLog, ActionRecord } from '../policy/action-log.js';

export const DOWNLOAD_DIR_ENV = 'MAILWARDEN_DOWNLOAD_DIR';

const HOW_TO_SET =
  `Set ${DOWNLOAD_DIR_ENV} to an existing directory (an absolute path) in the server's environment — ` +
  'e.g. the "env" of the mailwarden entry in the MCP client config — and restart the server.';

/** Leaves room for " (999)" and stays under the 255-byte name limit of common filesystems. */
const MAX_NAME_BYTES = 200;
const MAX_SUFFIX = 999;

function capBytes(s: string, max: number): string {
  let out = '';
  for (const ch of s) {
    if (Buffer.byteLength(out + ch) > max) break;
    out += ch;
  }
  return out;
}

/** "report.tar.gz" → ["report", ".tar.gz"]; an extension is short and has no spaces. */
function splitExtension(name: string): [string, string] {
  const m = /(?:\.tar)?\.[^.\s]{1,16}$/i.exec(name);
  if (!m || m.index === 0) return [name, ''];
  return [name.slice(0, m.index), m[0]];
}

/**
 * One harmless path segment from a name the mail (or a model) proposed: no separators, no "..",
 * no leading dot or dash, no control, format (bidi, zero-width, tag), surrogate, private-use or
 * unassigned characters, no characters Windows forbids, no reserved device names, at most 200
 * UTF-8 bytes with the extension kept. "" when nothing usable is left.
 *
 * The result is also exactly what a tool result shows (fence-format shownAs): every character
 * the result cleaner would drop or rewrite (⟦ ⟧ become [ ]) is gone already, so the name a
 * result reports is the name on disk.
 */
export function sanitizeFileName(raw: string): string {
  let s = raw;
  // Each round only removes characters or writes ASCII; a second round settles what the first
  // left at a cut (a joiner the byte cap separated from its emoji, a space before a removed dot).
  for (let round = 0; round < 4; round++) {
    const next = sanitizeOnce(s);
    if (next === s) break;
    s = next;
  }
  return s;
}

function sanitizeOnce(raw: string): string {
  let s = shownAs(raw.normalize('NFC').replace(/[\t\n\v\f\r]/g, ' '))
    .replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]/gu, (ch) => (ch === '\u200D' ? ch : ''))
    // A path keeps its names but not its structure: "../../etc/passwd" → "etc_passwd".
    .split(/[/\\]+/)
    .filter((segment) => !/^\.*$/.test(segment.trim()))
    .join('_')
    .replace(/[<>:"|?*]/g, '_')
    .replace(/\s+/gu, ' ')
    .replace(/\.{2,}/g, '.')
    .replace(/^[\s.]+|[\s.]+$/g, '')
    .replace(/^-+/, '_');
  if (/^(?:con|prn|aux|nul|com\d|lpt\d|conin\$|conout\$)(?:\.|$)/i.test(s)) s = `_${s}`;
  if (Buffer.byteLength(s) <= MAX_NAME_BYTES) return s;
  const [stem, ext] = splitExtension(s);
  return `${capBytes(stem, MAX_NAME_BYTES - Buffer.byteLength(ext)).trimEnd()}${ext}`;
}

export function withSuffix(name: string, n: number): string {
  const [stem, ext] = splitExtension(name);
  return `${stem} (${n})${ext}`;
}

export interface SaveRequest {
  /** Proposed name; sanitised here. */
  name: string;
  /** Used when nothing of `name` survives sanitising. */
  fallbackName: string;
  data: Uint8Array;
  account: string;
  /** The action-log op, e.g. "saveAttachment". */
  op: string;
  threadIds?: string[];
  messageIds?: string[];
  detail?: Record<string, unknown>;
}

export interface SavedFile {
  /** The real path of the download directory. */
  directory: string;
  fileName: string;
  path: string;
  bytes: number;
  sha256: string;
  /** True when the name was taken and a numeric suffix was added. */
  renamed: boolean;
}

export interface Downloads {
  /** MAILWARDEN_DOWNLOAD_DIR as configured; undefined when unset. */
  readonly configured: string | undefined;
  save(request: SaveRequest): Promise<SavedFile>;
}

/**
 * Unset means no writes at all. There is deliberately no default (~/Downloads, the cwd): a
 * server whose files a model can fill should only write where its user pointed it.
 */
export async function resolveDownloadDir(configured: string | undefined): Promise<string> {
  if (configured === undefined || configured.trim() === '')
    throw new MailError(
      'forbidden_operation',
      `No download directory is configured, so nothing was written. ${HOW_TO_SET}`,
    );
  if (!isAbsolute(configured))
    throw new MailError('forbidden_operation', `${DOWNLOAD_DIR_ENV} must be an absolute path. ${HOW_TO_SET}`);
  let real: string;
  try {
    real = await realpath(configured);
  } catch {
    throw new MailError(
      'forbidden_operation',
      `${DOWNLOAD_DIR_ENV} (${configured}) does not exist. ${HOW_TO_SET}`,
    );
  }
  if (!(await stat(real)).isDirectory())
    throw new MailError(
      'forbidden_operation',
      `${DOWNLOAD_DIR_ENV} (${configured}) is not a directory. ${HOW_TO_SET}`,
    );
  // A result could not show such a path as it is, so the path it reported would not be the file.
  if (shownAs(real) !== real)
    throw new MailError(
      'forbidden_operation',
      `${DOWNLOAD_DIR_ENV} resolves to a path with invisible, control or fence-bracket characters, which results cannot show as they are. ${HOW_TO_SET}`,
    );
  return real;
}

// O_EXCL with O_CREAT fails on any existing name, a symlink included, without following it
// (POSIX open(2)); O_NOFOLLOW says the same where O_EXCL alone might not be honoured.
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

async function createExclusive(dir: string, name: string): Promise<{ fh: FileHandle; fileName: string }> {
  for (let n = 0; n <= MAX_SUFFIX; n++) {
    const fileName = n === 0 ? name : withSuffix(name, n);
    try {
      return { fh: await open(join(dir, fileName), CREATE_FLAGS, 0o600), fileName };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ELOOP') continue;
      throw new MailError(
        'internal_error',
        `could not create a file in the download directory: ${code ?? String(e)}`,
      );
    }
  }
  throw new MailError(
    'forbidden_operation',
    `the download directory already holds ${MAX_SUFFIX + 1} files of that name`,
  );
}

async function writeFile(
  dir: string,
  name: string,
  data: Uint8Array,
): Promise<{ fileName: string; path: string }> {
  const { fh, fileName } = await createExclusive(dir, name);
  const path = join(dir, fileName);
  try {
    // The directory could have been swapped for a symlink since it was resolved.
    if (dirname(await realpath(path)) !== dir)
      throw new MailError(
        'forbidden_operation',
        'the download directory changed while writing; nothing was kept',
      );
    await fh.writeFile(data);
    await fh.close();
  } catch (e) {
    await fh.close().catch(() => undefined);
    // The file is ours (O_EXCL created it): nothing half-written stays behind.
    await unlink(path).catch(() => undefined);
    throw isMailError(e) ? e : new MailError('internal_error', `writing the file failed: ${String(e)}`);
  }
  return { fileName, path };
}

export function downloadsFor(configured: string | undefined, log: ActionLog, tool: string): Downloads {
  return {
    configured,
    async save(req) {
      const directory = await resolveDownloadDir(configured);
      await log.ensureWritable();
      const name = sanitizeFileName(req.name) || sanitizeFileName(req.fallbackName) || 'download';
      const sha256 = createHash('sha256').update(req.data).digest('hex');
      const record: Omit<ActionRecord, 'time' | 'outcome'> = { account: req.account, tool, op: req.op };
      if (req.threadIds) record.threadIds = [...req.threadIds];
      if (req.messageIds) record.messageIds = [...req.messageIds];
      const detail = { ...req.detail, directory, bytes: req.data.byteLength, sha256 };
      try {
        const { fileName, path } = await writeFile(directory, name, req.data);
        await log.append({ ...record, detail: { ...detail, fileName }, outcome: 'ok' });
        return { directory, fileName, path, bytes: req.data.byteLength, sha256, renamed: fileName !== name };
      } catch (e) {
        await log.append({
          ...record,
          detail,
          outcome: 'failed',
          error: isMailError(e) ? e.code : String(e),
        });
        throw e;
      }
    },
  };
}
