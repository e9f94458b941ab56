import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_LIVE_PREVIEWS,
  PREVIEW_TTL_MS,
  filePreviewStore,
  memoryPreviewStore,
  previewTokenHash,
} from '../../src/store/preview-tokens.js';
import type { PreviewStore } from '../../src/store/preview-tokens.js';
import { SCHEMA_VERSION, pgPreviewStore } from '../../src/store/pg/index.js';
import { usePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/*
 * Bulk preview tokens on every store (src/store/preview-tokens.ts): files under a state dir,
 * PostgreSQL, and the in-process one unit-test contexts get. "Two stores" are two instances on one
 * state (two processes' worth: two store objects on one dir, or two pools on one database).
 */

const T0 = Date.parse('2026-06-18T08:00:00Z');
const scope = { account: 'default', query: 'from:news', change: '{"add":["A"],"remove":[]}' };

const pgc = usePostgres();

interface Backend {
  /** Another store on the same state. */
  store(): Promise<PreviewStore>;
  /** Every stored byte of the state, as text (file names and contents, or every row). */
  dump(): Promise<string>;
  /** How many tokens are stored, used or not. */
  stored(): Promise<number>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'files',
    async () => {
      const dir = join(tempDir('mailwarden-previews-'), 'previews');
      const files = (): string[] =>
        readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => join(e.parentPath, e.name));
      return {
        store: async () => filePreviewStore(dir),
        dump: async () =>
          files()
            .map((f) => `${f}\n${readFileSync(f, 'utf8')}`)
            .join('\n'),
        stored: async () => files().length,
      };
    },
  ],
  [
    'postgres',
    async () => {
      const url = await pgc.database('previews');
      const open = () => pgc.stateDb(url);
      const db = await open();
      const rows = async () =>
        (await db.pool.query<Record<string, unknown>>('SELECT * FROM mailwarden_preview_tokens')).rows;
      return {
        store: async () => pgPreviewStore(await open()),
        dump: async () => JSON.stringify(await rows()),
        stored: async () => (await rows()).length,
      };
    },
  ],
  [
    'memory',
    async () => {
      const one = memoryPreviewStore();
      return { store: async () => one, dump: async () => '', stored: async () => -1 };
    },
  ],
];

/** The invalid_input a call failed with, as {field, message}. */
async function refusal(p: Promise<unknown>): Promise<{ code: string; field: string; message: string }> {
  const e = (await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (x: unknown) => x,
  )) as { code: string; field: string; message: string };
  return { code: e.code, field: e.field, message: e.message };
}

