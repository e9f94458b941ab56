import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { moveRecord, movesToday, remainingToday } from '../../src/policy/move-cap.js';
import type { MoveRecordInput } from '../../src/policy/move-cap.js';
import { tempDir } from '../helpers/temp.js';

const TZ = 'Europe/Berlin';
// 10:00 in Berlin (CEST, UTC+2) on 18 June 2026.
const NOW = Date.parse('2026-06-18T08:00:00Z');

let log: ActionLog;
beforeEach(() => {
  log = new ActionLog(join(tempDir('mailwarden-cap-'), 'action-log.jsonl'));
});

const rec = (over: Partial<MoveRecordInput> = {}) =>
  moveRecord({
    account: 'work',
    tool: 'archive_threads',
    action: 'archive',
    actor: 'agent',
    ids: ['m1'],
    outcome: 'moved',
    time: new Date(NOW - 60_000).toISOString(),
    ...over,
  });

async function stoppedBy(p: Promise<unknown>): Promise<MailError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(MailError);
  return e as MailError;
}

describe('movesToday / remainingToday', () => {
  it('a missing log is a fresh day', async () => {
    expect(await remainingToday(log, 'work', 50, NOW, TZ)).toBe(50);
  });

  it('counts messages moved out by the agent today, in the local day of the server zone', async () => {
    await log.appendMany([
      rec({ ids: ['a'] }),
      rec({ ids: ['t1'], unit: 'thread', count: 3 }),
      // 23:30 Berlin the day before (21:30Z): yesterday, though the same UTC date.
      rec({ ids: ['y'], time: '2026-06-17T21:30:00Z' }),
      // 00:30 Berlin today (22:30Z the day before in UTC): today.
      rec({ ids: ['z'], time: '2026-06-17T22:30:00Z' }),
      rec({ ids: ['other'], account: 'home' }),
    ]);
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(5);
    expect((await movesToday(log, 'work', NOW, 'UTC')).used).toBe(4); // in UTC, y and z are both 17 June
    expect(await remainingToday(log, 'work', 6, NOW, TZ)).toBe(1);
    expect(await remainingToday(log, 'work', 2, NOW, TZ)).toBe(0);
    expect(await remainingToday(log, 'work', 0, NOW, TZ)).toBe(Number.POSITIVE_INFINITY);
  });

  it('restores, label changes, rule moves, refusals and failures do not count; unknown and pending do', async () => {
    await log.appendMany([
      rec({ ids: ['r'], action: 'restore', count: 0 }),
      rec({ ids: ['l'], action: 'label', count: 0 }),
      rec({ ids: ['s'], actor: 'rule', senderRule: 'example.com' }),
      rec({ ids: ['x'], outcome: 'refused', refusedBy: 'daily-cap' }),
      rec({ ids: ['f'], outcome: 'failed' }),
      rec({ ids: ['u'], outcome: 'unknown' }),
      rec({ ids: ['p'], outcome: 'pending' }),
    ]);
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(2);
  });

  it('an intent line and its outcome line count once; the outcome decides', async () => {
    await log.appendMany([
      rec({ call: 'c1', ids: ['a'], outcome: 'pending' }),
      rec({ call: 'c1', ids: ['b'], outcome: 'pending' }),
      rec({ call: 'c1', ids: ['a'], outcome: 'moved' }),
      rec({ call: 'c1', ids: ['b'], outcome: 'failed' }),
    ]);
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(1);
  });

  it('other records (the op log of logged-mailbox, confirmations) are read but not counted', async () => {
    await log.append({ account: 'work', tool: 't', op: 'modifyMessages', outcome: 'ok', messageIds: ['a'] });
    await log.appendMany([rec()]);
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(1);
  });
});

describe('a damaged log stops moves', () => {
  it('a corrupt middle line: forbidden_operation naming the line and the file', async () => {
    await log.appendMany([rec({ ids: ['a'] })]);
    appendFileSync(log.path, '{"time": "2026-06-18T07:00:00Z", "acc\n');
    await log.appendMany([rec({ ids: ['b'] })]);
    const e = await stoppedBy(movesToday(log, 'work', NOW, TZ));
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toContain('moves out of the inbox are stopped');
    expect(e.message).toContain('line 2 is not valid JSON');
    expect(e.message).toContain(log.path);
  });

  it('a move record without its fields, or a record without a time, stops moves too', async () => {
    writeFileSync(log.path, `${JSON.stringify({ ...rec(), count: -1 })}\n`);
    expect((await stoppedBy(movesToday(log, 'work', NOW, TZ))).message).toContain(
      'line 1 is a move record without a count',
    );
    writeFileSync(log.path, `${JSON.stringify({ account: 'work', op: 'x' })}\n${JSON.stringify(rec())}\n`);
    expect((await stoppedBy(movesToday(log, 'work', NOW, TZ))).message).toContain(
      'line 1 is a record without a time or an account',
    );
  });

  it('a bad last line WITH its newline is damage, not a torn append', async () => {
    await log.appendMany([rec()]);
    appendFileSync(log.path, 'garbage\n');
    expect((await stoppedBy(movesToday(log, 'work', NOW, TZ))).message).toContain('line 2');
  });

  it('a torn last line (no newline) is skipped', async () => {
    await log.appendMany([rec({ ids: ['a'] }), rec({ ids: ['b'] })]);
    appendFileSync(log.path, JSON.stringify(rec({ ids: ['c'] })).slice(0, 40));
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(2);
  });

  it('the next append ends a torn line and marks it, so it stays skipped in the middle', async () => {
    await log.appendMany([rec({ ids: ['a'] })]);
    appendFileSync(log.path, JSON.stringify(rec({ ids: ['c'] })).slice(0, 40));
    await log.appendMany([rec({ ids: ['b'] })]);
    await log.append({ account: 'work', tool: 't', op: 'modifyMessages', outcome: 'ok' });
    const lines = readFileSync(log.path, 'utf8').split('\n');
    expect(lines[2]).toContain('"op":"tornLineEnded"');
    expect((await movesToday(log, 'work', NOW, TZ)).used).toBe(2);
  });

  it('an unreadable log stops moves', async () => {
    const dirAsLog = new ActionLog(tempDir('mailwarden-cap-dir-'));
    const e = await stoppedBy(movesToday(dirAsLog, 'work', NOW, TZ));
    expect(e.message).toContain('cannot be read');
  });
});

describe('moveRecord', () => {
  it('builds the line the cap reads: op/kind move, ids, count defaulting to the ids', () => {
    const r = moveRecord({
      account: 'work',
      tool: 'archive',
      action: 'archive',
      actor: 'agent',
      ids: ['a', 'b'],
      outcome: 'moved',
      subject: 'x'.repeat(500),
    });
    expect(r).toMatchObject({ op: 'move', kind: 'move', unit: 'message', ids: ['a', 'b'], count: 2 });
    expect(r.subject?.length).toBe(201);
    expect(Number.isNaN(Date.parse(r.time))).toBe(false);
  });
});
