import { afterEach, describe, expect, it, vi } from 'vitest';
import { tourSnooze } from '../../src/demo/snooze.js';
import { buildRuntime, DEMO_ACCOUNT_ADDRESS } from '../../src/cli/runtime.js';
import { OffsetClock } from '../../src/mail/clock.js';
import { connectLocal } from '../../src/mcp/local-client.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the snooze demo step', () => {
  it('snoozes two inbox threads and, a day later, sweeps them back', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    const built = await buildRuntime({
      demo: true,
      env: { ...process.env, MAILWARDEN_TOOLS: 'read,manage' },
    });
    const clock = new OffsetClock();
    built.runtime.clock = clock;
    const client = await connectLocal(built.runtime);
    try {
      await tourSnooze(
        client,
        built.sandbox as NonNullable<typeof built.sandbox>,
        DEMO_ACCOUNT_ADDRESS,
        (ms) => clock.advance(ms),
      );
    } finally {
      await client.close();
      await built.close();
    }
    const out = lines.join('\n');
    expect(out).toMatch(/2 threads now carry MCP\/Snoozed\/\d{4}-\d{2}-\d{2}T0900/);
    expect(out).toContain('still in INBOX: 0 of 2');
    expect(out).toContain('due now: 0');
    expect(out).toContain('back in INBOX and unread: 2');
    expect(out).toContain('in INBOX now: 2 of 2');
  });
});
