import { unfence } from '../../src/mcp/untrusted.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { CallOutcome, Stack } from '../helpers/stack.js';

/* Issue 9 item 7 (the Gmail side), end to end through the built server and the sandbox. */

interface Envelope {
  code: string;
  message: string;
  field?: string;
}

function envelope(r: CallOutcome): Envelope {
  expect(r.isError).toBe(true);
  const inStructured = r.structured['error'] as Envelope | undefined;
  if (inStructured !== undefined) return inStructured;
  const parsed = JSON.parse(r.text.slice(r.text.indexOf('{'))) as { error?: Envelope } & Envelope;
  return parsed.error ?? parsed;
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAILWARDEN_TOOLS: 'read,manage,drafts' } });
});
afterAll(async () => {
  await stack?.close();
});

const inboxThread = (): string => {
  const m = stack.sandbox.mailbox(DEMO_ADDRESS).messages.find((x) => x.labelIds.includes('INBOX'));
  return m?.threadId ?? '';
};

describe('a call whose every target failed is an error with the code', () => {
  it('archive of an id Gmail does not know → isError not_found, nothing changed', async () => {
    const before = JSON.stringify(stack.sandbox.mailbox(DEMO_ADDRESS).messages.map((m) => m.labelIds));
    const e = envelope(await stack.call('archive', { threadId: 'deadbeefdeadbeef' }));
    expect(e.code).toBe('not_found');
    expect(e.message).toMatch(/nothing was changed/);
    expect(JSON.stringify(stack.sandbox.mailbox(DEMO_ADDRESS).messages.map((m) => m.labelIds))).toBe(before);
  });

  it('one known and one unknown id: partial success stays per item', async () => {
    const good = inboxThread();
    const r = await stack.call('mark_read', { threadIds: [good, 'deadbeefdeadbeef'] });
    expect(r.isError).toBe(false);
    expect((r.structured['changed'] as Array<{ threadId: string }>).map((c) => c.threadId)).toEqual([good]);
    expect(r.structured['failed']).toMatchObject([{ threadId: 'deadbeefdeadbeef', code: 'not_found' }]);
  });
});

describe('what_changed', () => {
  it('a historyId newer than the mailbox’s is invalid_input, never an empty page with a cursor moving backwards', async () => {
    const p = await stack.call('get_profile');
    const current = BigInt(p.structured['historyId'] as string);
    const e = envelope(await stack.call('what_changed', { historyId: String(current + 1000n) }));
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('historyId');
    expect(e.message).toContain(`current historyId ${current}`);
    // The mailbox's own cursor still works.
    expect((await stack.call('what_changed', { historyId: String(current) })).isError).toBe(false);
  });
});

describe('bulk_modify dry run', () => {
  it('returns a previewToken only when something matches', async () => {
    const none = await stack.call('bulk_modify', {
      query: 'from:nobody-at-all@nowhere.example',
      add: ['STARRED'],
      dryRun: true,
    });
    expect(none.isError).toBe(false);
    expect(none.structured['toWrite']).toBe(0);
    expect(none.structured['previewToken']).toBeUndefined();
    expect(none.structured['previewExpiresAt']).toBeUndefined();
    const some = await stack.call('bulk_modify', { query: 'in:inbox', add: ['STARRED'], dryRun: true });
    expect(some.structured['toWrite']).toBeGreaterThan(0);
    expect(typeof some.structured['previewToken']).toBe('string');
  });
});

describe('list_labels', () => {
  it('shows label colours', async () => {
    const made = await stack.call('create_label', {
      name: 'Colourful',
      backgroundColor: '#4a86e8',
      textColor: '#ffffff',
    });
    expect(made.isError, made.text).toBe(false);
    for (const counts of [false, true]) {
      const r = await stack.call('list_labels', { counts });
      const labels = r.structured['labels'] as Array<{ name: string; color?: unknown }>;
      expect(labels.find((l) => unfence(l.name) === 'Colourful')?.color).toEqual({
        backgroundColor: '#4a86e8',
        textColor: '#ffffff',
      });
    }
  });
});

describe('create_draft', () => {
  it('quotes the value it refused', async () => {
    const e = envelope(await stack.call('create_draft', { to: ['Bob Example'], subject: 'x', body: 'y' }));
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('to.0');
    expect(e.message).toContain('"Bob Example"');
    const bidi = envelope(
      await stack.call('create_draft', { to: ['bob@example.com'], subject: 'pay \u202Egnp.exe', body: 'y' }),
    );
    expect(bidi.field).toBe('subject');
    expect(bidi.message).toContain('"pay \\u{202e}gnp.exe"');
  });
});

describe('a part without a filename', () => {
  it('shows an empty filename, not an empty fence', async () => {
    const raw = [
      'From: Ann <ann@example.org>',
      `To: ${DEMO_ADDRESS}`,
      'Subject: with an unnamed part',
      'Message-ID: <unnamed-part-1@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'See the data.',
      '--b1',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment',
      'Content-Transfer-Encoding: base64',
      '',
      'AAECAw==',
      '--b1--',
      '',
    ].join('\r\n');
    const { threadId } = stack.sandbox.deliver(DEMO_ADDRESS, raw, ['INBOX']);
    const r = await stack.call('get_thread', { threadId });
    expect(r.isError, r.text).toBe(false);
    const messages = r.structured['messages'] as Array<{
      attachments: Array<{ filename: string; size: number }>;
    }>;
    const attachments = messages.flatMap((m) => m.attachments);
    expect(attachments).toHaveLength(1);
    expect(attachments[0]?.filename).toBe('');
    expect(r.text).not.toMatch(/⟦mail [0-9a-f]+⟧⟦\/mail [0-9a-f]+⟧/);
  });
});
