import { describe, expect, it } from 'vitest';
import { MailError } from '../../../src/mail/errors.js';
import type { Tier } from '../../../src/policy/tiers.js';
import { TIERS } from '../../../src/policy/tiers.js';
import { extractGmailApi, fillPath } from './api-surface.js';
import type { ApiMethod } from './api-surface.js';
import { TOKEN_URL, makeClient, recordingTransport } from './helpers.js';

/**
 * The whole Gmail v1 surface, read from the installed generated client, driven through a real
 * GmailClient under each tier set. Expectations are written out here by hand (not derived from
 * the endpoint table) so a table edit that widens egress fails this test.
 */

const API = extractGmailApi();
const ROOT = 'https://gmail.googleapis.com';

const READ = [
  'users.getProfile',
  'users.labels.list',
  'users.labels.get',
  'users.threads.list',
  'users.threads.get',
  'users.messages.list',
  'users.messages.get',
  'users.messages.attachments.get',
  'users.history.list',
  'users.settings.filters.list',
  'users.settings.filters.get',
];
const MANAGE = [
  'users.labels.create',
  'users.labels.patch',
  'users.labels.update',
  'users.labels.delete',
  'users.threads.modify',
  'users.threads.trash',
  'users.threads.untrash',
  'users.messages.modify',
  'users.messages.batchModify',
  'users.messages.trash',
  'users.messages.untrash',
];
const FILTERS = ['users.settings.filters.create', 'users.settings.filters.delete'];
const DRAFTS = ['users.drafts.create'];

const TIER_SETS: Array<{ tiers: Tier[]; allowed: string[] }> = [
  { tiers: ['read'], allowed: READ },
  { tiers: ['read', 'manage'], allowed: [...READ, ...MANAGE] },
  { tiers: ['read', 'manage', 'filters'], allowed: [...READ, ...MANAGE, ...FILTERS] },
  { tiers: ['read', 'manage', 'filters', 'drafts'], allowed: [...READ, ...MANAGE, ...FILTERS, ...DRAFTS] },
];
const ALL_TIERS: Tier[] = [...TIERS];

const NEVER = [
  'users.messages.send',
  'users.drafts.send',
  'users.messages.import',
  'users.messages.insert',
  'users.messages.batchDelete',
  'users.messages.delete',
  'users.threads.delete',
];

interface Outcome {
  reached: boolean;
  code: string | undefined;
  /** Anything the transport saw (token request included). */
  seen: string[];
}

async function attempt(tiers: Iterable<Tier>, method: string, url: string, body?: string): Promise<Outcome> {
  const rec = recordingTransport();
  const client = makeClient(tiers, rec.transport);
  const req = body === undefined ? { method, url } : { method, url, body };
  let code: string | undefined;
  try {
    await client.request(req);
  } catch (e) {
    code = e instanceof MailError ? e.code : `thrown ${String(e)}`;
  }
  return {
    reached: rec.gmail().some((s) => s.url === url && s.method === method),
    code,
    seen: rec.sent.map((s) => `${s.method} ${s.url}`),
  };
}

function bodyFor(m: { httpMethod: string }): string | undefined {
  return m.httpMethod === 'GET' || m.httpMethod === 'DELETE' ? undefined : '{}';
}

/** Refused means: forbidden_operation, and nothing at all reached the transport (no token either). */
function refusedCleanly(o: Outcome): boolean {
  return o.code === 'forbidden_operation' && o.seen.length === 0;
}

