import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../../src/mcp/untrusted.js';
import { DEFAULT_NOW, DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';
import { imapThreadIdForKey, startImapDemo } from '../../../src/sandbox/imap-account.js';
import type { ImapDemo } from '../../../src/sandbox/imap-account.js';
import type { SeedUser } from '../../../src/sandbox/seed.js';
import { readAccounts, writeAccounts } from '../../../src/store/accounts.js';
import { MARKED, fencedMarks, leaks, markedAuthResults, markedMessage } from '../../helpers/marked-mail.js';
import { MAIN } from '../../helpers/stack.js';
import type { CallOutcome } from '../../helpers/stack.js';

/*
 * Issue 10 on a real Dovecot: an IMAP account trusts only the authserv-id its settings name,
 * and only in the topmost Authentication-Results; without one every message is unchecked and
 * get_profile says how to set it. The marked message's fields stay fenced here too.
 */

const TRUSTED = 'mx.fastmail.example';
const at = (minutesAgo: number): number => DEFAULT_NOW - minutesAgo * 60_000;

const plainMail = (key: string, reports: string[]): string =>
  [
    ...reports,
    'From: Ledgerwise <billing@ledgerwise.example>',
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${key}`,
    'Date: Mon, 30 Nov 2026 06:00:00 +0000',
    `Message-ID: <${key}@ledgerwise.example>`,
    '',
    'Your invoice is attached.',
    '',
  ].join('\r\n');

const FORGED = `${TRUSTED}; spf=pass smtp.mailfrom=ledgerwise.example; dkim=pass header.d=ledgerwise.example; dmarc=pass header.from=ledgerwise.example`;

const seed: SeedUser = {
  email: DEMO_ADDRESS,
  userLabels: [],
  threads: [
    {
      key: 'marked',
      messages: [
        {
          raw: markedMessage([`Authentication-Results: ${markedAuthResults(TRUSTED)}`]),
          labelIds: ['INBOX'],
          internalDate: at(30),
        },
      ],
    },
    {
      key: 'other-on-top',
      messages: [
        {
          raw: plainMail('other-on-top', [
            'Authentication-Results: relay.isp.example; spf=neutral',
            `Authentication-Results: ${FORGED}`,
          ]),
          labelIds: ['INBOX'],
          internalDate: at(20),
        },
      ],
    },
    {
      key: 'trusted-on-top',
      messages: [
        {
          raw: plainMail('trusted-on-top', [
            `Authentication-Results: MX.Fastmail.Example. (border) 1; spf=fail smtp.mailfrom=ledgerwise.example; dmarc=fail header.from=ledgerwise.example`,
            `Authentication-Results : ${FORGED}`,
          ]),
          labelIds: ['INBOX'],
          internalDate: at(10),
        },
      ],
    },
  ],
};

let imap: ImapDemo;
const tid = (key: string) => imapThreadIdForKey(key, seed);

async function serve(
  authservId: string | undefined,
): Promise<{ call: (n: string, a?: object) => Promise<CallOutcome>; close: () => Promise<void> }> {
  const [entry] = await readAccounts(imap.env);
  if (entry?.imap === undefined) throw new Error('no imap account');
  const { authservId: _old, ...rest } = entry.imap;
  await writeAccounts(imap.env, [
    { ...entry, imap: authservId === undefined ? rest : { ...rest, authservId } },
  ]);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: imap.configDir,
      ...imap.env,
      MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
      TZ: 'UTC',
    },
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'mailwarden-test', version: '0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(transport);
  return {
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
      const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
      return {
        isError: r.isError === true,
        structured: (r.structuredContent ?? {}) as Record<string, unknown>,
        text: content.map((c) => c.text ?? '').join('\n'),
      };
    },
    close: () => client.close(),
  };
}

interface Auth {
  unchecked?: true;
  spf?: string;
  dkim?: string;
  dmarc?: string;
  signedBy?: string;
  otherReports: number;
}

async function authOf(s: Awaited<ReturnType<typeof serve>>, key: string): Promise<Auth> {
  const r = await s.call('get_thread', { threadId: tid(key), bodies: 'none' });
  expect(r.isError, r.text).toBe(false);
  return (r.structured['messages'] as Array<{ authentication: Auth }>)[0]?.authentication as Auth;
}

beforeAll(async () => {
  imap = await startImapDemo({ profile: 'full', seed });
}, 120_000);
afterAll(async () => {
  await imap?.close();
});

describe('IMAP account with a trusted authserv-id', () => {
  it('reads only the topmost report, and only when it is the trusted id', async () => {
    const s = await serve(TRUSTED);
    try {
      expect((await s.call('get_profile')).structured['authservId']).toBe(TRUSTED);
      expect(await authOf(s, 'trusted-on-top')).toMatchObject({
        spf: 'fail',
        dmarc: 'fail',
        otherReports: 1,
      });
      expect(await authOf(s, 'trusted-on-top')).not.toHaveProperty('dkim');
      const other = await authOf(s, 'other-on-top');
      expect(other).toEqual({ unchecked: true, headerFrom: expect.any(String) as string, otherReports: 2 });

      const marked = await s.call('get_thread', { threadId: tid('marked'), bodies: 'full' });
      expect(marked.isError, marked.text).toBe(false);
      const nonce = /\u27E6mail ([0-9a-f]+)\u27E7/.exec(marked.text)?.[1] ?? 'none';
      expect(leaks(marked.structured, nonce)).toEqual([]);
      expect(fencedMarks(marked.structured, nonce)).toBeGreaterThan(5);
      const m = (
        marked.structured['messages'] as Array<{ authentication: Auth; headers: Array<{ name: string }> }>
      )[0];
      expect(unfence(m?.authentication.signedBy ?? '')).toBe('zqx-signer.example');
      expect(m?.headers.map((h) => unfence(h.name))).toContain(MARKED.headerName);
    } finally {
      await s.close();
    }
  });
});

describe('IMAP account without an authserv-id', () => {
  it('reads every message as unchecked, and get_profile says how to set the id', async () => {
    const s = await serve(undefined);
    try {
      const p = await s.call('get_profile');
      expect(p.structured).not.toHaveProperty('authservId');
      expect(p.structured['authservIdMissing']).toMatch(/--authserv-id ID/);
      expect(p.structured['authservIdMissing']).toMatch(/mailwarden check --account default/);
      for (const key of ['trusted-on-top', 'other-on-top', 'marked']) {
        const a = await authOf(s, key);
        expect(a.unchecked, key).toBe(true);
        expect(a).not.toHaveProperty('spf');
        expect(a).not.toHaveProperty('dkim');
      }
    } finally {
      await s.close();
    }
  });
});
