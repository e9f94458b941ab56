import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { appendMessage } from '../../src/sandbox/imap/index.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';

/*
 * An annotation says what a call can do (issue 22, item 4): every tool a client sees as
 * readOnlyHint is called, on the Gmail sandbox and both Dovecot profiles, with sender rules in
 * policy.json that cover mail in the inbox, and the provider must receive no write at all — no
 * Gmail write method, no IMAP CREATE/STORE/COPY/MOVE/APPEND/EXPUNGE. A read-only tool added later
 * without arguments here fails the test, so none escapes the walk.
 */

const k = DEMO_FACTS.keys;

describe.each(['gmail', 'full', 'bridge'] as BackendKind[])('read-only tools on %s', (kind) => {
  let b: Backend;
  beforeAll(async () => {
    b = await startBackend(kind, {
      recordWrites: true,
      env: { MAILWARDEN_TOOLS: 'read,manage,filters' },
      policy: {
        // The rules cover inbox mail; the server's own sweep is off, so any move would be a tool's.
        default: { senderRules: { archive: ['ruled.example'] }, sweepRulesEveryMinutes: 0 },
      },
    });
    const raw = [
      'From: News <news@ruled.example>',
      `To: ${DEMO_ADDRESS}`,
      'Subject: A ruled newsletter',
      'Message-ID: <ro-ruled@ruled.example>',
      'Date: Mon, 30 Nov 2026 08:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Ruled.',
      '',
    ].join('\r\n');
    if (b.gmail) b.gmail.sandbox.deliver(DEMO_ADDRESS, raw, ['INBOX', 'UNREAD']);
    else await appendMessage((b.imap as NonNullable<Backend['imap']>).server, 'INBOX', raw);
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  it('no tool annotated readOnlyHint sends a write to the provider', async () => {
    const inbox = b.tid(k.oneClickNewsletters[0] as string);
    const thread = await b.call('get_thread', { threadId: inbox, bodies: 'none' });
    const messageId = (thread.structured['messages'] as Array<{ id: string }>)[0]?.id as string;
    const profile = await b.call('get_profile', {});
    const historyId = String(profile.structured['historyId'] ?? '1');
    const args: Record<string, Record<string, unknown>> = {
      search: { query: 'in:inbox', maxResults: 5 },
      get_thread: { threadId: inbox },
      get_message: { messageId },
      list_labels: {},
      get_profile: {},
      what_changed: { historyId },
      list_new_mail: {},
      check_new_mail: {},
      list_filters: {},
      preview_filter: { criteria: { from: 'ruled.example' }, removeLabels: ['INBOX'] },
      read_attachment: { threadId: b.tid(k.withAttachments[0] as string) },
      list_unsubscribe: { threadId: inbox },
      list_subscriptions: { maxThreads: 20 },
      triage_digest: { maxThreads: 20 },
      follow_ups: { maxThreads: 20 },
      count_moves: {},
      list_sender_rules: {},
      list_accounts: {},
      list_snoozed: {},
    };
    const tools = (await b.client.listTools()).tools.filter((t) => t.annotations?.readOnlyHint === true);
    expect(tools.length).toBeGreaterThan(10);
    const before = b.writes().length;
    for (const t of tools) {
      const a = args[t.name];
      expect(a, `read-only tool ${t.name} has no arguments in this walk: add them`).toBeDefined();
      await b.call(t.name, a ?? {});
      expect(b.writes().slice(before), `${t.name} wrote to the provider`).toEqual([]);
    }
    // The recording sees writes: a write tool's call shows up in it.
    const marked = await b.call('mark_unread', { threadId: inbox });
    expect(marked.isError, marked.text).toBe(false);
    expect(b.writes().slice(before).length).toBeGreaterThan(0);
    // The ruled message is still in the inbox: only the sweep moves it.
    const still = await b.call('search', { query: 'rfc822msgid:ro-ruled@ruled.example in:inbox' });
    expect(still.structured['threads']).toHaveLength(1);
  });
});
