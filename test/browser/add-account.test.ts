import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { readTokenFile } from '../../src/store/tokens.js';
import { chromiumPath, launchChromium } from '../helpers/chromium.js';
import { envelopeOf } from '../helpers/envelope.js';
import { startHttp } from '../helpers/interop.js';
import type { HttpProcess } from '../helpers/interop.js';
import { MAIN } from '../helpers/stack.js';
import { OTHER_ADDRESS, makeConfigDir, startSandbox } from '../store/oauth-helpers.js';

/**
 * add_account signs an account in through the real MCP client and the built server: the consent
 * URL reaches the "human" (URL-mode elicitation, or the result when the client cannot show it),
 * headless Debian Chromium approves on the sandbox's consent page, and the server's loopback
 * listener finishes the flow.
 */

const executablePath = chromiumPath();
const BASE = 'https://www.googleapis.com/auth/';
const PASSPHRASE = 'add-account pass';
const SECRET = /1\/\/sandbox-|ya29\.sandbox-/;
const HTTP_TOKEN = 'add-account-http-bearer-0123456789abcdef';

let sb: Sandbox;
let browser: BrowserContext;
let stopBrowser: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (executablePath === undefined) return;
  sb = await startSandbox();
  const launched = await launchChromium(executablePath);
  browser = launched.context;
  stopBrowser = launched.close;
}, 60_000);

const dirs: string[] = [];
function configDir(): string {
  const dir = makeConfigDir(sb);
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await stopBrowser?.();
  await sb?.close();
});

type Protocol = '2025-11-25' | '2026-07-28';

interface Shown {
  mode: string;
  url: string;
  message: string;
  /** 2025-11-25 only; 2026-07-28 has no elicitationId. */
  elicitationId?: string;
}

interface Server {
  dir: string;
  /** URL elicitations the client showed. */
  shown: Shown[];
  /** notifications/elicitation/complete received (their elicitationId). */
  completed: string[];
  call(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ isError: boolean; text: string; structured: Record<string, unknown> | undefined }>;
  stderr(): string;
  /** Every browser visit's page text, once the loopback answered. */
  pages: Array<Promise<string>>;
  close(): Promise<void>;
}

/** Opens the consent URL in Chromium, picks the mailbox, approves; resolves with the loopback's answer. */
async function approve(url: string, account = DEMO_ADDRESS): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.selectOption('#account', account);
    await page.click('#approve');
    return (await page.locator('#result').textContent({ timeout: 30_000 })) ?? '';
  } finally {
    await page.close();
  }
}

async function startServer(opts: {
  protocol: Protocol;
  urlElicitation: boolean;
  /** What the "human" does with a shown URL: approve as this mailbox, decline, or open it and walk away. */
  human?: { account?: string } | 'decline' | 'walk-away';
  env?: Record<string, string>;
  dir?: string;
  /** stdio (default), or `mailwarden http` and Streamable HTTP. */
  wire?: 'stdio' | 'http';
}): Promise<Server> {
  const dir = opts.dir ?? configDir();
  let stderr = '';
  const env = {
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_SANDBOX_URL: sb.url,
    MAILWARDEN_KEYSTORE: 'off',
    MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
    MAILWARDEN_TOOLS: 'read,manage,filters,accounts',
    ...opts.env,
  };
  let transport: Transport;
  let http: HttpProcess | undefined;
  if (opts.wire === 'http') {
    http = await startHttp({ ...env, MAILWARDEN_TOKEN: HTTP_TOKEN });
    transport = new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: { Authorization: `Bearer ${HTTP_TOKEN}` } },
    });
  } else {
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN],
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stderr: 'pipe',
    });
    stdio.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    transport = stdio;
  }
  const client = new Client(
    { name: 'add-account-test', version: '0' },
    {
      capabilities: opts.urlElicitation ? { elicitation: { url: {} } } : {},
      versionNegotiation: { mode: opts.protocol === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  const shown: Shown[] = [];
  const pages: Array<Promise<string>> = [];
  if (opts.urlElicitation)
    client.setRequestHandler('elicitation/create', (request) => {
      const p = request.params as { mode?: string; url?: string; message: string; elicitationId?: string };
      shown.push({
        mode: p.mode ?? 'form',
        url: p.url ?? '',
        message: p.message,
        ...(p.elicitationId === undefined ? {} : { elicitationId: p.elicitationId }),
      });
      if (opts.human === 'decline') return Promise.resolve({ action: 'decline' as const });
      // "accept" says the human agreed to open the page; they approve there while the call waits.
      const human = opts.human ?? {};
      if (human !== 'walk-away' && p.url !== undefined) pages.push(approve(p.url, human.account));
      return Promise.resolve({ action: 'accept' as const });
    });
  const completed: string[] = [];
  if (opts.protocol === '2025-11-25')
    client.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.push(n.params.elicitationId);
    });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe(opts.protocol);
  return {
    dir,
    shown,
    completed,
    pages,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args }, { timeout: 120_000 });
      const content = (r.content ?? []) as Array<{ text?: string }>;
      return {
        isError: r.isError === true,
        text: content.map((c) => c.text ?? '').join('\n'),
        structured: r.structuredContent as Record<string, unknown> | undefined,
      };
    },
    stderr: () => stderr + (http?.stderr() ?? ''),
    async close() {
      await client.close();
      await http?.stop();
    },
  };
}

