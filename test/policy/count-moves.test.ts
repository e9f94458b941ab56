import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ActionLog } from '../../src/policy/action-log.js';
import { moveRecord } from '../../src/policy/move-cap.js';
import type { MoveRecordInput } from '../../src/policy/move-cap.js';
import { addDays, countMoves, dayStart } from '../../src/policy/move-counts.js';
import { tempDir } from '../helpers/temp.js';

const TZ = 'Europe/Berlin';
const RANGE = { from: '2026-06-15', to: '2026-06-18' };

let log: ActionLog;
beforeEach(() => {
  log = new ActionLog(join(tempDir('mailwarden-counts-'), 'action-log.jsonl'));
});

const rec = (over: Partial<MoveRecordInput>) =>
  moveRecord({
    account: 'work',
    tool: 'archive',
    action: 'archive',
    actor: 'agent',
    ids: ['m1'],
    outcome: 'moved',
    time: '2026-06-17T08:00:00Z',
    ...over,
  });

/** An intent line and its outcome line, as the gate writes them. */
const pair = (call: string, over: Partial<MoveRecordInput>, outcome: MoveRecordInput['outcome']) => [
  rec({ ...over, call, outcome: 'pending' }),
  rec({ ...over, call, outcome }),
];

describe('countMoves: exact counts from the action log', () => {
  it('groups intent and outcome lines, keeps rule and agent moves apart, and counts unknowns as unknown', async () => {
    await log.appendMany([
      ...pair('c1', { ids: ['a1'], sender: 'x@news.example' }, 'moved'),
      ...pair('c2', { ids: ['t1'], unit: 'thread', count: 3, sender: 'x@news.example' }, 'moved'),
      ...pair(
        'c3',
        { ids: ['r1'], actor: 'rule', senderRule: 'news.example', sender: 'y@a.news.example' },
        'moved',
      ),
      ...pair(
        'c3',
        { ids: ['r2'], actor: 'rule', senderRule: 'news.example', sender: 'y@a.news.example' },
        'moved',
      ),
      ...pair(
        'c4',
        {
          ids: ['s1'],
          actor: 'rule',
          action: 'spam',
          senderRule: 'z@junk.example',
          sender: 'Z@junk.example',
        },
        'moved',
      ),
      rec({
        ids: ['p1'],
        actor: 'rule',
        call: 'c3',
        outcome: 'refused',
        refusedBy: 'protected-correspondent',
      }),
      // A crash between intent and outcome: pending is the latest line.
      rec({ ids: ['k1'], call: 'c5', outcome: 'pending' }),
      ...pair('c6', { ids: ['u1'], actor: 'rule', action: 'spam' }, 'unknown'),
      ...pair('c7', { ids: ['f1'] }, 'failed'),
      ...pair('c8', { ids: ['t2'], unit: 'thread', action: 'restore', count: 0 }, 'moved'),
      // A restore of x's mail: counted for x, but apart from x's moves out of the inbox.
      ...pair(
        'c14',
        { ids: ['t3'], unit: 'thread', action: 'restore', count: 0, sender: 'x@news.example' },
        'moved',
      ),
      rec({ ids: ['q1'], call: 'c9', outcome: 'refused', refusedBy: 'daily-cap' }),
      rec({ ids: ['q2'], call: 'c9', outcome: 'refused', refusedBy: 'daily-cap' }),
      // 23:30 Berlin on 14 June: outside the range, though 15 June in no zone east of it.
      rec({ ids: ['old'], call: 'c10', time: '2026-06-14T21:30:00Z' }),
      // 00:30 Berlin on 19 June: outside too.
      rec({ ids: ['late'], call: 'c11', time: '2026-06-18T22:30:00Z' }),
      // 00:30 Berlin on 15 June (still 14 June in UTC): inside.
      rec({ ids: ['early'], call: 'c12', time: '2026-06-14T22:30:00Z', sender: 'w@early.example' }),
      rec({ ids: ['x1'], call: 'c13', account: 'home' }),
    ]);
    await log.append({ account: 'work', tool: 'archive', op: 'modifyMessages', outcome: 'ok' });
    const c = await countMoves(log, 'work', RANGE, TZ, 2);
    expect(c.complete).toBe(true);
    expect(c.damagedLines).toEqual([]);
    expect(c.agent.moved.archive).toEqual({ messages: 2, threads: 1 });
    expect(c.agent.moved.restore).toEqual({ messages: 0, threads: 2 });
    expect(c.agent.messagesOutOfInbox).toBe(5);
    expect(c.agent.failed).toBe(1);
    expect(c.agent.unknown).toEqual({
      items: 1,
      byKind: { archive: 1, spam: 0, trash: 0, snooze: 0, restore: 0, label: 0 },
    });
    expect(c.agent.refused).toEqual({ items: 2, byRule: { 'daily-cap': 2 } });
    expect(c.rule.moved.archive).toEqual({ messages: 2, threads: 0 });
    expect(c.rule.moved.spam).toEqual({ messages: 1, threads: 0 });
    expect(c.rule.messagesOutOfInbox).toBe(3);
    expect(c.rule.refused).toEqual({ items: 1, byRule: { 'protected-correspondent': 1 } });
    expect(c.rule.unknown.items).toBe(1);
    expect(c.rule.unknown.byKind.spam).toBe(1);
    expect(c.rule.failed).toBe(0);
    // Moved items per sender, most first: x (agent 2), then y (rule 2, after x by address), top 2.
    expect(c.bySender).toEqual([
      { sender: 'x@news.example', agent: 2, rule: 0, byKind: { archive: 2, restore: 1 } },
      { sender: 'y@a.news.example', agent: 0, rule: 2, byKind: { archive: 2 } },
    ]);
    // x, y, z@junk, w@early and the sender-less restore.
    expect(c.senders).toBe(5);
    expect(c.timeZone).toBe(TZ);
  });

  it('a damaged line is reported by its number, never skipped in silence; a torn last line is not damage', async () => {
    await log.appendMany([rec({ ids: ['a'], call: 'c1' })]);
    appendFileSync(log.path, 'not a record\n');
    await log.appendMany([rec({ ids: ['b'], call: 'c2' })]);
    appendFileSync(log.path, '{"time":"2026-06-17T08:00:00Z","account":"work","kind":"move","act');
    const c = await countMoves(log, 'work', RANGE, TZ, 10);
    expect(c.damagedLines).toEqual([{ line: 2, problem: 'not valid JSON' }]);
    expect(c.damagedLineCount).toBe(1);
    expect(c.complete).toBe(false);
    expect(c.agent.moved.archive.messages).toBe(2);
    expect(c.lines).toBe(4);
  });

  it('a missing log counts nothing', async () => {
    const c = await countMoves(log, 'work', RANGE, TZ, 10);
    expect(c.agent.messagesOutOfInbox).toBe(0);
    expect(c.rule.messagesOutOfInbox).toBe(0);
    expect(c.complete).toBe(true);
    expect(c.lines).toBe(0);
  });
});

describe('days', () => {
  it('dayStart accepts calendar days only; addDays crosses months and years', () => {
    expect(dayStart('2026-02-29')).toBeUndefined();
    expect(dayStart('2028-02-29')).toBe(Date.UTC(2028, 1, 29));
    expect(dayStart('2026-13-01')).toBeUndefined();
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-28', 6)).toBe('2027-01-03');
  });
});