describe('the Gmail v1 API surface from @googleapis/gmail', () => {
  it('is extracted in full (the test cannot pass on nothing)', () => {
    expect(API.length).toBeGreaterThanOrEqual(75);
    expect(API.filter((m) => m.mediaPath !== undefined).length).toBeGreaterThanOrEqual(6);
    for (const name of [...NEVER, ...READ, ...MANAGE, ...FILTERS, ...DRAFTS]) {
      expect(API.map((m) => m.name)).toContain(name);
    }
  });

  for (const { tiers, allowed } of TIER_SETS) {
    it(`under tiers ${tiers.join('+')}: exactly ${allowed.length} methods reach the transport`, async () => {
      const wrong: string[] = [];
      for (const m of API) {
        const o = await attempt(tiers, m.httpMethod, `${ROOT}${fillPath(m.path)}`, bodyFor(m));
        const shouldPass = allowed.includes(m.name);
        if (shouldPass && !(o.reached && o.code === undefined && o.seen.includes(`POST ${TOKEN_URL}`))) {
          wrong.push(`${m.name} should pass (${o.code ?? 'not reached'})`);
        }
        if (!shouldPass && !refusedCleanly(o))
          wrong.push(`${m.name} should be refused (${o.code ?? 'passed'})`);
      }
      expect(wrong).toEqual([]);
    });

    it(`under tiers ${tiers.join('+')}: every media-upload path is refused`, async () => {
      const uploads = API.filter((m): m is ApiMethod & { mediaPath: string } => m.mediaPath !== undefined);
      for (const m of uploads) {
        const url = `${ROOT}${fillPath(m.mediaPath)}?uploadType=media`;
        expect(refusedCleanly(await attempt(tiers, m.httpMethod, url, 'From: a\r\n\r\nx')), m.name).toBe(
          true,
        );
        const bare = `${ROOT}${fillPath(m.mediaPath)}`;
        expect(refusedCleanly(await attempt(tiers, m.httpMethod, bare, '{}')), m.name).toBe(true);
      }
    });
  }

  it('send, drafts.send, import, insert, batchDelete and delete are refused with every tier on', async () => {
    for (const name of NEVER) {
      const m = API.find((a) => a.name === name);
      if (m === undefined) throw new Error(`missing ${name}`);
      const o = await attempt(ALL_TIERS, m.httpMethod, `${ROOT}${fillPath(m.path)}`, bodyFor(m));
      expect(refusedCleanly(o), name).toBe(true);
    }
  });
});

const L = '/gmail/v1/users/me/labels';
const SEND = '/gmail/v1/users/me/messages/send';

describe('rewritten hosts are refused before any token leaves', () => {
  const cases = [
    `http://gmail.googleapis.com${L}`,
    `https://gmail.googleapis.com:8443${L}`,
    // Explicit default port: still not the spelling mailwarden builds (decision: refuse).
    `https://gmail.googleapis.com:443${L}`,
    `https://user:pw@gmail.googleapis.com${L}`,
    `https://gmail.googleapis.com@evil.example${L}`,
    `https://gmail.googleapis.com.evil.example${L}`,
    `https://googleapis.com.evil${L}`,
    `https://www.googleapis.com${L}`,
    // Case: DNS would fold it, but the checkpoint compares byte for byte (decision: refuse).
    `https://GMAIL.googleapis.com${L}`,
    `https://142.250.74.42${L}`,
    `https://[2a00:1450:4001:82b::200a]${L}`,
    `https://gmail.googleapis.com.${L}`,
    `https://evil.example/gmail.googleapis.com${L}`,
    `https://gmail.googleapis.com\\@evil.example${L}`,
    `https://oauth2.googleapis.com${L}`,
    `HTTPS://gmail.googleapis.com${L}`,
  ];
  for (const url of cases) {
    it(url, async () => {
      expect(refusedCleanly(await attempt(ALL_TIERS, 'GET', url))).toBe(true);
      expect(refusedCleanly(await attempt(ALL_TIERS, 'POST', url.replace(L, SEND), '{}'))).toBe(true);
    });
  }
});