function tokenFile(dir: string, name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, 'tokens', `${name}.json`), 'utf8')) as Record<string, unknown>;
}

async function refreshTokenOf(dir: string, name: string): Promise<string> {
  const t = await readTokenFile(join(dir, 'tokens', `${name}.json`), {
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_KEYSTORE: 'off',
    MAILWARDEN_TOKEN_PASSPHRASE: PASSPHRASE,
  });
  return t.refreshToken;
}

function accountsJson(dir: string): Array<Record<string, unknown>> {
  const path = join(dir, 'accounts.json');
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, 'utf8')) as { accounts: Array<Record<string, unknown>> }).accounts;
}

/** The token never reaches a result or a log line: the stored one, or any sandbox-made token. */
async function expectNoToken(s: Server, name: string, seen: string[]): Promise<void> {
  const token = await refreshTokenOf(s.dir, name);
  for (const text of [...seen, s.stderr()]) {
    expect(text).not.toContain(token);
    expect(text).not.toMatch(SECRET);
  }
}

function consentParams(url: string): URLSearchParams {
  const u = new URL(url);
  expect(`${u.origin}${u.pathname}`).toBe(`${new URL(sb.url).origin}/o/oauth2/v2/auth`);
  return u.searchParams;
}

describe.skipIf(executablePath === undefined)(
  'add_account signs in, in headless Chromium (needs Debian chromium)',
  () => {
    for (const [protocol, wire] of [
      ['2025-11-25', 'stdio'],
      ['2026-07-28', 'stdio'],
      ['2025-11-25', 'http'],
      ['2026-07-28', 'http'],
    ] as const) {
      it(`${protocol} over ${wire}, URL elicitation: the human gets the URL, approves, and the account is added`, async () => {
        const s = await startServer({ protocol, urlElicitation: true, wire });
        try {
          const r = await s.call('add_account', { name: 'Personal', tiers: ['read', 'manage', 'filters'] });
          expect(r.isError, r.text).toBe(false);
          expect(r.structured).toMatchObject({
            status: 'added',
            account: {
              name: 'personal',
              address: DEMO_ADDRESS,
              provider: 'gmail',
              tiers: ['read', 'manage', 'filters'],
            },
          });
          // The URL went to the human, not into the result the model reads.
          expect(r.text).not.toContain('/o/oauth2/v2/auth');
          expect(s.shown).toHaveLength(1);
          const shown = s.shown[0] as Shown;
          expect(shown.mode).toBe('url');
          expect(shown.message).toContain('"personal"');
          const q = consentParams(shown.url);
          expect(q.get('code_challenge_method')).toBe('S256');
          expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
          expect(q.get('scope')?.split(' ')).toEqual([`${BASE}gmail.modify`, `${BASE}gmail.settings.basic`]);
          expect(q.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
          expect(await s.pages[0]).toContain(`Signed in as ${DEMO_ADDRESS}`);
          if (protocol === '2025-11-25') {
            // The client is told the out-of-band step ended, for the elicitation it showed.
            expect(shown.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
            await expect.poll(() => s.completed).toEqual([shown.elicitationId]);
          }

          const file = tokenFile(s.dir, 'personal');
          expect(file).toMatchObject({ protection: 'passphrase', address: DEMO_ADDRESS });
          expect(JSON.stringify(file)).not.toMatch(SECRET);
          expect(accountsJson(s.dir)).toMatchObject([
            { name: 'personal', address: DEMO_ADDRESS, default: true },
          ]);
          // The new token works: the account reads its mailbox.
          const profile = await s.call('get_profile', { account: 'personal' });
          expect(profile.structured).toMatchObject({ emailAddress: DEMO_ADDRESS });
          await expectNoToken(s, 'personal', [r.text, JSON.stringify(r.structured), profile.text]);
        } finally {
          await s.close();
        }
      });
    }
    for (const protocol of ['2025-11-25', '2026-07-28'] as const) {
      it(`${protocol}, no URL elicitation: the result carries the URL with a note, and the flow completes`, async () => {
        const s = await startServer({ protocol, urlElicitation: false });
        try {
          const r = await s.call('add_account', { name: 'work', tiers: ['read'] });
          expect(r.isError, r.text).toBe(false);
          const pending = r.structured as { status: string; signInUrl: string; note: string };
          expect(pending.status).toBe('pending');
          expect(pending.note).toContain('A person must open signInUrl');
          const q = consentParams(pending.signInUrl);
          expect(q.get('code_challenge_method')).toBe('S256');
          expect(q.get('scope')).toBe(`${BASE}gmail.readonly`);
          expect(accountsJson(s.dir)).toEqual([]);
          // Asking again while the person has not approved yet: the same sign-in, not a new one.
          const again = await s.call('add_account', { name: 'work', tiers: ['read'] });
          expect(again.structured).toMatchObject({ status: 'pending', signInUrl: pending.signInUrl });

          expect(await approve(pending.signInUrl)).toContain(`Signed in as ${DEMO_ADDRESS}`);
          const done = await s.call('add_account', { name: 'work', tiers: ['read'] });
          expect(done.structured).toMatchObject({
            status: 'added',
            account: { name: 'work', address: DEMO_ADDRESS, tiers: ['read'] },
          });
          expect(tokenFile(s.dir, 'work')).toMatchObject({ protection: 'passphrase', address: DEMO_ADDRESS });
          expect(accountsJson(s.dir)).toMatchObject([{ name: 'work', address: DEMO_ADDRESS }]);
          await expectNoToken(s, 'work', [r.text, again.text, done.text]);
        } finally {
          await s.close();
        }
      });
    }

    it('no approval within the wait: a clear error with the retry step, and no half-written account', async () => {
      const s = await startServer({
        protocol: '2025-11-25',
        urlElicitation: true,
        human: 'walk-away',
        // The wait for the human is not the call's budget: the answer is the sign-in's own timeout.
        env: { MAILWARDEN_AUTH_TIMEOUT_MS: '1500', MAILWARDEN_CALL_BUDGET_MS: '300' },
      });
      try {
        const shownBefore = s.shown.length;
        const r = await s.call('add_account', { name: 'late' });
        expect(s.shown.length).toBe(shownBefore + 1);
        expect(r.isError).toBe(true);
        const e = envelopeOf(r.text);
        expect(e.code).toBe('not_authorized');
        expect(e.retryable).toBe(true);
        expect(e.message).toContain('No answer from the browser within 2 second(s)');
        expect(e.message).toContain('Nothing was stored; call add_account again for a new sign-in link.');
        expect(existsSync(join(s.dir, 'tokens', 'late.json'))).toBe(false);
        expect(accountsJson(s.dir)).toEqual([]);
        // The loopback listener is gone: a late approval reaches nobody and stores nothing.
        const page = await browser.newPage();
        await page.goto(s.shown[shownBefore]?.url ?? '');
        await page.click('#approve');
        await page.waitForLoadState();
        expect(await page.locator('#result').count()).toBe(0);
        await page.close();
        expect(existsSync(join(s.dir, 'tokens', 'late.json'))).toBe(false);
        // Retrying as the error says starts a fresh sign-in.
        const retry = await s.call('add_account', { name: 'late' });
        expect(envelopeOf(retry.text).code).toBe('not_authorized');
        expect(s.shown.length).toBe(shownBefore + 2);
        expect(s.shown[shownBefore + 1]?.url).not.toBe(s.shown[shownBefore]?.url);
      } finally {
        await s.close();
      }
    });

    it('no URL elicitation and no approval in time: the next call says so once, then starts afresh', async () => {
      const s = await startServer({
        protocol: '2025-11-25',
        urlElicitation: false,
        env: { MAILWARDEN_AUTH_TIMEOUT_MS: '1500' },
      });
      try {
        const first = await s.call('add_account', { name: 'slow' });
        const url = (first.structured as { signInUrl: string }).signInUrl;
        const callback = new URL(consentParams(url).get('redirect_uri') ?? '');
        // The flow gives up on its own: its loopback listener stops answering.
        await expect
          .poll(
            () =>
              fetch(callback.origin).then(
                () => 'listening',
                () => 'closed',
              ),
            { timeout: 15_000 },
          )
          .toBe('closed');
        const told = await s.call('add_account', { name: 'slow' });
        expect(envelopeOf(told.text)).toMatchObject({ code: 'not_authorized', retryable: true });
        expect(envelopeOf(told.text).message).toContain('call add_account again for a new sign-in link');
        expect(existsSync(join(s.dir, 'tokens', 'slow.json'))).toBe(false);
        expect(accountsJson(s.dir)).toEqual([]);
        const fresh = await s.call('add_account', { name: 'slow' });
        expect(fresh.structured).toMatchObject({ status: 'pending' });
        expect((fresh.structured as { signInUrl: string }).signInUrl).not.toBe(url);
      } finally {
        await s.close();
      }
    });

    it('re-adding re-authenticates the same mailbox; another mailbox is refused unless force: true', async () => {
      const first = await startServer({ protocol: '2025-11-25', urlElicitation: true });
      const dir = first.dir;
      let before: string;
      try {
        expect((await first.call('add_account', { name: 'main' })).structured).toMatchObject({
          status: 'added',
        });
        before = await refreshTokenOf(dir, 'main');
      } finally {
        await first.close();
      }

      // A budget far shorter than a person takes in the browser: waiting for them is not counted.
      const same = await startServer({
        protocol: '2025-11-25',
        urlElicitation: true,
        dir,
        env: { MAILWARDEN_CALL_BUDGET_MS: '300' },
      });
      try {
        const r = await same.call('add_account', { name: 'main' });
        expect(r.structured).toMatchObject({
          status: 'reauthenticated',
          account: { name: 'main', address: DEMO_ADDRESS },
        });
        expect(same.shown[0]?.message).toContain('renew');
        expect(new URL(same.shown[0]?.url ?? '').searchParams.get('login_hint')).toBe(DEMO_ADDRESS);
        const after = await refreshTokenOf(dir, 'main');
        expect(after).not.toBe(before);
        before = after;
      } finally {
        await same.close();
      }

      const other = await startServer({
        protocol: '2025-11-25',
        urlElicitation: true,
        human: { account: OTHER_ADDRESS },
        dir,
      });
      try {
        const refused = await other.call('add_account', { name: 'main' });
        expect(refused.isError).toBe(true);
        const e = envelopeOf(refused.text);
        expect(e.code).toBe('invalid_input');
        expect(e.message).toContain(
          `account "main" is registered as ${DEMO_ADDRESS}, but this sign-in is for ${OTHER_ADDRESS}`,
        );
        expect(e.message).toContain('force: true');
        expect(await other.pages[0]).toContain('Sign-in failed');
        expect(await refreshTokenOf(dir, 'main')).toBe(before);
        expect(accountsJson(dir)).toMatchObject([{ name: 'main', address: DEMO_ADDRESS }]);

        const forced = await other.call('add_account', { name: 'main', force: true });
        expect(forced.structured).toMatchObject({
          status: 'reauthenticated',
          account: { name: 'main', address: OTHER_ADDRESS },
        });
        expect(tokenFile(dir, 'main')).toMatchObject({ address: OTHER_ADDRESS });
        expect(accountsJson(dir)).toMatchObject([{ name: 'main', address: OTHER_ADDRESS }]);
        expect((await other.call('get_profile', { account: 'main' })).structured).toMatchObject({
          emailAddress: OTHER_ADDRESS,
        });
      } finally {
        await other.close();
      }
    });

    it('declining to open the page stores nothing', async () => {
      const s = await startServer({ protocol: '2025-11-25', urlElicitation: true, human: 'decline' });
      try {
        const r = await s.call('add_account', { name: 'nope' });
        expect(envelopeOf(r.text).code).toBe('declined_by_user');
        expect(existsSync(join(s.dir, 'tokens', 'nope.json'))).toBe(false);
        expect(accountsJson(s.dir)).toEqual([]);
      } finally {
        await s.close();
      }
    });

    it('IMAP: passwords are entered with `mailwarden accounts add --imap` on the machine', async () => {
      const dir = configDir();
      writeFileSync(
        join(dir, 'accounts.json'),
        JSON.stringify({
          accounts: [
            {
              name: 'proton',
              provider: 'imap',
              imap: { host: '127.0.0.1', port: 1143, security: 'starttls', user: 'pat' },
              tiers: ['read'],
              default: true,
            },
          ],
        }),
      );
      const s = await startServer({ protocol: '2025-11-25', urlElicitation: true, dir });
      try {
        for (const args of [{ name: 'fastmail', provider: 'imap' }, { name: 'proton' }]) {
          const r = await s.call('add_account', args);
          const e = envelopeOf(r.text);
          expect(e.code).toBe('unsupported');
          expect(e.message).toContain(`mailwarden accounts add ${args.name} --imap`);
          expect(e.message).toContain('never passes through the assistant');
        }
        expect(s.shown).toEqual([]);
      } finally {
        await s.close();
      }
    });
  },
);
