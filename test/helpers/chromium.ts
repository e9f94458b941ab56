import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';
import { tempDir } from './temp.js';

/** Debian's Chromium on PATH, or undefined (the browser tests then skip, saying they need it). */
export function chromiumPath(): string | undefined {
  try {
    const path = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
    return path === '' ? undefined : path;
  } catch {
    return undefined;
  }
}

/** Headless Chromium with a throwaway profile; `close` ends it and removes the profile. */
export async function launchChromium(
  executablePath: string,
  /** bypassCSP: the page's Content-Security-Policy is ignored (to test what escaping alone does). */
  options: { bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = tempDir('mailwarden-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    ...(options.bypassCSP === true ? { bypassCSP: true } : {}),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
