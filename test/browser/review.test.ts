/// <reference lib="dom" />
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import { chromiumPath, launchChromium } from '../helpers/chromium.js';
import { MAIN } from '../helpers/stack.js';

/*
 * The review page in a real Chromium, as a security boundary and as a tool. Hostile subjects and
 * sender names reach the page two ways: mail the agent really archived (through the server and
 * its write policy, which logs subject and sender), and log lines planted in the action log with
 * a hostile string in every field. The page must run no script from them — checked once with the
 * CSP on and once with Chromium told to ignore the CSP, so escaping alone is proven — and its
 * layout must hold. Then the page restores mail (back in the inbox, on the sandbox and on
 * Dovecot), refuses a cross-site form post and a wrong CSRF token, and its login link works once.
 */

const executablePath = chromiumPath();
// A page load runs a restore through the real server and mailbox; the machine may be busy.
vi.setConfig({ testTimeout: 120_000 });

/** Every string a hostile sender could put in a subject or a name; each tries to call mwFired(). */
const HOSTILE: readonly string[] = [
  '<script>mwFired()</script>',
  '<img src=x onerror=mwFired()>',
  '"><svg onload=mwFired()>',
  "'><svg/onload=mwFired()>",
  '<details open ontoggle=mwFired()>x</details>',
  '<iframe srcdoc="<script>parent.mwFired()</script>"></iframe>',
  '<a href="javascript:mwFired()">click me</a>',
  'javascript:mwFired()',
  '<body onload=mwFired()>',
  '<input autofocus onfocus=mwFired()>',
  '<meta http-equiv="refresh" content="0;url=javascript:mwFired()">',
  '<base href="http://attacker.example/">',
  '<style>body{display:none}</style>',
  '</td></tr></table></form><form action="http://attacker.example/"><button>go</button>',
  '<button formaction="javascript:mwFired()">restore</button>',
  '{{constructor.constructor("mwFired()")()}}',
  '${mwFired()}',
  '<object data="javascript:mwFired()"></object>',
  '<math><mtext><table><mglyph><style><img src=x onerror=mwFired()>',
  '<noscript><p title="</noscript><img src=x onerror=mwFired()>">',
  '\u202Eexe.tnemyap\u202C invoice',
  'Pay\u200B\u200Bpal \u2066account\u2069 \u200Fverify',
  'tag\u{E0041}\u{E0042}smuggle',
  `${'A'.repeat(3000)}`,
  `${'<b>long</b> '.repeat(300)}`,
  'line one\r\nBcc: injected\r\n\r\n<script>mwFired()</script>',
  '\u001b]0;pwned\u0007\u001b[2J terminal escape',
];

// eslint-disable-next-line no-control-regex -- the controls are what the page must not show
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}\u0000-\u0008\u001b]/u;

interface Review {
  proc: ChildProcess;
  url: string;
  stop(): void;
}

/** `mailwarden review` (or `http`) as a child; resolves with the one-time link it prints. */
function startReview(
  args: string[],
  env: Record<string, string>,
  stream: 'stdout' | 'stderr',
): Promise<Review> {
  const proc = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  return new Promise((resolve, reject) => {
    proc[stream]?.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /(http:\/\/\S+\/login\?token=[A-Za-z0-9_-]+)/.exec(text);
      if (m) resolve({ proc, url: m[1] as string, stop: () => proc.kill('SIGTERM') });
    });
    proc.once('exit', (code) => reject(new Error(`${args[0]} ended (${code}): ${text}`)));
  });
}

function hostileMail(subject: string, name: string, i: number): string {
  const enc = (s: string): string => `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`;
  return [
    `From: ${enc(name)} <hostile${i}@attacker.example>`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${enc(subject)}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <hostile-${i}@attacker.example>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'hello',
    '',
  ].join('\r\n');
}

/** Log lines a compromised or older writer could have left, a hostile string in every field. */
function plantedRecords(account: string, at: string): string {
  return HOSTILE.map((h, i) =>
    JSON.stringify({
      time: at,
      account,
      tool: h,
      op: 'move',
      kind: 'move',
      action: 'archive',
      actor: i % 2 === 0 ? 'agent' : 'rule',
      call: `planted-${h}`,
      unit: 'thread',
      ids: [`"><img src=x onerror=mwFired()>${i}`],
      count: 1,
      outcome: i % 3 === 0 ? 'refused' : i % 3 === 1 ? 'moved' : 'unknown',
      sender: `${h}@x.example`,
      subject: h,
      senderRule: h,
      refusedBy: h,
      reason: h,
      error: h,
    }),
  )
    .map((l) => `${l}\n`)
    .join('');
}

