import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MailError, invalidInput } from '../mail/errors.js';
import { writeFileAtomic } from './atomic.js';

/**
 * Bulk preview tokens: a dry run of bulk_modify pins the exact message set it showed, so the write
 * that follows touches only what the user saw. The store is shared by every process on the same
 * state (MAILWARDEN_STATE): files under the state dir (below), or a PostgreSQL table
 * (src/store/pg/preview-tokens.ts); a dry run on one replica and the write on another meet there.
 * Only the token's SHA-256 is stored, never the token.
 */

export const PREVIEW_TTL_MS = 30 * 60_000;
/** Each record may hold up to 100,000 ids; a handful of live previews per account is enough. */
export const MAX_LIVE_PREVIEWS = 32;

export interface PreviewScope {
  account: string;
  query: string;
  /** changeKey() of the add/remove lists as the caller wrote them. */
  change: string;
}

export interface PreviewStore {
  issue(
    scope: PreviewScope,
    ids: readonly string[],
    now: number,
  ): Promise<{ token: string; expiresAt: number }>;
  /**
   * The pinned ids, if the token is live, unused and was issued for this very account, query and
   * change; otherwise invalid_input on previewToken saying which. Checking does not use the token
   * up (consume does, right before the write), so a call refused for another reason can retry.
   */
  check(token: string, scope: PreviewScope, now: number): Promise<ReadonlySet<string>>;
  /**
   * Spends the token. Of several calls racing with one token, in any processes on the state,
   * exactly one resolves; the others get invalid_input "already used" (or why else it fails).
   */
  consume(token: string, scope: PreviewScope, now: number): Promise<void>;
}

/** What a judgement needs of a stored preview (its ids are read only once it passes). */
export interface StoredPreview extends PreviewScope {
  expiresAt: number;
  /** Kept after use until expiry, so a second use is told "already used", not "unknown". */
  used: boolean;
}

/** 144 random bits: a token cannot be guessed, only handed back. */
export function newPreviewToken(): string {
  return `pv_${randomBytes(18).toString('base64url')}`;
}

/** What the stores key a token by: its SHA-256, hex. */
export function previewTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Throws the invalid_input a token fails with, or returns when it may be used for `scope`. */
export function judgePreview(found: StoredPreview | undefined, scope: PreviewScope, now: number): void {
  if (found === undefined) {
    throw invalidInput(
      'previewToken',
      'unknown token (a token is kept for 30 minutes after its dry run, on the state this server shares); run a dryRun again',
    );
  }
  if (found.expiresAt <= now) {
    throw invalidInput(
      'previewToken',
      `expired at ${new Date(found.expiresAt).toISOString()}; run a dryRun again`,
    );
  }
  if (found.used)
    throw invalidInput('previewToken', 'already used (a preview token is single use); run a dryRun again');
  if (found.account !== scope.account)
    throw invalidInput('previewToken', `issued for account "${found.account}"`);
  if (found.query !== scope.query) {
    throw invalidInput('previewToken', `issued for the query "${found.query}", not "${scope.query}"`);
  }
  if (found.change !== scope.change) {
    throw invalidInput('previewToken', 'issued for a different add/remove change; run a dryRun for this one');
  }
}

/** The answer of a consume that lost: the token's state now says why, else it was just used. */
export function lostConsume(found: StoredPreview | undefined, scope: PreviewScope, now: number): MailError {
  try {
    judgePreview(found, scope, now);
  } catch (e) {
    return e as MailError;
  }
  return invalidInput('previewToken', 'already used (a preview token is single use); run a dryRun again');
}

/**
 * In this process's memory: for contexts built without a state (unit tests, snapshots). A server
 * always has a shared store (src/cli/runtime.ts).
 */
export function memoryPreviewStore(): PreviewStore {
  const records = new Map<string, StoredPreview & { ids: ReadonlySet<string> }>();
  const prune = (account: string, now: number): void => {
    for (const [hash, r] of records) if (r.expiresAt <= now) records.delete(hash);
    // Map iteration is insertion order: the oldest previews give way first.
    const mine = [...records].filter(([, r]) => r.account === account);
    for (const [hash] of mine.slice(0, Math.max(0, mine.length - MAX_LIVE_PREVIEWS + 1)))
      records.delete(hash);
  };
  return {
    issue(scope, ids, now) {
      prune(scope.account, now);
      const token = newPreviewToken();
      const expiresAt = now + PREVIEW_TTL_MS;
      records.set(previewTokenHash(token), { ...scope, ids: new Set(ids), expiresAt, used: false });
      return Promise.resolve({ token, expiresAt });
    },
    check(token, scope, now) {
      const r = records.get(previewTokenHash(token));
      try {
        judgePreview(r, scope, now);
      } catch (e) {
        return Promise.reject(e as Error);
      }
      return Promise.resolve((r as { ids: ReadonlySet<string> }).ids);
    },
    consume(token, scope, now) {
      const r = records.get(previewTokenHash(token));
      try {
        judgePreview(r, scope, now);
      } catch (e) {
        return Promise.reject(e as Error);
      }
      (r as StoredPreview).used = true;
      return Promise.resolve();
    },
  };
}

