import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/mail/clock.js';
import { MailError } from '../../src/mail/errors.js';
import type { MailThread } from '../../src/mail/types.js';
import { ActionLog } from '../../src/policy/action-log.js';
import { CorrespondentSet } from '../../src/policy/correspondents.js';
import type { CorrespondentMailbox } from '../../src/policy/correspondents.js';
import { createGate, filePolicyStore } from '../../src/policy/gate.js';
import type { GateIntent, GateItem, PerItemOutcome } from '../../src/policy/gate.js';
import { effectivePolicy, parsePolicy } from '../../src/policy/write-policy.js';
import { writeLockPath } from '../../src/policy/write-lock.js';
import { tempDir } from '../helpers/temp.js';
import { rejected } from '../helpers/rejected.js';

const NOW = Date.parse('2026-06-18T08:00:00Z');
const TZ = 'Europe/Berlin';
const DAY = 86_400_000;
const ARCHIVE: GateIntent = { tool: 'archive_threads', action: 'archive', actor: 'agent' };
const RESTORE: GateIntent = { tool: 'move_to_inbox', action: 'restore', actor: 'agent' };

let dir: string;
let log: ActionLog;
let clock: ManualClock;

beforeEach(() => {
  dir = tempDir('mailwarden-gate-');
  log = new ActionLog(join(dir, 'action-log.jsonl'));
  clock = new ManualClock(NOW);
});

function msg(id: string, over: Partial<GateItem> = {}): GateItem {
  return {
    id,
    kind: 'message',
    messageCount: 1,
    sender: `news-${id}@shop.example`,
    senderHeader: `Shop <news-${id}@shop.example>`,
    subject: `offer ${id}`,
    labelIds: ['INBOX', 'UNREAD'],
    ...over,
  };
}

/** A Sent folder: the user wrote to alice (To) and bob (Cc); carol only wrote to the user and dan. */
function sentMailbox(): CorrespondentMailbox & { reads: number } {
  const m = (id: string, labelIds: string[], headers: Record<string, string>, at: number) => ({
    id,
    threadId: 't1',
    labelIds,
    internalDate: at,
    snippet: '',
    sizeEstimate: 0,
    headers: Object.entries(headers).map(([name, value]) => ({ name, value })),
    root: { partId: '', mimeType: 'text/plain', headers: [], filename: '', size: 0, children: [] },
  });
  const thread: MailThread = {
    id: 't1',
    messages: [
      m(
        'r1',
        ['INBOX'],
        { From: 'carol@x.example', To: 'me@home.example', Cc: 'dan@x.example' },
        NOW - 2 * DAY,
      ),
      m(
        's1',
        ['SENT'],
        { From: 'me@home.example', To: '"Alice" <Alice@Friends.example>', Cc: 'bob@x.example' },
        NOW - DAY,
      ),
    ],
  };
  const box = {
    reads: 0,
    async searchMessages(query: string) {
      expect(query).toBe('in:sent newer_than:365d');
      return { items: [{ id: 's1', threadId: 't1' }] };
    },
    async getThread() {
      box.reads++;
      return thread;
    },
  };
  return box;
}

function gateWith(
  policy: unknown = {},
  correspondents = new CorrespondentSet(sentMailbox(), { days: 365, refreshMinutes: 10, clock }),
  lockTimeoutMs = 5_000,
) {
  const effective = effectivePolicy({ ...parsePolicy(policy), path: join(dir, 'policy.json') }, 'work');
  const store = filePolicyStore({ MAILWARDEN_CONFIG_DIR: dir }, log, { timeoutMs: lockTimeoutMs });
  return createGate({ policy: effective, store, correspondents, clock, timeZone: TZ });
}

const moved = (allowed: GateItem[]): Promise<PerItemOutcome[]> =>
  Promise.resolve(allowed.map((i) => ({ id: i.id, outcome: 'moved' as const })));

