import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/* `mailwarden demo --imap` on a fresh config: the tour on a throwaway Dovecot, end to end. */

const run = (args: string[], path = process.env['PATH'] ?? '') => {
  const dir = tempDir('mailwarden-demo-imap-');
  return spawnSync(process.execPath, [MAIN, 'demo', ...args], {
    env: { PATH: path, HOME: dir, MAILWARDEN_CONFIG_DIR: dir },
    encoding: 'utf8',
    timeout: 90_000,
  });
};

describe('mailwarden demo --imap', () => {
  it('tours the read tools on a Bridge-like Dovecot with the certificate pinned', () => {
    const r = run(['--imap']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/starttls to 127\.0\.0\.1:\d+, certificate pinned to sha256 [0-9a-f]{16}/);
    expect(r.stdout).toMatch(new RegExp(`${DEMO_FACTS.messageCount} messages`));
    expect(r.stdout).toMatch(/Atlas launch checklist": 8 messages/);
    expect(r.stdout).toMatch(/spf=fail .*dmarc=fail/);
  }, 100_000);

  it('says how to install Dovecot when it is not there', () => {
    const r = run(['--imap'], '/nonexistent');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/apt-get install dovecot-imapd/);
  }, 30_000);
});