describe('path and query tricks are refused', () => {
  const cases: Array<[string, string, string?]> = [
    ['POST', `${ROOT}//gmail/v1/users/me/messages/send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me//messages/send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages%2Fsend`, '{}'],
    ['POST', `${ROOT}/gmail%2Fv1%2Fusers%2Fme%2Fmessages%2Fsend`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/%252Fsend`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/../messages/send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/labels/../messages/send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/%2e%2e/messages/send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages\\send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/SEND`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages:send`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/send;x=1`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/send/`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/se\tnd`, '{}'],
    ['POST', `${ROOT}/gmail/v1/users/me/messages/se\nnd`, '{}'],
    ['POST', `${ROOT}/upload/gmail/v1/users/me/messages/send?uploadType=media`, 'x'],
    ['POST', `${ROOT}/resumable/upload/gmail/v1/users/me/messages/send`, 'x'],
    ['POST', `${ROOT}/batch/gmail/v1`, 'x'],
    ['POST', `${ROOT}/batch`, 'x'],
    ['post', `${ROOT}/gmail/v1/users/me/labels`, '{}'],
    ['GET', `${ROOT}//gmail/v1/users/me/labels`],
    ['GET', `${ROOT}/gmail/v1/users/me/labels/`],
    ['GET', `${ROOT}/gmail/v1/users/me/./labels`],
    ['GET', `${ROOT}/gmail/v1/users/me/lab%65ls`],
    ['GET', `${ROOT}/gmail/v1/users/someone@example.com/labels`],
    ['GET', `${ROOT}/gmail/v1/users/me/labels?uploadType=media`],
    ['GET', `${ROOT}/gmail/v1/users/me/labels?alt=media`],
    ['GET', `${ROOT}/gmail/v1/users/me/labels?access_token=t`],
    ['GET', `${ROOT}/gmail/v1/users/me/threads?q=x#frag`],
    ['GET', `${ROOT}/gmail/v1/users/me/threads?q=a&q=b`],
    ['GET', `${ROOT}/gmail/v1/users/me/labels?`],
    ['GET', `${ROOT}/gmail/v1/users/me/messages/18c%2F..%2Fsend`],
    ['GET', `${ROOT}/gmail/v1/users/me/messages/1 2`],
  ];
  for (const [method, url, body] of cases) {
    it(`${method} ${JSON.stringify(url)}`, async () => {
      expect(refusedCleanly(await attempt(ALL_TIERS, method, url, body))).toBe(true);
    });
  }

  it('endpoint parameters still pass (the tricks above are not refused for having a query)', async () => {
    const url = `${ROOT}/gmail/v1/users/me/threads?q=is%3Aunread+from%3Aa&maxResults=10&labelIds=A&labelIds=B`;
    const o = await attempt(['read'], 'GET', url);
    expect(o.code).toBeUndefined();
    expect(o.reached).toBe(true);
  });
});

describe('filters never forward', () => {
  const FILTERS_URL = `${ROOT}/gmail/v1/users/me/settings/filters`;
  const tiers: Tier[] = ['read', 'manage', 'filters'];

  it('a filter that labels passes in the filters tier', async () => {
    const body = JSON.stringify({
      criteria: { from: 'news@example.com' },
      action: { addLabelIds: ['Label_1'] },
    });
    const o = await attempt(tiers, 'POST', FILTERS_URL, body);
    expect(o.code).toBeUndefined();
    expect(o.reached).toBe(true);
  });

  const forwarding = [
    JSON.stringify({ criteria: { from: 'boss@example.com' }, action: { forward: 'thief@evil.example' } }),
    // Duplicate keys: JSON.parse keeps the last, another parser might keep the first.
    '{"action":{"forward":"thief@evil.example"},"action":{}}',
    '{"action":{"\\u0066orward":"thief@evil.example"}}',
    'not json',
  ];
  for (const body of forwarding) {
    it(`refuses ${body}`, async () => {
      expect(refusedCleanly(await attempt(ALL_TIERS, 'POST', FILTERS_URL, body))).toBe(true);
    });
  }

  it('the refusal says why', async () => {
    const client = makeClient(tiers, recordingTransport().transport);
    const body = JSON.stringify({ action: { forward: 'x@evil.example' } });
    await expect(client.request({ method: 'POST', url: FILTERS_URL, body })).rejects.toThrow(/never forward/);
  });
});

describe('tier messages', () => {
  it('names the missing tier for drafts.create and the reason for messages.send', async () => {
    const client = makeClient(['read', 'manage'], recordingTransport().transport);
    await expect(
      client.request({ method: 'POST', url: `${ROOT}/gmail/v1/users/me/drafts`, body: '{}' }),
    ).rejects.toThrow(/"drafts" tier/);
    await expect(client.request({ method: 'POST', url: `${ROOT}${SEND}`, body: '{}' })).rejects.toThrow(
      /no send path/,
    );
  });
});