/** Account names as src/store/accounts.ts allows them (never ".." or a slash). */
const SAFE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** `<expiresAt ms>-<sha256 hex>.json` while live, `.used` once spent. */
const ENTRY = /^(\d{1,16})-([0-9a-f]{64})\.(json|used)$/;

interface Entry {
  file: string;
  expiresAt: number;
  hash: string;
  used: boolean;
}

interface PreviewFile {
  account: string;
  query: string;
  change: string;
  ids: string[];
}

/**
 * Files under `dir` (the state dir's `previews/`): one directory per account (0700), one file per
 * token (0600), named by the time it expires and the SHA-256 of the token, holding the account,
 * query, change and ids, written atomically (src/store/atomic.ts). Consuming renames `.json` to
 * `.used`: rename(2) is atomic, so of processes racing with one token exactly one finds the file
 * to rename. Expired files (used or not) are removed at each issue, and an account keeps at most
 * MAX_LIVE_PREVIEWS unused ones (the oldest give way).
 */
export function filePreviewStore(dir: string): PreviewStore {
  const accountDir = (account: string): string => {
    if (!SAFE.test(account))
      throw new MailError(
        'internal_error',
        `account name ${JSON.stringify(account)} cannot name a preview directory`,
      );
    return join(dir, account);
  };
  const entries = async (path: string): Promise<Entry[]> => {
    let names: string[];
    try {
      names = await readdir(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    return names.flatMap((file) => {
      const m = ENTRY.exec(file);
      return m === null
        ? []
        : [{ file, expiresAt: Number(m[1]), hash: m[2] as string, used: m[3] === 'used' }];
    });
  };
  const remove = (path: string): Promise<void> =>
    unlink(path).catch((e: unknown) => {
      // Another process pruned or spent it first.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    });
  const readRecord = async (path: string): Promise<PreviewFile | undefined> => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const r = JSON.parse(text) as PreviewFile;
      if (typeof r.account === 'string' && typeof r.query === 'string' && Array.isArray(r.ids)) return r;
    } catch {
      // reported below
    }
    throw new MailError('internal_error', `the preview token file ${path} is damaged; run a dryRun again`);
  };
  /** The token's entry and record, in the scope's account's directory or, failing that, any other. */
  const find = async (
    hash: string,
    account: string,
  ): Promise<{ entry: Entry; path: string; record: PreviewFile } | undefined> => {
    const others = (await readdir(dir).catch(() => [] as string[])).filter(
      (a) => a !== account && SAFE.test(a),
    );
    for (const a of [...(SAFE.test(account) ? [account] : []), ...others]) {
      const entry = (await entries(join(dir, a))).find((e) => e.hash === hash);
      if (entry === undefined) continue;
      const path = join(dir, a, entry.file);
      const record = await readRecord(path);
      // Spent between the listing and the read: look again under its new name.
      if (record === undefined) return find(hash, account);
      return { entry, path, record };
    }
    return undefined;
  };
  const stored = (f: { entry: Entry; record: PreviewFile } | undefined): StoredPreview | undefined =>
    f === undefined
      ? undefined
      : {
          account: f.record.account,
          query: f.record.query,
          change: f.record.change,
          expiresAt: f.entry.expiresAt,
          used: f.entry.used,
        };
  return {
    async issue(scope, ids, now) {
      const mine = accountDir(scope.account);
      for (const a of (await readdir(dir).catch(() => [] as string[])).filter((n) => SAFE.test(n))) {
        for (const e of await entries(join(dir, a)))
          if (e.expiresAt <= now) await remove(join(dir, a, e.file));
      }
      const live = (await entries(mine))
        .filter((e) => !e.used && e.expiresAt > now)
        .sort((x, y) => x.expiresAt - y.expiresAt);
      for (const e of live.slice(0, Math.max(0, live.length - MAX_LIVE_PREVIEWS + 1)))
        await remove(join(mine, e.file));
      const token = newPreviewToken();
      const expiresAt = now + PREVIEW_TTL_MS;
      const record: PreviewFile = {
        account: scope.account,
        query: scope.query,
        change: scope.change,
        ids: [...ids],
      };
      await writeFileAtomic(
        join(mine, `${expiresAt}-${previewTokenHash(token)}.json`),
        JSON.stringify(record),
        {
          mode: 0o600,
          dirMode: 0o700,
          // The account's directory holds nothing but its previews.
          tightenDir: true,
        },
      );
      return { token, expiresAt };
    },
    async check(token, scope, now) {
      const found = await find(previewTokenHash(token), scope.account);
      judgePreview(stored(found), scope, now);
      return new Set((found as { record: PreviewFile }).record.ids);
    },
    async consume(token, scope, now) {
      const hash = previewTokenHash(token);
      const found = await find(hash, scope.account);
      judgePreview(stored(found), scope, now);
      const { path } = found as { path: string };
      try {
        await rename(path, path.replace(/\.json$/, '.used'));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        // Another process renamed it first (or pruned it): that one writes, this one does not.
        throw lostConsume(stored(await find(hash, scope.account)), scope, now);
      }
    },
  };
}