async function pageState(page: Page) {
  return page.evaluate(() => {
    const all = Array.from(document.querySelectorAll('*'));
    return {
      scripts: document.scripts.length,
      handlers: all.filter((e) => Array.from(e.attributes).some((a) => a.name.toLowerCase().startsWith('on')))
        .length,
      jsUrls: all.filter((e) =>
        Array.from(e.attributes).some((a) => /^\s*javascript:/i.test(a.value) && a.name !== 'value'),
      ).length,
      embeds: document.querySelectorAll(
        'iframe, object, embed, base, meta[http-equiv], style, noscript, math',
      ).length,
      text: document.body.innerText,
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      tallestCell: Math.max(
        ...Array.from(document.querySelectorAll('td')).map((td) => td.getBoundingClientRect().height),
      ),
      rows: document.querySelectorAll('tbody tr').length,
    };
  });
}

describe.skipIf(executablePath === undefined)('the review page in Chromium (needs Chromium)', () => {
  let b: Backend;
  let context: BrowserContext;
  let unsafe: BrowserContext;
  let stopBrowsers: Array<() => Promise<void>> = [];
  const fired: string[] = [];
  let review: Review;
  let hostileThreads: string[] = [];
  let plainThreads: string[] = [];

  beforeAll(async () => {
    b = await startBackend('gmail', {
      policy: { default: { dailyMoveCap: 100, protectCorrespondents: false, inboxOnlyMoves: false } },
    });
    const sb = b.gmail?.sandbox;
    if (sb === undefined) throw new Error('no sandbox');
    hostileThreads = HOSTILE.map(
      (h, i) => sb.deliver(DEMO_ADDRESS, hostileMail(h, h, i), ['INBOX']).threadId,
    );
    const archived = await b.call('archive', { threadIds: hostileThreads });
    expect(archived.isError, archived.text).toBe(false);
    const s = await b.call('search', { query: 'in:inbox -from:attacker.example', maxResults: 5 });
    plainThreads = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
    expect((await b.call('archive', { threadIds: plainThreads.slice(0, 3) })).isError).toBe(false);
    // The server's clock is DEFAULT_NOW (backends.ts): planted lines are of the same day.
    const at = new Date(Date.parse(b.env['MAILWARDEN_NOW'] as string) + 60_000).toISOString();
    appendFileSync(join(b.configDir, 'action-log.jsonl'), plantedRecords('default', at));
    review = await startReview(['review', '--no-browser'], b.env, 'stdout');
    const safe = await launchChromium(executablePath as string);
    context = safe.context;
    const bypass = await launchChromium(executablePath as string, { bypassCSP: true });
    unsafe = bypass.context;
    stopBrowsers = [safe.close, bypass.close];
    for (const c of [context, unsafe])
      await c.exposeBinding('mwFired', ({ page }) => {
        fired.push(page.url());
      });
    // `context` signs in to `review` once; the tests below use that session.
    const signIn = await context.newPage();
    expect((await signIn.goto(review.url))?.status()).toBe(200);
    await signIn.close();
  }, 180_000);

  afterAll(async () => {
    review?.stop();
    for (const stop of stopBrowsers) await stop();
    await b?.close();
  });

  it('a login link works once; the session cookie is HttpOnly and SameSite=Strict; no cookie, no page', async () => {
    const own = await startReview(['review', '--no-browser'], b.env, 'stdout');
    const mine = await launchChromium(executablePath as string);
    const page = await mine.context.newPage();
    const first = await page.goto(own.url);
    expect(first?.status()).toBe(200);
    await expect(page.locator('h2').first().textContent()).resolves.toContain('default');
    const port = new URL(own.url).port;
    const cookie = (await mine.context.cookies()).find((c) => c.name === `mw_review_${port}`);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    const headers = (await page.request.get(page.url())).headers();
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).not.toContain('script-src');
    const fresh = await launchChromium(executablePath as string);
    try {
      const other = await fresh.context.newPage();
      const reused = await other.goto(own.url);
      expect(reused?.status()).toBe(403);
      expect(await other.textContent('h2')).toBe('This login link is not valid');
      const wrong = await other.goto(own.url.replace(/token=.*/, 'token=AAAAwrongAAAA'));
      expect(wrong?.status()).toBe(403);
      const bare = await other.goto(own.url.replace(/login\?token=.*/, ''));
      expect(bare?.status()).toBe(401);
      expect(await other.content()).not.toContain('hostile');
    } finally {
      await fresh.close();
      await mine.close();
      own.stop();
    }
  });

  it(`${HOSTILE.length} hostile subjects and sender names, mailed and planted in every log field: scripts run 0, with and without the CSP, and the layout holds`, async () => {
    const states: Array<[string, Awaited<ReturnType<typeof pageState>>]> = [];
    const visit = async (page: Page, name: string, url: string): Promise<void> => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(url);
      // Open every <details>, as a person clicking through the page would (ontoggle would fire).
      // A page whose markup broke would hide them: that shows as the page's other failures.
      for (const d of await page.locator('details').all())
        await d
          .locator('summary')
          .click({ timeout: 2_000 })
          .catch(() => undefined);
      await page.waitForTimeout(300);
      states.push([name, await pageState(page)]);
      await page.setViewportSize({ width: 760, height: 900 });
      states.push([`${name}, 760 px`, await pageState(page)]);
      await page.close();
    };
    // Each browser in a session of its own, from a link of its own.
    for (const [name, c] of [
      ['csp', context],
      ['no csp (Chromium ignores the CSP)', unsafe],
    ] as const) {
      const own = await startReview(['review', '--no-browser'], b.env, 'stdout');
      try {
        await visit(await c.newPage(), name, own.url);
      } finally {
        own.stop();
      }
    }
    expect(fired, 'scripts run').toEqual([]);
    for (const [name, st] of states) {
      expect(st.scripts, `${name}: script elements`).toBe(0);
      expect(st.handlers, `${name}: event-handler attributes`).toBe(0);
      expect(st.jsUrls, `${name}: javascript: URLs`).toBe(0);
      expect(st.embeds, `${name}: iframes, objects, bases, metas, styles in the body`).toBe(0);
      expect(st.overflow, `${name}: sideways scrolling`).toBeLessThanOrEqual(0);
      expect(st.tallestCell, `${name}: a cell taller than the screen`).toBeLessThan(900);
      expect(st.text).not.toMatch(INVISIBLE);
      // The hostile strings are there, as text (made one visible line, cut at 120 characters).
      for (const h of [
        '<script>mwFired()</script>',
        '<img src=x onerror=mwFired()>',
        '<a href="javascript:mwFired()">click me</a>',
      ])
        expect(st.text).toContain(h);
      expect(st.text).toContain('exe.tnemyap invoice');
      expect(st.text).toContain('Paypal account verify');
      expect(st.text).toContain(`${'A'.repeat(119)}…`);
      expect(st.rows).toBeGreaterThanOrEqual(HOSTILE.length * 2);
    }
  });

  it('restores a chosen item from the page: back in the inbox, logged as a human restore', async () => {
    const page = await context.newPage();
    await page.goto(review.url.replace(/login\?token=.*/, ''));
    const target = plainThreads[0] as string;
    await page.locator(`input[type=checkbox][value="thread:${target}"]`).check();
    const form = page.locator('form.call', { has: page.locator(`input[value="thread:${target}"]`) });
    await form.locator('button[value=chosen]').click();
    await expect(page.locator('h2').textContent()).resolves.toBe('Restored 1 of 1');
    const labels = b.gmail?.sandbox.mailbox(DEMO_ADDRESS).messages.filter((m) => m.threadId === target);
    expect(labels?.every((m) => m.labelIds.includes('INBOX'))).toBe(true);
    const human = readFileSync(join(b.configDir, 'action-log.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"actor":"human"') && l.includes(target));
    expect(human.map((l) => (JSON.parse(l) as { outcome: string; tool: string }).outcome)).toEqual([
      'pending',
      'moved',
    ]);
    await page.close();
  });

  it('refuses a form post with a wrong CSRF token and one from another local origin; nothing moves', async () => {
    const target = plainThreads[1] as string;
    const inbox = (): boolean =>
      b.gmail?.sandbox
        .mailbox(DEMO_ADDRESS)
        .messages.filter((m) => m.threadId === target)
        .some((m) => m.labelIds.includes('INBOX')) ?? false;
    expect(inbox()).toBe(false);
    const origin = new URL(review.url).origin;
    const wrong = await context.request.post(`${origin}/restore`, {
      form: { csrf: 'not-the-token', account: 'default', scope: 'chosen', item: `thread:${target}` },
      headers: { origin },
    });
    expect(wrong.status()).toBe(403);
    expect(await wrong.text()).toContain('the form token is missing or wrong');
    // A page on another loopback port is the same site: the cookie goes along, the post must not pass.
    const attacker = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form method="post" action="${origin}/restore"><input name="account" value="default"><input name="scope" value="chosen"><input name="item" value="thread:${target}"><input name="csrf" value="guess"></form><script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
    try {
      const page = await context.newPage();
      const answered = page.waitForResponse((r) => r.url() === `${origin}/restore`);
      await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      expect((await answered).status()).toBe(403);
      await page.close();
    } finally {
      attacker.close();
    }
    expect(inbox()).toBe(false);
  });

  it('adds a sender to the never-move list from the page, and the gate then keeps that sender in the inbox', async () => {
    const s = await b.call('search', { query: 'in:inbox -from:attacker.example', maxResults: 10 });
    const t = (s.structured['threads'] as Array<{ threadId: string; from: string }>)[0];
    const address = /<([^>]+)>/.exec(t?.from ?? '')?.[1] ?? '';
    expect(address).toContain('@');
    const page = await context.newPage();
    await page.goto(review.url.replace(/login\?token=.*/, ''));
    await page.fill('input[name=sender]', address);
    await page.selectOption('select[name=list]', 'neverMove');
    await page.click('form.inline button[type=submit]');
    await expect(page.locator('h2').textContent()).resolves.toBe('Policy changed');
    const policy = JSON.parse(readFileSync(join(b.configDir, 'policy.json'), 'utf8')) as {
      accounts: Record<string, { neverMove: string[] }>;
    };
    expect(policy.accounts['default']?.neverMove).toEqual([address.toLowerCase()]);
    const r = await b.call('archive', { threadId: t?.threadId });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('refused (never-move)');
    await page.close();
  });
});

