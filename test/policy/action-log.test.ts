import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import type { Mailbox, MessageLabels } from '../../src/providers/mailbox.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { loggedMailbox } from '../../src/policy/logged-mailbox.js';
import { tempDir } from '../helpers/temp.js';

const tmp = (): string => tempDir('mailwarden-log-');
const lines = (path: string): Array<Record<string, unknown>> =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** A provider whose one write, modifyThread, does what the test says. */
function provider(modify: () => Promise<MessageLabels[]>): Mailbox {
  const known: Record<string, unknown> = {
    provider: 'gmail',
    account: 'acct',
    capabilities: { history: true, filters: true, organisation: 'labels' },
    modifyThread: modify,
  };
  // Every other method exists (the wrapper binds them) and is never called here.
  return new Proxy(known, {
    get: (t, k) => (typeof k === 'string' && k in t ? t[k] : () => Promise.reject(new Error(String(k)))),
  }) as unknown as Mailbox;
}

describe('the action log file', () => {
  it('creates the config dir 0700 and the log 0600, and tightens a looser existing dir', async () => {
    const base = tmp();
    const log = new ActionLog(join(base, 'cfg', 'action-log.jsonl'));
    await log.append({ account: 'a', tool: 't', op: 'x', outcome: 'ok' });
    expect(statSync(join(base, 'cfg')).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, 'cfg', 'action-log.jsonl')).mode & 0o777).toBe(0o600);

    const loose = join(base, 'loose');
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    await new ActionLog(join(loose, 'action-log.jsonl')).ensureWritable();
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });

  it('refuses a symlink planted where the log belongs, and leaves its target alone', async () => {
    const base = tmp();
    const target = join(base, 'victim.txt');
    writeFileSync(target, 'precious\n', { mode: 0o644 });
    chmodSync(target, 0o644);
    mkdirSync(join(base, 'cfg'), { mode: 0o700 });
    const path = join(base, 'cfg', 'action-log.jsonl');
    symlinkSync(target, path);
    const log = new ActionLog(path);
    const err = await log
      .append({ account: 'a', tool: 't', op: 'x', outcome: 'ok' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailError);
    expect((err as MailError).code).toBe('internal_error');
    expect((err as MailError).message).toMatch(/symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });

  it('a torn last line is ended and marked, so the next record is whole', async () => {
    const path = join(tmp(), 'action-log.jsonl');
    writeFileSync(path, '{"time":"2026-12-01T00:00:00Z","account":"a","tool":"t","op":"x","outc', {
      mode: 0o600,
    });
    await new ActionLog(path).append({ account: 'a', tool: 't', op: 'next', outcome: 'ok' });
    const text = readFileSync(path, 'utf8').split('\n');
    expect(JSON.parse(text[1] as string)).toMatchObject({ op: 'tornLineEnded' });
    expect(JSON.parse(text[2] as string)).toMatchObject({ op: 'next', outcome: 'ok' });
  });
});

describe('every provider write has an intent line before it and an outcome line after it', () => {
  it('the intent is on disk while the write is in flight; the outcome shares its call id', async () => {
    const path = join(tmp(), 'action-log.jsonl');
    let release: (v: MessageLabels[]) => void = () => undefined;
    const mb = loggedMailbox(
      provider(() => new Promise<MessageLabels[]>((r) => (release = r))),
      new ActionLog(path),
      'archive',
    );
    const pending = mb.modifyThread('t1', { add: [], remove: ['INBOX'] });
    await new Promise((r) => setTimeout(r, 50));
    const during = lines(path);
    expect(during).toHaveLength(1);
    expect(during[0]).toMatchObject({ op: 'modifyThread', threadIds: ['t1'], outcome: 'pending' });
    release([]);
    await pending;
    const after = lines(path);
    expect(after.map((l) => l['outcome'])).toEqual(['pending', 'ok']);
    expect(after[1]?.['call']).toBe(after[0]?.['call']);
  });

  it('a refused write is "failed"; a lost answer is "unknown"', async () => {
    const path = join(tmp(), 'action-log.jsonl');
    const log = new ActionLog(path);
    const refused = loggedMailbox(
      provider(() => Promise.reject(new MailError('not_found', 'no such thread'))),
      log,
      'archive',
    );
    await expect(refused.modifyThread('t1', { add: [], remove: ['INBOX'] })).rejects.toThrow(
      /no such thread/,
    );
    const lost = loggedMailbox(
      provider(() =>
        Promise.reject(new MailError('network_error', 'no answer in time', { retryable: false })),
      ),
      log,
      'archive',
    );
    await expect(lost.modifyThread('t2', { add: [], remove: ['INBOX'] })).rejects.toThrow(/no answer/);
    expect(lines(path).map((l) => [l['threadIds'], l['outcome'], l['error']])).toEqual([
      [['t1'], 'pending', undefined],
      [['t1'], 'failed', 'not_found'],
      [['t2'], 'pending', undefined],
      [['t2'], 'unknown', 'network_error'],
    ]);
  });
});
