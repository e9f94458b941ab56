import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GATHER_MS } from '../../../src/providers/gather.js';
import { WriteGatherer } from '../../../src/providers/gmail/write-batch.js';
import type { LabelChange } from '../../../src/providers/mailbox.js';

/*
 * The gathering of concurrent thread writes into messages.batchModify requests: which ids go out
 * in which request, and when. Timers are fake, so "sent" means sent before any time passed.
 */

const ARCHIVE: LabelChange = { add: [], remove: ['INBOX'] };

let requests: string[][];
let gatherer: WriteGatherer;
beforeEach(() => {
  vi.useFakeTimers();
  requests = [];
  gatherer = new WriteGatherer(async (ids) => {
    requests.push([...ids]);
  }, 1000);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('WriteGatherer', () => {
  it('sends a one-thread write at once when its caller says it is the only one', async () => {
    const done = gatherer.add(['m1', 'm2'], ARCHIVE, undefined, 1);
    await done;
    expect(requests).toEqual([['m1', 'm2']]);
  });

  it('sends the gathering as soon as every write started together has arrived: one request', async () => {
    const signal = new AbortController().signal;
    const writes = [['a1'], ['b1', 'b2'], ['c1']].map((ids) => gatherer.add(ids, ARCHIVE, signal, 3));
    await Promise.all(writes);
    expect(requests).toEqual([['a1', 'b1', 'b2', 'c1']]);
  });

  it('without a count, waits for a quiet spell before sending', async () => {
    let settled = false;
    const done = gatherer.add(['m1'], ARCHIVE).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(GATHER_MS - 1);
    expect(requests).toEqual([]);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(requests).toEqual([['m1']]);
  });

  it('when fewer writes come than were announced (one failed before it was sent), the rest go after the quiet spell', async () => {
    const first = gatherer.add(['a1'], ARCHIVE, undefined, 3);
    const second = gatherer.add(['b1'], ARCHIVE, undefined, 3);
    await vi.advanceTimersByTimeAsync(0);
    expect(requests).toEqual([]);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    await Promise.all([first, second]);
    expect(requests).toEqual([['a1', 'b1']]);
  });

  it('keeps different changes and different calls apart', async () => {
    const [one, two] = [new AbortController().signal, new AbortController().signal];
    const read: LabelChange = { add: [], remove: ['UNREAD'] };
    await Promise.all([
      gatherer.add(['a1'], ARCHIVE, one, 1),
      gatherer.add(['b1'], read, one, 1),
      gatherer.add(['c1'], ARCHIVE, two, 1),
    ]);
    expect(requests).toEqual([['a1'], ['b1'], ['c1']]);
  });
});