/** An archive of `id` that the gate stops before any write: its error (nothing was written). */
async function stoppedArchive(gate: ReturnType<typeof gateWith>, id: string) {
  let wrote = false;
  const e = await rejected(
    gate.run([msg(id)], ARCHIVE, async (a) => {
      wrote = true;
      return moved(a);
    }),
  );
  expect(wrote).toBe(false);
  return e;
}

const records = (): Array<Record<string, unknown>> =>
  readFileSync(log.path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the daily cap', () => {
  it('the 51st agent archive of a day is refused while a restore still works; a fresh gate sees the same count', async () => {
    const gate = gateWith();
    const first = await gate.run(
      Array.from({ length: 50 }, (_, i) => msg(`m${i}`)),
      ARCHIVE,
      moved,
    );
    expect(first.results.every((r) => r.outcome === 'moved')).toBe(true);
    expect(first.remainingToday).toBe(0);

    let wrote = 0;
    const over = await gate.run([msg('m50')], ARCHIVE, async (a) => {
      wrote += a.length;
      return moved(a);
    });
    expect(wrote).toBe(0);
    expect(over.results[0]).toMatchObject({ id: 'm50', outcome: 'refused', rule: 'daily-cap' });
    expect(over.results[0]?.reason).toContain('0 of 50 agent moves out of the inbox are left today');
    expect(over.results[0]?.reason).toContain(`raise dailyMoveCap in ${join(dir, 'policy.json')}`);
    expect(over.results[0]?.reason).toContain('confirm this one call');

    const back = await gate.run([msg('m0', { labelIds: [] })], RESTORE, moved);
    expect(back.results[0]).toMatchObject({ id: 'm0', outcome: 'moved' });

    // A restart: a new gate over the same log knows the day is used up.
    const fresh = gateWith();
    expect(await fresh.remaining()).toBe(0);
    expect((await fresh.run([msg('m51')], ARCHIVE, moved)).results[0]?.rule).toBe('daily-cap');
    // Tomorrow (local day) there is a fresh cap.
    clock.advance(DAY);
    expect(await fresh.remaining()).toBe(50);
  });

  it('the last items that do not fit are refused in order; a thread counts its messages', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 4 } });
    const run = await gate.run(
      [msg('a'), msg('t', { kind: 'thread', messageCount: 2 }), msg('b'), msg('c')],
      ARCHIVE,
      moved,
    );
    expect(run.results.map((r) => r.outcome)).toEqual(['moved', 'moved', 'moved', 'refused']);
    expect(run.results[3]?.reason).toContain('0 of 4 agent moves out of the inbox are left today');
    expect(run.remainingToday).toBe(0);
  });

  it('rule moves do not use the cap, but are still judged by every other rule', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 1 } });
    await gate.run([msg('a')], ARCHIVE, moved);
    const rule: GateIntent = {
      tool: 'sweep_rules',
      action: 'spam',
      actor: 'rule',
      senderRule: 'shop.example',
    };
    const r = await gate.run([msg('b'), msg('c'), msg('d', { labelIds: ['SPAM'] })], rule, moved);
    expect(r.results.map((x) => x.outcome)).toEqual(['moved', 'moved', 'refused']);
    expect(r.results[2]?.rule).toBe('inbox-only');
    expect(await gate.remaining()).toBe(0);
    expect(records().find((x) => x['actor'] === 'rule')).toMatchObject({ senderRule: 'shop.example' });
  });

  it('unknown outcomes count (they may have happened); failed ones do not; a throwing write is unknown', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 10 } });
    await gate.run([msg('a'), msg('b'), msg('c')], ARCHIVE, async () => [
      { id: 'a', outcome: 'unknown' },
      { id: 'b', outcome: 'failed', error: 'not_found' },
      // c missing from the answer: unknown
    ]);
    expect(await gate.remaining()).toBe(8);
    const thrown = await gate.run([msg('d'), msg('e')], ARCHIVE, async () => {
      throw new MailError('network_error', 'socket hang up');
    });
    expect(thrown.results.map((r) => r.outcome)).toEqual(['unknown', 'unknown']);
    expect(thrown.results[0]?.error).toBe('socket hang up');
    expect(thrown.writeError).toBeInstanceOf(MailError);
    expect(await gateWith({ default: { dailyMoveCap: 10 } }).remaining()).toBe(6);
  });

  it('a crash between the intent line and the outcome line still counts the move', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 10 } });
    // The provider write "kills the process": the outcome line is never written.
    await gate
      .run([msg('a'), msg('b')], ARCHIVE, async () => {
        throw Object.assign(new Error('SIGKILL'), { simulated: true });
      })
      .catch(() => undefined);
    const lines = records().filter((r) => r['kind'] === 'move');
    // Drop the outcome lines to simulate the crash, keeping the intent ("pending") lines.
    writeFileSync(
      log.path,
      lines
        .filter((r) => r['outcome'] === 'pending')
        .map((r) => JSON.stringify(r) + '\n')
        .join(''),
    );
    expect(await gateWith({ default: { dailyMoveCap: 10 } }).remaining()).toBe(8);
  });

  it('a confirmed lift skips the cap for one call and says so in the record; forbidden ignores it', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 1 } });
    expect(gate.canLiftCap).toBe(true);
    const r = await gate.run([msg('a'), msg('b')], ARCHIVE, moved, { capLifted: true });
    expect(r.results.map((x) => x.outcome)).toEqual(['moved', 'moved']);
    expect(
      records()
        .filter((x) => x['outcome'] === 'moved')
        .every((x) => x['capLiftedBy'] === 'human'),
    ).toBe(true);
    expect((await gate.run([msg('c')], ARCHIVE, moved)).results[0]?.rule).toBe('daily-cap');

    const strict = gateWith({ default: { dailyMoveCap: 1, capConfirmation: 'forbidden' } });
    expect(strict.canLiftCap).toBe(false);
    const s = await strict.run([msg('d')], ARCHIVE, moved, { capLifted: true });
    expect(s.results[0]?.rule).toBe('daily-cap');
    expect(s.results[0]?.reason).not.toContain('confirm');
  });

  it('preflightBulk refuses a bulk change larger than what is left, saying how many are left', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 10 } });
    await gate.run([msg('a'), msg('b'), msg('c')], ARCHIVE, moved);
    expect(await gate.preflightBulk(7)).toBe(7);
    const e = await rejected(gate.preflightBulk(8));
    expect(e).toBeInstanceOf(MailError);
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toContain('would move 8 messages out of the inbox, but 7 of 10 agent moves');
    expect(await gate.preflightBulk(8, { capLifted: true })).toBe(7);
    expect(await gateWith({ default: { dailyMoveCap: 0 } }).preflightBulk(10_000)).toBeNull();
  });

  it('two concurrent calls cannot both spend the same remainder', async () => {
    const a = gateWith({ default: { dailyMoveCap: 5 } });
    const b = gateWith({ default: { dailyMoveCap: 5 } });
    const slow = async (allowed: GateItem[]) => {
      await new Promise((r) => setTimeout(r, 30));
      return moved(allowed);
    };
    const [x, y] = await Promise.all([
      a.run(
        ['1', '2', '3', '4'].map((i) => msg(`a${i}`)),
        ARCHIVE,
        slow,
      ),
      b.run(
        ['1', '2', '3', '4'].map((i) => msg(`b${i}`)),
        ARCHIVE,
        slow,
      ),
    ]);
    const done = [...x.results, ...y.results].filter((r) => r.outcome === 'moved');
    expect(done).toHaveLength(5);
  });
});