describe.skipIf(executablePath === undefined).each(['full', 'bridge'] as BackendKind[])(
  'the review page restores on Dovecot (%s)',
  (kind) => {
    let b: Backend;
    let browser: { context: BrowserContext; close: () => Promise<void> };
    beforeAll(async () => {
      b = await startBackend(kind, {
        delayMs: 0,
        env: { MAILWARDEN_IMAP_RECHECK_MS: '0' },
        policy: { default: { dailyMoveCap: 100, protectCorrespondents: false, inboxOnlyMoves: false } },
      });
      browser = await launchChromium(executablePath as string);
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await b?.close();
    });

    it('restores a whole call from the page, and the mailbox shows it back in INBOX', async () => {
      const s = await b.call('search', { query: 'in:inbox', maxResults: 3 });
      const ids = (s.structured['threads'] as Array<{ threadId: string }>).map((t) => t.threadId);
      expect((await b.call('archive', { threadIds: ids })).isError).toBe(false);
      const review = await startReview(['review', '--no-browser'], b.env, 'stdout');
      try {
        const page = await browser.context.newPage();
        await page.goto(review.url);
        await page.locator('form.call button[value=call]').first().click();
        await expect(page.locator('h2').textContent()).resolves.toBe(
          `Restored ${ids.length} of ${ids.length}`,
        );
        for (const id of ids) {
          const t = await b.call('get_thread', { threadId: id, bodies: 'none' });
          const labels = (t.structured['messages'] as Array<{ labels: string[] }>).flatMap((m) => m.labels);
          expect(labels).toContain('INBOX');
        }
      } finally {
        review.stop();
      }
    });
  },
);

describe.skipIf(executablePath === undefined)('/review under mailwarden http', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('gmail');
  }, 60_000);
  afterAll(async () => {
    await b?.close();
  });

  it('has its own one-time login (the MCP bearer does not open it) and serves the page', async () => {
    const bearer = 'b'.repeat(40);
    const http = await startReview(['http', '--port', '0'], { ...b.env, MAILWARDEN_TOKEN: bearer }, 'stderr');
    const browser = await launchChromium(executablePath as string);
    try {
      const base = http.url.replace(/\/login\?token=.*/, '');
      const withBearer = await browser.context.request.get(`${base}/`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(withBearer.status()).toBe(401);
      const page = await browser.context.newPage();
      expect((await page.goto(http.url))?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/review/');
      await expect(page.locator('h2').first().textContent()).resolves.toContain('default');
      const cookie = (await browser.context.cookies()).find((c) => c.name.startsWith('mw_review_'));
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/review' });
    } finally {
      await browser.close();
      http.stop();
    }
  });
});
