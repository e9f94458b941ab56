import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withMailClient } from '../../../src/sandbox/imap/index.js';
import { startBackend } from '../../helpers/backends.js';
import type { Backend } from '../../helpers/backends.js';

/*
 * Keyword labels (src/providers/imap/mailbox.ts, learnKeywords): a keyword in use anywhere is a
 * label list_labels shows and label: can search; flags that are states, not labels ($Forwarded
 * and the older Forwarded, which Proton Bridge lists in every folder) are never shown as labels.
 * On Bridge, whose every folder answers the same fixed FLAGS list, INBOX's answer stands for all:
 * the other folders are not opened to learn keywords (one EXAMINE, not one per location folder).
 */

/** Label names as shown (a mail-made name comes fenced). */
const names = (r: { structured: Record<string, unknown> }) =>
  (r.structured['labels'] as Array<{ name: string }>).map((l) => l.name);

describe('keyword labels on full Dovecot', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('full', { delayMs: 0 });
    const server = (b.imap as NonNullable<Backend['imap']>).server;
    // A keyword set only in Archive, by another client.
    await withMailClient(server, async (c) => {
      await c.mailboxOpen('Archive');
      await c.messageFlagsAdd('1:1', ['Audit2026', 'Forwarded', '$Forwarded']);
    });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('shows a keyword used only outside INBOX, and no state flag as a label', async () => {
    const r = await b.call('list_labels', {});
    expect(r.isError, r.text).toBe(false);
    expect(names(r).filter((n) => n.includes('Audit2026'))).toHaveLength(1);
    expect(names(r).filter((n) => /forwarded/i.test(n))).toEqual([]);
  });
});

describe('keyword labels on the Bridge profile', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend('bridge', { delayMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('lists no Forwarded label and learns keywords from INBOX alone', async () => {
    const front = (b.imap as NonNullable<Backend['imap']>).proxy;
    expect(front).toBeDefined();
    const from = front?.commands().length ?? 0;
    const r = await b.call('list_labels', {});
    expect(r.isError, r.text).toBe(false);
    expect(names(r).filter((n) => /forwarded/i.test(n))).toEqual([]);
    expect(names(r).filter((n) => n.includes('Receipts'))).toHaveLength(1);
    const opened = (front?.commands() ?? [])
      .slice(from)
      .map((c) => c.text.replace(/^\S+ /, ''))
      .filter((t) => /^(EXAMINE|SELECT) /i.test(t));
    expect(opened).toEqual(['EXAMINE INBOX']);
  });
});