describe('the write lock is taken only where the daily count is', () => {
  const LABEL: GateIntent = {
    tool: 'modify_labels',
    action: 'label',
    actor: 'agent',
    addLabels: [],
    removeLabels: [],
  };
  /** A gate whose lock waits 300 ms, with the account's lock held as another process holds it. */
  function lockedGate(policy: unknown) {
    mkdirSync(writeLockPath({ MAILWARDEN_CONFIG_DIR: dir }, 'work'), { recursive: true });
    return gateWith(policy, undefined, 300);
  }

  it('a label change and a restore run while another process holds the lock; an archive waits, then writes nothing', async () => {
    const gate = lockedGate({});
    const label = await gate.run([msg('a')], LABEL, moved);
    expect(label.results[0]).toMatchObject({ id: 'a', outcome: 'moved' });
    const back = await gate.run([msg('b', { labelIds: [] })], RESTORE, moved);
    expect(back.results[0]).toMatchObject({ id: 'b', outcome: 'moved' });
    const e = await stoppedArchive(gate, 'c');
    expect(e.code).toBe('upstream_unavailable');
    expect(e.message).toContain('another mailwarden process is writing to account work');
    // Both unlocked writes left their intent and outcome lines; the archive left none.
    const lines = records();
    expect(
      lines.filter((r) => (r['ids'] as string[] | undefined)?.[0] === 'a').map((r) => r['outcome']),
    ).toEqual(['pending', 'moved']);
    expect(lines.filter((r) => (r['ids'] as string[] | undefined)?.[0] === 'b')).toHaveLength(2);
    expect(lines.some((r) => (r['ids'] as string[] | undefined)?.[0] === 'c')).toBe(false);
  });

  it('with the cap off, an archive counts nothing and needs no lock', async () => {
    const gate = lockedGate({ default: { dailyMoveCap: 0 } });
    const r = await gate.run([msg('a')], ARCHIVE, moved);
    expect(r.results[0]).toMatchObject({ id: 'a', outcome: 'moved' });
    expect(r.remainingToday).toBeNull();
  });
});

