import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { cliEnv, makeConfigDir, startCli, startSandbox } from '../store/oauth-helpers.js';
import { chromiumPath, launchChromium } from '../helpers/chromium.js';

/**
 * A real browser on the real consent flow: headless Debian Chromium, driven by playwright-core,
 * walks the sandbox's consent page while `mailwarden auth` runs as a child process and waits on
 * its loopback redirect.
 */

const executablePath = chromiumPath();
const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';

let sb: Sandbox;
let context: BrowserContext;
let stopBrowser: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (executablePath === undefined) return;
  sb = await startSandbox();
  const browser = await launchChromium(executablePath);
  context = browser.context;
  stopBrowser = browser.close;
}, 60_000);

afterAll(async () => {
  await stopBrowser?.();
  await sb?.close();
});

/** Starts `mailwarden auth`, opens the URL it prints in a fresh tab. */
async function begin(extraEnv: Record<string, string> = {}) {
  const dir = makeConfigDir(sb);
  const run = startCli(['auth', '--no-browser'], cliEnv(dir, sb, extraEnv));
  const page = await context.newPage();
  await page.goto(await run.url);
  return { dir, run, page, token: join(dir, 'tokens', 'default.json') };
}

async function resultText(page: Page): Promise<string> {
  return (await page.locator('#result').textContent({ timeout: 15_000 })) ?? '';
}

describe.skipIf(executablePath === undefined)(
  'consent in a real browser (needs Chromium: apt-get install chromium)',
  () => {
    it('Approve stores an encrypted token with scopes, address and issue time', async () => {
      const { run, page, token } = await begin({ MAILWARDEN_TOKEN_PASSPHRASE: 'browser pass' });
      await expect(page.locator('#client').textContent()).resolves.toBe(sb.oauthClient.clientId);
      await expect(page.locator('#scopes').textContent()).resolves.toContain(MODIFY);
      await page.click('#approve');
      expect(await resultText(page)).toContain(`Signed in as ${DEMO_ADDRESS}`);
      const r = await run.done;
      expect(r.code).toBe(0);
      const file = JSON.parse(readFileSync(token, 'utf8')) as Record<string, unknown>;
      expect(file).toMatchObject({ protection: 'passphrase', address: DEMO_ADDRESS, scopes: [MODIFY] });
      expect(Date.now() - Date.parse(String(file['issuedAt']))).toBeLessThan(60_000);
      expect(JSON.stringify(file)).not.toContain('1//sandbox-');
      await page.close();
    });

    it('Deny ends with access_denied and nothing stored', async () => {
      const { run, page, token } = await begin();
      await page.click('#deny');
      expect(await resultText(page)).toContain('Access was denied');
      const r = await run.done;
      expect(r.code).toBe(1);
      expect(r.err).toContain('not_authorized: Access was denied on the consent screen (access_denied)');
      expect(r.err).toContain('Nothing was stored');
      expect(existsSync(token)).toBe(false);
      await page.close();
    });

    it('a redirect whose state was tampered with is refused, nothing stored', async () => {
      const { run, page, token } = await begin();
      // Rewrite the consent page's redirect on its way to the browser, as a forged one would look.
      await page.route('**/o/oauth2/v2/auth', async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = new URL(answer.headers()['location'] ?? '');
        location.searchParams.set('state', 'forged-state');
        await route.fulfill({ status: 302, headers: { location: location.href } });
      });
      await page.click('#approve');
      expect(await resultText(page)).toContain('different "state"');
      const r = await run.done;
      expect(r.code).toBe(1);
      expect(r.err).toContain('cross-site request forgery');
      expect(existsSync(token)).toBe(false);
      await page.close();
    });

    it('no answer before the timeout ends with a clear error, nothing stored', async () => {
      const { run, page, token } = await begin({ MAILWARDEN_AUTH_TIMEOUT_MS: '2000' });
      await expect(page.locator('#approve').isVisible()).resolves.toBe(true);
      const r = await run.done;
      expect(r.code).toBe(1);
      expect(r.err).toContain('No answer from the browser within 2 second(s). Nothing was stored');
      expect(existsSync(token)).toBe(false);
      // The loopback listener is gone: a late Approve reaches nobody.
      await page.click('#approve');
      await page.waitForLoadState();
      expect(await page.locator('#result').count()).toBe(0);
      await page.close();
    });
  },
);