describe.each(backends)('preview tokens on %s', (_name, make) => {
  let b: Backend;
  let a: PreviewStore;
  let other: PreviewStore;
  beforeAll(async () => {
    b = await make();
    a = await b.store();
    other = await b.store();
  }, 60_000);

  it('pin a set that another store on the same state reads, for 30 minutes, then expire', async () => {
    const { token, expiresAt } = await a.issue(scope, ['m1', 'm2'], T0);
    expect(token).toMatch(/^pv_[A-Za-z0-9_-]{24}$/);
    expect(expiresAt).toBe(T0 + PREVIEW_TTL_MS);
    expect([...(await other.check(token, scope, T0 + PREVIEW_TTL_MS - 1))].sort()).toEqual(['m1', 'm2']);
    expect(await refusal(other.check(token, scope, T0 + PREVIEW_TTL_MS))).toEqual({
      code: 'invalid_input',
      field: 'previewToken',
      message: `previewToken: expired at ${new Date(T0 + PREVIEW_TTL_MS).toISOString()}; run a dryRun again`,
    });
    expect((await refusal(a.consume(token, scope, T0 + PREVIEW_TTL_MS))).message).toMatch(/expired/);
  });

  it('refuse another account, query or change without using the token up; are single use', async () => {
    const { token } = await a.issue(scope, ['m1'], T0);
    const why = async (s: typeof scope) => (await refusal(other.check(token, s, T0 + 1))).message;
    expect(await why({ ...scope, account: 'work' })).toBe('previewToken: issued for account "default"');
    expect(await why({ ...scope, query: 'from:other' })).toBe(
      'previewToken: issued for the query "from:news", not "from:other"',
    );
    expect(await why({ ...scope, change: '{}' })).toMatch(/different add\/remove change/);
    expect((await refusal(other.consume(token, { ...scope, query: 'x' }, T0 + 1))).message).toMatch(/query/);
    expect((await other.check(token, scope, T0 + 1)).size).toBe(1);
    await other.consume(token, scope, T0 + 2);
    const used = await refusal(a.check(token, scope, T0 + 3));
    expect(used).toEqual({
      code: 'invalid_input',
      field: 'previewToken',
      message: 'previewToken: already used (a preview token is single use); run a dryRun again',
    });
    expect((await refusal(a.consume(token, scope, T0 + 3))).message).toMatch(/already used/);
  });

  it('two stores consuming one token at once: exactly one goes ahead, the other is told "already used"', async () => {
    for (let round = 0; round < 10; round++) {
      const { token } = await a.issue(scope, ['m1', 'm2', 'm3'], T0);
      const results = await Promise.allSettled([
        a.consume(token, scope, T0 + 1),
        other.consume(token, scope, T0 + 1),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toMatchObject({ code: 'invalid_input', field: 'previewToken' });
      expect(String((lost.reason as Error).message)).toMatch(/already used/);
    }
  });

  it('are unguessable, and an unknown one is refused', async () => {
    const x = (await a.issue(scope, ['m1'], T0)).token;
    const y = (await a.issue(scope, ['m1'], T0)).token;
    expect(x).not.toBe(y);
    const r = await refusal(other.check('pv_guess', scope, T0));
    expect(r.field).toBe('previewToken');
    expect(r.message).toMatch(/unknown token/);
  });

  it(`keep at most ${MAX_LIVE_PREVIEWS} unused per account, the oldest giving way; other accounts keep theirs`, async () => {
    const work = { ...scope, account: 'work' };
    const theirs = (await a.issue(work, ['w1'], T0)).token;
    const first = (await a.issue(scope, ['m1'], T0 + 1)).token;
    const rest: string[] = [];
    for (let i = 0; i < MAX_LIVE_PREVIEWS; i++) rest.push((await a.issue(scope, ['m1'], T0 + 2 + i)).token);
    expect((await refusal(other.check(first, scope, T0 + 100))).message).toMatch(/unknown token/);
    for (const t of rest) expect((await other.check(t, scope, T0 + 100)).size).toBe(1);
    expect((await other.check(theirs, work, T0 + 100)).size).toBe(1);
  });

  // The in-process store keeps nothing anywhere to look at.
  if (_name !== 'memory')
    it('store no token, only its SHA-256; expired ones are removed at the next issue', async () => {
      const { token } = await a.issue({ ...scope, account: 'gone' }, ['m9'], T0);
      const dump = await b.dump();
      expect(dump).not.toContain(token);
      expect(dump).toContain(previewTokenHash(token));
      expect(dump).not.toContain(token.slice(3));
      const before = await b.stored();
      expect(before).toBeGreaterThan(1);
      // Long after every token above expired: the issue prunes them all, used or not.
      await other.issue(scope, ['m1'], T0 + 2 * PREVIEW_TTL_MS);
      expect(await b.stored()).toBe(1);
    });
});

describe('preview token files', () => {
  it('are 0600 in 0700 directories, one per token, named by expiry and hash', async () => {
    const root = tempDir('mailwarden-previews-');
    const dir = join(root, 'previews');
    const s = filePreviewStore(dir);
    const { token, expiresAt } = await s.issue(scope, ['m1', 'm2'], T0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'default')).mode & 0o777).toBe(0o700);
    const name = `${expiresAt}-${previewTokenHash(token)}.json`;
    expect(readdirSync(join(dir, 'default'))).toEqual([name]);
    expect(statSync(join(dir, 'default', name)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'default', name), 'utf8'))).toEqual({
      ...scope,
      ids: ['m1', 'm2'],
    });
    await s.consume(token, scope, T0 + 1);
    expect(readdirSync(join(dir, 'default'))).toEqual([name.replace(/\.json$/, '.used')]);
  });

  it('refuse an account name that could leave the directory', async () => {
    const s = filePreviewStore(join(tempDir('mailwarden-previews-'), 'previews'));
    await expect(s.issue({ ...scope, account: '../x' }, ['m1'], T0)).rejects.toMatchObject({
      code: 'internal_error',
    });
  });
});

describe('preview tokens in PostgreSQL', () => {
  it('are rows of the migrated schema keyed by the token hash, used set by the consume', async () => {
    const url = await pgc.cluster.createDatabase('previews_rows');
    const db = await pgc.stateDb(url);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const v = (await c.query<{ v: number }>('SELECT max(version) AS v FROM mailwarden_schema')).rows[0];
      expect(v?.v).toBe(SCHEMA_VERSION);
      const s = pgPreviewStore(db);
      const { token } = await s.issue(scope, ['m1', 'm2'], T0);
      await s.consume(token, scope, T0 + 1);
      const rows = (
        await c.query<{ token_hash: string; account: string; ids: string[]; used: boolean }>(
          'SELECT token_hash, account, ids, used FROM mailwarden_preview_tokens',
        )
      ).rows;
      expect(rows).toEqual([
        { token_hash: previewTokenHash(token), account: 'default', ids: ['m1', 'm2'], used: true },
      ]);
    } finally {
      await c.end();
    }
  });
});