describe('a damaged log stops moves, through the gate', () => {
  it('a corrupt middle line: nothing is written, the error names the line and the file', async () => {
    const gate = gateWith();
    await gate.run([msg('a')], ARCHIVE, moved);
    appendFileSync(log.path, 'not json at all\n');
    // An undo still works: the count is not needed for it.
    const back = await gate.run([msg('b', { labelIds: [] })], RESTORE, moved);
    expect(back.results[0]?.outcome).toBe('moved');
    const e = await stoppedArchive(gate, 'c');
    expect(e).toBeInstanceOf(MailError);
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toContain('line 3 is not valid JSON');
    expect(e.message).toContain(log.path);
  });

  it('a torn last line is skipped and the next call works', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 5 } });
    await gate.run([msg('a')], ARCHIVE, moved);
    appendFileSync(log.path, '{"time":"2026-06-18T07:59:00Z","account":"work","kind":"mo');
    const r = await gate.run([msg('b')], ARCHIVE, moved);
    expect(r.results[0]?.outcome).toBe('moved');
    expect(await gateWith({ default: { dailyMoveCap: 5 } }).remaining()).toBe(3);
  });
});

describe('who and where', () => {
  it('a protected correspondent is refused with the reason; learnt from Sent only, case-insensitively', async () => {
    const box = sentMailbox();
    const set = new CorrespondentSet(box, { days: 365, refreshMinutes: 10, clock });
    const gate = gateWith({}, set);
    const r = await gate.run(
      [
        msg('a', { sender: 'alice@friends.example', senderHeader: 'Alice <alice@FRIENDS.example>' }),
        msg('b', { sender: 'bob@x.example', senderHeader: 'bob@x.example' }),
        msg('c', { sender: 'dan@x.example', senderHeader: 'dan@x.example' }),
        // A display name that names a correspondent protects nothing: the address decides.
        msg('d', { sender: 'evil@bad.example', senderHeader: '"alice@friends.example" <evil@bad.example>' }),
      ],
      ARCHIVE,
      moved,
    );
    expect(r.results.map((x) => [x.id, x.outcome, x.rule])).toEqual([
      ['a', 'refused', 'protected-correspondent'],
      ['b', 'refused', 'protected-correspondent'],
      ['c', 'moved', undefined],
      ['d', 'moved', undefined],
    ]);
    expect(r.results[0]?.reason).toContain('protected correspondent');
    expect(r.results[0]?.reason).toContain('last 365 days');
    expect(r.results[0]?.reason).not.toContain('alice');
    // Refreshes at most every refreshMinutes.
    await set.has('x@y.example');
    expect(box.reads).toBe(1);
    clock.advance(11 * 60_000);
    await set.has('x@y.example');
    expect(box.reads).toBe(2);
  });

  it('a provider with sentRecipients is asked that, and nothing else', async () => {
    const box: CorrespondentMailbox = {
      sentRecipients: async (days) => (days === 30 ? ['Zed@Z.example', 'Group: y@z.example;'] : []),
      searchMessages: () => Promise.reject(new Error('not this way')),
      getThread: () => Promise.reject(new Error('not this way')),
    };
    const set = new CorrespondentSet(box, { days: 30, refreshMinutes: 10, clock });
    expect(await set.has('zed@z.example')).toBe(true);
    expect(await set.has('y@z.example')).toBe(true);
    expect(await set.protects('Someone <nobody@z.example>')).toBe(false);
    expect(await set.protects('undisclosed-recipients:;')).toBe(true);
    expect(set.status()).toMatchObject({ addresses: 2, via: 'sentRecipients', truncated: false });
  });

  it('the set is bounded: beyond maxAddresses the newest are kept and status says so', async () => {
    const box: CorrespondentMailbox = {
      sentRecipients: async () => Array.from({ length: 50 }, (_, i) => `p${i}@x.example`),
      searchMessages: () => Promise.reject(new Error('unused')),
      getThread: () => Promise.reject(new Error('unused')),
    };
    const set = new CorrespondentSet(box, { days: 30, refreshMinutes: 10, clock, maxAddresses: 10 });
    expect(await set.has('p9@x.example')).toBe(true);
    expect(await set.has('p10@x.example')).toBe(false);
    expect(set.status()).toMatchObject({ addresses: 10, truncated: true });
  });

  it('a Sent folder that cannot be read holds moves with a retryable error', async () => {
    const box: CorrespondentMailbox = {
      sentRecipients: () => Promise.reject(new MailError('network_error', 'ECONNRESET')),
      searchMessages: () => Promise.reject(new Error('unused')),
      getThread: () => Promise.reject(new Error('unused')),
    };
    const gate = gateWith({}, new CorrespondentSet(box, { days: 365, refreshMinutes: 10, clock }));
    const e = await rejected(gate.run([msg('a')], ARCHIVE, moved));
    expect(e).toBeInstanceOf(MailError);
    expect(e.code).toBe('network_error');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('protected correspondents');
  });

  it('mail without a sender address is refused', async () => {
    const gate = gateWith();
    const r = await gate.run(
      [msg('a', { sender: undefined, senderHeader: 'undisclosed-recipients:;' })],
      ARCHIVE,
      moved,
    );
    expect(r.results[0]).toMatchObject({ outcome: 'refused', rule: 'no-sender' });
    expect(records()[0]).toMatchObject({
      kind: 'move',
      outcome: 'refused',
      refusedBy: 'no-sender',
      ids: ['a'],
    });
  });

  it('inbox-only: out only from the inbox; back only from Archive, Spam or Trash', async () => {
    const gate = gateWith();
    const out = await gate.run(
      [msg('a', { labelIds: ['SPAM'] }), msg('b')],
      { ...ARCHIVE, action: 'trash' },
      moved,
    );
    expect(out.results.map((r) => r.rule)).toEqual(['inbox-only', undefined]);
    expect(out.results[0]?.reason).toContain('is in Spam');
    const back = await gate.run(
      [
        msg('arch', { labelIds: [] }),
        msg('spam', { labelIds: ['SPAM'] }),
        msg('trash', { labelIds: ['TRASH'] }),
        msg('inbox', { labelIds: ['INBOX'] }),
        msg('draft', { labelIds: ['DRAFT'] }),
        msg('sent', { labelIds: ['SENT'] }),
        // A conversation the user replied to is where the other side's mail is (threadPlace).
        msg('thread', { kind: 'thread', messageCount: 2, labelIds: ['SENT'], place: 'archive' }),
        msg('own', { kind: 'thread', messageCount: 1, labelIds: ['SENT'], place: 'sent' }),
        msg('spread', { kind: 'thread', messageCount: 2, labelIds: ['SPAM'], place: 'mixed' }),
        // Trash wins over INBOX (Gmail may leave INBOX beside TRASH on a trashed thread).
        msg('trashed', { labelIds: ['INBOX', 'TRASH'] }),
      ],
      RESTORE,
      moved,
    );
    expect(back.results.map((r) => r.outcome)).toEqual([
      'moved',
      'moved',
      'moved',
      'refused',
      'refused',
      'refused',
      'moved',
      'refused',
      'refused',
      'moved',
    ]);
    expect(back.results[8]?.reason).toMatch(/several places.*one by one/);
    const untrash = await gate.run(
      [msg('s2', { labelIds: ['SPAM'] })],
      { ...RESTORE, fromLabelIds: ['TRASH'] },
      moved,
    );
    expect(untrash.results[0]?.rule).toBe('inbox-only');
    const off = gateWith({ default: { inboxOnlyMoves: false } });
    expect((await off.run([msg('x', { labelIds: [] })], ARCHIVE, moved)).results[0]?.outcome).toBe('moved');
  });

  it('labels: never a location label; only allowedLabels when set; label changes do not count', async () => {
    const gate = gateWith({ default: { allowedLabels: ['Receipts'], dailyMoveCap: 1 } });
    const label = (addLabels: string[], removeLabels: string[] = []): GateIntent => ({
      tool: 'label_threads',
      action: 'label',
      actor: 'agent',
      addLabels,
      removeLabels,
    });
    expect((await gate.run([msg('a')], label(['receipts', 'STARRED']), moved)).results[0]?.outcome).toBe(
      'moved',
    );
    const no = await gate.run([msg('b')], label(['Secret']), moved);
    expect(no.results[0]).toMatchObject({ outcome: 'refused', rule: 'allowed-labels' });
    expect(no.results[0]?.reason).toContain('Receipts');
    expect((await gate.run([msg('c')], label([], ['INBOX']), moved)).results[0]?.rule).toBe('inbox-only');
    expect(() => gate.checkLabelCreate('Secret')).toThrow(/allowedLabels/);
    expect(() => gate.checkLabelCreate('RECEIPTS')).not.toThrow();
    expect(await gate.remaining()).toBe(1);
  });

  it('records: refused ones once; allowed ones an intent line then an outcome line of the same call', async () => {
    const gate = gateWith({ default: { dailyMoveCap: 1 } });
    await gate.run([msg('a', { messageId: '<a@x>' }), msg('b')], ARCHIVE, moved);
    const lines = records();
    expect(lines.map((l) => [l['ids'], l['outcome']])).toEqual([
      [['a'], 'pending'],
      [['b'], 'refused'],
      [['a'], 'moved'],
    ]);
    expect(new Set(lines.map((l) => l['call'])).size).toBe(1);
    expect(lines[0]).toMatchObject({
      account: 'work',
      tool: 'archive_threads',
      op: 'move',
      kind: 'move',
      action: 'archive',
      actor: 'agent',
      unit: 'message',
      count: 1,
      messageId: '<a@x>',
      sender: 'news-a@shop.example',
      subject: 'offer a',
      time: new Date(NOW).toISOString(),
    });
  });

  it('the same id twice is a caller error', async () => {
    const e = await rejected(gateWith().run([msg('a'), msg('a')], ARCHIVE, moved));
    expect(e.code).toBe('invalid_input');
  });
});
