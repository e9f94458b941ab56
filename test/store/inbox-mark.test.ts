import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { aboveGmailMark, gmailMarkAt, parseMark } from '../../src/mail/inbox-mark.js';
import { inboxMarkStore } from '../../src/store/inbox-mark.js';
import { tempDir } from '../helpers/temp.js';

const STORE_JS = resolve(import.meta.dirname, '../../dist/store/inbox-mark.js');

describe('the new-mail mark file', () => {
  it('round-trips, is 0600 in a 0700 directory, and a missing file means no mark', async () => {
    const dir = join(tempDir('mailwarden-marks-'), 'marks');
    const store = inboxMarkStore(dir);
    expect(await store.read('work')).toBeUndefined();
    const mark = {
      version: 1 as const,
      provider: 'imap' as const,
      account: 'work',
      uidValidity: '1700000000',
      uid: 42,
      decided: ['abc'],
      updatedAt: '2026-12-02T00:00:00.000Z',
    };
    await store.write(mark);
    expect(await store.read('work')).toEqual(mark);
    expect(statSync(store.pathFor('work')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['half a file', '{"version":1,"provider":"imap","acc'],
    [
      'a negative uid',
      '{"version":1,"provider":"imap","account":"work","uidValidity":"1","uid":-1,"decided":[],"updatedAt":"x"}',
    ],
    [
      'another account',
      '{"version":1,"provider":"imap","account":"home","uidValidity":"1","uid":1,"decided":[],"updatedAt":"x"}',
    ],
    ['an unknown provider', '{"version":1,"provider":"pop","account":"work","updatedAt":"x"}'],
    [
      'a uidValidity that is not a number',
      '{"version":1,"provider":"imap","account":"work","uidValidity":"x1","uid":1,"decided":[],"updatedAt":"x"}',
    ],
  ])('a hand-damaged file (%s) is internal_error naming the file and what to do', async (_, text) => {
    const dir = tempDir('mailwarden-marks-');
    writeFileSync(join(dir, 'work.json'), text);
    const err = await inboxMarkStore(dir)
      .read('work')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailError);
    expect((err as MailError).code).toBe('internal_error');
    expect((err as MailError).message).toContain(join(dir, 'work.json'));
    expect((err as MailError).message).toMatch(/delete it/);
  });

  it('a process killed while writing marks leaves a whole mark, never a torn one', async () => {
    const dir = tempDir('mailwarden-marks-');
    // A writer that rewrites the mark as fast as it can, with a long decided list (a big file).
    const script = `
      const { inboxMarkStore } = await import(${JSON.stringify(STORE_JS)});
      const store = inboxMarkStore(${JSON.stringify(dir)});
      const decided = Array.from({ length: 2000 }, (_, i) => 'h' + i);
      for (let uid = 1; ; uid++) {
        await store.write({ version: 1, provider: 'imap', account: 'work', uidValidity: '7', uid, decided, updatedAt: new Date().toISOString() });
        if (uid === 3) process.stdout.write('go\\n');
      }`;
    for (let round = 0; round < 5; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((r) => child.stdout.once('data', () => r()));
      await new Promise((r) => setTimeout(r, 20 + round * 15));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const mark = await inboxMarkStore(dir).read('work');
      expect(mark?.provider).toBe('imap');
      expect(mark?.provider === 'imap' ? mark.decided : []).toHaveLength(2000);
    }
    // The temp files a killed writer leaves are never read as the mark.
    expect(readdirSync(dir).filter((f) => f === 'work.json')).toEqual(['work.json']);
    expect(JSON.parse(readFileSync(join(dir, 'work.json'), 'utf8'))).toMatchObject({ account: 'work' });
  });
});

describe('the Gmail mark', () => {
  it('decides by arrival time, then id: a message at the same millisecond stays new unless decided', () => {
    const mark = gmailMarkAt('g', { id: 'b', internalDate: 1000 }, undefined, 0);
    expect(aboveGmailMark(mark, { id: 'b', internalDate: 1000 })).toBe(false);
    expect(aboveGmailMark(mark, { id: 'a', internalDate: 1000 })).toBe(true);
    expect(aboveGmailMark(mark, { id: 'z', internalDate: 999 })).toBe(false);
    expect(aboveGmailMark(mark, { id: 'z', internalDate: 1001 })).toBe(true);
    const both = gmailMarkAt('g', { id: 'a', internalDate: 1000 }, mark, 0);
    expect(both.ids).toEqual(['a', 'b']);
    expect(parseMark(JSON.stringify(both), 'x', 'g')).toEqual(both);
  });
});
