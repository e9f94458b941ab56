import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/mail/errors.js';
import { DEMO_ADDRESS, DEMO_FACTS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { CLIENT_KINDS, WIRES, connectClient, startHttp } from '../helpers/interop.js';
import type { AnyClient, Envelope, HttpProcess, Outcome, ServerTarget } from '../helpers/interop.js';
import { RELAXED_POLICY } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The interop matrix: SDK v1 (1.32) and SDK v2 in both protocol revisions, over stdio and
 * Streamable HTTP, against the built server and the sandbox. In every combination each error
 * code the server produces reaches the client as that code (the envelope, readable without
 * structuredContent), and successful results pass the client's own outputSchema validation.
 */

const TOKEN = 'interop-token-0123456789abcdef0123456789abcdef';
const LIMITED = 'limited@interop.example';
const REVOKED = 'revoked@interop.example';
const BROKEN = 'broken@interop.example';
const THROTTLED = 'throttled@interop.example';

function smallUser(email: string): SeedUser {
  return {
    email,
    userLabels: [],
    threads: [
      {
        key: 'only',
        messages: [
          {
            raw: [
              'From: Sam <sam@sender.example>',
              `To: ${email}`,
              'Subject: hello',
              'Date: Sun, 01 Nov 2026 09:00:00 GMT',
              `Message-ID: <only.${email}>`,
              'Content-Type: text/plain; charset=utf-8',
              '',
              'hello',
              '',
            ].join('\r\n'),
            labelIds: ['INBOX'],
            internalDate: Date.UTC(2026, 10, 1, 9),
          },
        ],
      },
    ],
  };
}

let sandbox: Sandbox;
let dir: string;
let http: HttpProcess;
let target: ServerTarget;
const tid = (key: string): string => sandbox.threadIdForKey(DEMO_ADDRESS, key);

/**
 * One config dir serving every case: the demo mailbox as the default account, an account whose
 * token lacks the modify scope, one whose token was revoked, and one whose token file cannot be
 * read (a directory where the file should be).
 */
function writeConfig(): string {
  const d = tempDir('mailwarden-interop-');
  const { clientId, clientSecret } = sandbox.oauthClient;
  writeFileSync(
    join(d, 'credentials.json'),
    JSON.stringify({ installed: { client_id: clientId, client_secret: clientSecret } }),
  );
  mkdirSync(join(d, 'tokens'));
  const token = (name: string, refresh: string): void =>
    writeFileSync(join(d, 'tokens', `${name}.json`), JSON.stringify({ refresh_token: refresh }));
  token('main', sandbox.refreshTokenFor(DEMO_ADDRESS));
  token('limited', sandbox.issueRefreshToken(LIMITED, ['gmail.readonly']));
  token('throttled', sandbox.issueRefreshToken(THROTTLED, ['gmail.modify']));
  const revoked = sandbox.issueRefreshToken(REVOKED, ['gmail.modify']);
  token('revoked', revoked);
  sandbox.revokeRefreshToken(revoked);
  mkdirSync(join(d, 'tokens', 'broken.json'));
  const entry = (name: string, address: string, tiers: string[], isDefault: boolean) => ({
    name,
    alias: name,
    address,
    provider: 'gmail',
    tiers,
    default: isDefault,
    added: '2026-11-01T00:00:00.000Z',
  });
  writeFileSync(
    join(d, 'accounts.json'),
    JSON.stringify({
      accounts: [
        entry('main', DEMO_ADDRESS, ['read', 'manage', 'filters'], true),
        entry('limited', LIMITED, ['read', 'manage'], false),
        entry('revoked', REVOKED, ['read'], false),
        entry('broken', BROKEN, ['read'], false),
        entry('throttled', THROTTLED, ['read'], false),
      ],
    }),
  );
  writeFileSync(join(d, 'policy.json'), JSON.stringify(RELAXED_POLICY));
  return d;
}

/** Runs `fn` while policy.json cannot be read (a directory in its place), then puts it back. */
async function withUnreadablePolicy<T>(fn: () => Promise<T>): Promise<T> {
  const path = join(dir, 'policy.json');
  renameSync(path, `${path}.keep`);
  mkdirSync(path);
  try {
    return await fn();
  } finally {
    rmSync(path, { recursive: true });
    renameSync(`${path}.keep`, path);
  }
}

async function withFaults<T>(
  rules: Parameters<Sandbox['faults']['script']>[0],
  fn: () => Promise<T>,
): Promise<T> {
  sandbox.faults.script(rules);
  try {
    return await fn();
  } finally {
    sandbox.faults.clear();
  }
}

let png: { threadId: string; messageId: string; partId: string } | undefined;

async function findPng(c: AnyClient): Promise<{ threadId: string; messageId: string; partId: string }> {
  if (png) return png;
  for (const key of DEMO_FACTS.keys.withAttachments) {
    const t = (await c.call('get_thread', { threadId: tid(key), bodies: 'none' })).structured as {
      messages: Array<{ id: string; attachments: Array<{ mimeType: string; partId: string }> }>;
    };
    for (const m of t.messages) {
      // mimeType is the sender's word, fenced as mail-derived text.
      const a = m.attachments.find((x) => x.mimeType.includes('image/png'));
      if (a) return (png = { threadId: tid(key), messageId: m.id, partId: a.partId });
    }
  }
  throw new Error('the demo corpus has no PNG attachment');
}

let seq = 0;
const filterArgs = (): Record<string, unknown> => {
  seq += 1;
  return { criteria: { from: `interop${seq}@filters.example` }, addLabels: [`Interop ${seq}`] };
};
const filterCount = async (c: AnyClient): Promise<number> =>
  ((await c.call('list_filters')).structured?.['filters'] as unknown[]).length;

interface ErrorCase {
  code: (typeof ERROR_CODES)[number];
  how: string;
  call(c: AnyClient): Promise<Outcome>;
  check?(e: Envelope, c: AnyClient): Promise<void> | void;
}

const ERROR_CASES: ErrorCase[] = [
  {
    code: 'invalid_input',
    how: 'search with maxResults 500',
    call: (c) => c.call('search', { query: 'x', maxResults: 500 }),
    check: (e) => expect(e.field).toBe('maxResults'),
  },
  {
    code: 'not_found',
    how: 'get_thread of an unknown id',
    call: (c) => c.call('get_thread', { threadId: 'ffffffffffffffff' }),
  },
  {
    code: 'rate_limited',
    // Its own account: after a final 429 the server sends nothing for that user until
    // Retry-After has passed, so a later client of the same HTTP server gets the remaining wait.
    how: 'Gmail answers 429 with Retry-After 120',
    call: (c) =>
      withFaults([{ method: 'getProfile', kind: '429', retryAfterSeconds: 120 }], () =>
        c.call('get_profile', { account: 'throttled' }),
      ),
    check: (e) => {
      expect(e.retryable).toBe(true);
      expect(e.retryAfterSeconds).toBeGreaterThan(0);
      expect(e.retryAfterSeconds).toBeLessThanOrEqual(120);
    },
  },
  {
    code: 'upstream_unavailable',
    how: 'Gmail answers 503 to everything',
    call: (c) => withFaults([{ method: 'getProfile', kind: 'http503' }], () => c.call('get_profile')),
    check: (e) => expect(e.retryable).toBe(true),
  },
  {
    code: 'deadline_exceeded',
    how: 'Gmail never answers, and the call budget (MAILWARDEN_CALL_BUDGET_MS 6 s) runs out first',
    call: (c) => withFaults([{ method: 'getProfile', kind: 'hang' }], () => c.call('get_profile')),
    check: (e) => {
      expect(e.retryable).toBe(true);
      expect(e.message).toMatch(/MAILWARDEN_CALL_BUDGET_MS/);
    },
  },
  {
    code: 'network_error',
    how: 'Gmail resets every connection',
    call: (c) => withFaults([{ method: 'getProfile', kind: 'reset' }], () => c.call('get_profile')),
  },
  {
    code: 'declined_by_user',
    how: 'the human declines create_filter (MAILWARDEN_CONFIRM=ask)',
    async call(c) {
      const before = await filterCount(c);
      c.asked.length = 0;
      c.answers.push({ action: 'decline' });
      const r = await c.call('create_filter', filterArgs());
      expect(c.asked).toHaveLength(1);
      expect(await filterCount(c)).toBe(before);
      return r;
    },
    check: (e) => expect(e.retryable).toBe(false),
  },
  {
    code: 'forbidden_operation',
    how: 'download_attachment while MAILWARDEN_DOWNLOAD_DIR is unset',
    async call(c) {
      const p = await findPng(c);
      return c.call('download_attachment', p);
    },
    check: (e) => expect(e.message).toMatch(/MAILWARDEN_DOWNLOAD_DIR/),
  },
  {
    code: 'unsupported',
    how: 'read_attachment of a PNG',
    async call(c) {
      return c.call('read_attachment', await findPng(c));
    },
  },
  {
    code: 'insufficient_scope',
    how: 'archive on an account whose token has only gmail.readonly',
    async call(c) {
      return c.call('archive', { account: 'limited', threadId: sandbox.threadIdForKey(LIMITED, 'only') });
    },
  },
  {
    code: 'needs_reauth',
    how: 'get_profile on an account whose refresh token was revoked',
    call: (c) => c.call('get_profile', { account: 'revoked' }),
    check: (e) => expect(e.message).toMatch(/mailwarden auth/),
  },
  {
    code: 'not_authorized',
    how: 'get_profile on an account whose token file cannot be read',
    call: (c) => c.call('get_profile', { account: 'broken' }),
  },
  {
    code: 'result_too_large',
    how: 'read_attachment of 100,000 three-byte characters (the two copies pass 512 KiB)',
    async call(c) {
      seq += 1;
      const raw = [
        'From: Wide <wide@interop.example>',
        `To: ${DEMO_ADDRESS}`,
        `Message-ID: <wide-${seq}@interop.example>`,
        'Subject: wide text',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8; name="wide.txt"',
        'Content-Disposition: attachment; filename="wide.txt"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('語'.repeat(100_000)).toString('base64'),
      ].join('\r\n');
      const { threadId } = sandbox.deliver(DEMO_ADDRESS, raw, ['INBOX']);
      return c.call('read_attachment', { threadId, partId: '', maxChars: 100_000 });
    },
    check: (e) => {
      expect(e.retryable).toBe(false);
      expect(e.message).toMatch(/at most 524288 bytes/);
    },
  },
  {
    code: 'internal_error',
    how: 'a write while policy.json cannot be read',
    call: (c) => withUnreadablePolicy(() => c.call('archive', { threadId: tid(DEMO_FACTS.keys.dmarcZip) })),
  },
];

beforeAll(async () => {
  sandbox = await Sandbox.start({
    users: [demoCorpus(), ...[LIMITED, REVOKED, BROKEN, THROTTLED].map(smallUser)],
  });
  dir = writeConfig();
  const env = {
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_SANDBOX_URL: sandbox.url,
    MAILWARDEN_TOOLS: 'read,manage,filters',
    MAILWARDEN_CONFIRM: 'ask',
    // Below the 20 s request deadline, so a request that never answers meets the budget first.
    MAILWARDEN_CALL_BUDGET_MS: '6000',
  };
  http = await startHttp({ ...env, MAILWARDEN_TOKEN: TOKEN });
  target = { env, http: { url: http.url, token: TOKEN } };
});
afterAll(async () => {
  await http?.stop();
  await sandbox?.close();
});

it('covers every error code the server has', () => {
  expect(ERROR_CASES.map((c) => c.code).sort()).toEqual([...ERROR_CODES].sort());
});

for (const kind of CLIENT_KINDS) {
  for (const wire of WIRES) {
    describe(`${kind} over ${wire}`, () => {
      let c: AnyClient;
      beforeAll(async () => {
        c = await connectClient(kind, wire, target);
      });
      afterAll(async () => {
        await c?.close();
      });

      it('negotiates the revision it asked for and lists tools with output schemas', async () => {
        const expected = kind === 'v2-2026-07-28' ? '2026-07-28' : '2025-11-25';
        if (kind !== 'v1' || wire === 'http') expect(c.protocol()).toBe(expected);
        const tools = await c.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['search', 'get_thread', 'create_filter', 'archive']),
        );
        for (const t of tools) {
          expect(t.outputSchema, t.name).toBeDefined();
          const props = (t.outputSchema as { properties?: object } | undefined)?.properties ?? {};
          expect(Object.keys(props).length, t.name).toBeGreaterThan(0);
        }
      });

      it('successful results pass the client’s outputSchema validation', async () => {
        // callTool validates structuredContent against the listed schema and throws if it fails.
        const calls: Array<[string, Record<string, unknown>]> = [
          ['get_profile', {}],
          ['search', { query: 'in:inbox', maxResults: 5 }],
          ['get_thread', { threadId: tid(DEMO_FACTS.keys.dmarcZip) }],
          ['list_labels', {}],
          ['list_filters', {}],
          ['list_accounts', {}],
          ['modify_labels', { threadId: tid(DEMO_FACTS.keys.dmarcZip), add: [`Interop/${kind}/${wire}`] }],
        ];
        for (const [name, args] of calls) {
          const r = await c.call(name, args);
          expect(r.isError, `${name}: ${r.text}`).toBe(false);
          expect(r.structured, name).toBeTypeOf('object');
        }
        c.answers.push({ action: 'accept', content: { confirm: true } });
        const created = await c.call('create_filter', filterArgs());
        expect(created.isError, created.text).toBe(false);
        expect(created.structured?.['confirmation']).toBe('confirmed');
      });

      for (const ec of ERROR_CASES) {
        it(`${ec.code}: ${ec.how}`, async () => {
          const r = await ec.call(c);
          expect(r.isError, r.text).toBe(true);
          // Nothing a client would validate against the tool's outputSchema.
          expect(r.structured).toBeUndefined();
          expect(r.error?.code, r.text).toBe(ec.code);
          expect(typeof r.error?.retryable).toBe('boolean');
          expect(r.error?.message).not.toBe('');
          if (r.error) await ec.check?.(r.error, c);
        });
      }
    });
  }
}
