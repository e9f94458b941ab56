// Saves docs/review-page.png: the review page over the demo mailbox (`mailwarden review --demo`),
// in headless Chromium at 1280 px. Run after `npm run build`: node scripts/review-screenshot.mjs
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
const child = spawn(process.execPath, ['dist/bundle/main.js', 'review', '--demo', '--no-browser'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, TZ: process.env.TZ ?? 'UTC' },
});
let out = '';
const url = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    out += d.toString();
    const m = /http:\/\/\S*token=\S*/.exec(out);
    if (m) resolve(m[0]);
  });
  child.once('exit', (code) => reject(new Error(`review --demo ended (${code}): ${out}`)));
});
const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--headless', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(url);
  await page.screenshot({ path: 'docs/review-page.png' });
} finally {
  await browser.close();
  child.kill('SIGTERM');
}
