import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerValue } from '../../src/mail/headers.js';
import { MailError } from '../../src/mail/errors.js';
import { unfence } from '../../src/mcp/untrusted.js';
import type { Tier } from '../../src/policy/tiers.js';
import { GmailMailbox } from '../../src/providers/gmail/mailbox.js';
import { loopbackTransport } from '../../src/providers/gmail/transport.js';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { makeClient, recordingTransport } from '../providers/gmail/helpers.js';
import { BASE, HOUR } from '../sandbox/helpers.js';

/**
 * The drafts tier: off by default (tools unlisted, endpoints refused at the checkpoint), on with
 * MAILWARDEN_TOOLS=read,manage,drafts. Sending stays impossible either way.
 */

const U = 'https://gmail.googleapis.com/gmail/v1/users/me';
const DRAFT_SURFACE: Array<[string, string, string?]> = [
  ['POST', `${U}/drafts`, '{"message":{"raw":"eA"}}'],
  ['GET', `${U}/drafts`],
  ['GET', `${U}/drafts/r123`],
  ['PUT', `${U}/drafts/r123`, '{}'],
  ['DELETE', `${U}/drafts/r123`],
  ['POST', `${U}/drafts/send`, '{"id":"r123"}'],
  ['POST', `${U}/messages/send`, '{"raw":"eA"}'],
];

async function reaches(tiers: Tier[], method: string, url: string, body?: string): Promise<string> {
  const rec = recordingTransport();
  try {
    await makeClient(tiers, rec.transport).request(
      body === undefined ? { method, url } : { method, url, body },
    );
    return 'passed';
  } catch (e) {
    return e instanceof MailError && rec.sent.length === 0 ? e.code : `reached: ${String(e)}`;
  }
}

describe('the checkpoint and the drafts tier', () => {
  it('without the tier every drafts endpoint is refused before anything is sent', async () => {
    for (const [method, url, body] of DRAFT_SURFACE) {
      expect(await reaches(['read', 'manage', 'filters'], method, url, body), `${method} ${url}`).toBe(
        'forbidden_operation',
      );
    }
  });

  it('with the tier only drafts.create passes: drafts.send and messages.send stay refused', async () => {
    const got = [];
    for (const [method, url, body] of DRAFT_SURFACE)
      got.push(await reaches(['read', 'manage', 'drafts'], method, url, body));
    expect(got).toEqual(['passed', ...Array(DRAFT_SURFACE.length - 1).fill('forbidden_operation')]);
  });
});

const mail = (lines: string[], body: string) =>
  `${lines.join('\r\n')}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`;

function seed(): SeedUser {
  return {
    email: DEMO_ADDRESS,
    userLabels: [],
    threads: [
      {
        key: 'plans',
        messages: [
          {
            raw: mail(
              [
                'From: Ann <ann@example.org>',
                `To: ${DEMO_ADDRESS}`,
                'Cc: Bob <bob@example.org>',
                'Subject: =?UTF-8?Q?Pl=C3=A4ne_f=C3=BCr_Mittwoch?=',
                'Message-ID: <p1@example.org>',
              ],
              'Lunch?',
            ),
            labelIds: ['INBOX'],
            internalDate: BASE,
          },
          {
            raw: mail(
              [
                `From: ${DEMO_ADDRESS}`,
                'To: Ann <ann@example.org>',
                'Subject: Re: =?UTF-8?Q?Pl=C3=A4ne_f=C3=BCr_Mittwoch?=',
                'Message-ID: <p2@mailwarden.example>',
                'In-Reply-To: <p1@example.org>',
                'References: <p1@example.org>',
              ],
              'Yes.',
            ),
            labelIds: ['SENT'],
            internalDate: BASE + HOUR,
          },
          {
            raw: mail(
              [
                'From: Ann <ann@example.org>',
                'Reply-To: Ann Home <ann@home.example>',
                `To: ${DEMO_ADDRESS}, Carol <carol@example.org>`,
                'Cc: bob@example.org',
                'Subject: Re: =?UTF-8?Q?Pl=C3=A4ne_f=C3=BCr_Mittwoch?=',
                'Message-ID: <p3@example.org>',
                'In-Reply-To: <p2@mailwarden.example>',
                'References: <p1@example.org> <p2@mailwarden.example>',
              ],
              'Noon at the usual place?',
            ),
            labelIds: ['INBOX', 'UNREAD'],
            internalDate: BASE + 2 * HOUR,
          },
        ],
      },
    ],
  };
}

let stack: Stack;
let reader: GmailMailbox;
const plans = () => stack.sandbox.threadIdForKey(DEMO_ADDRESS, 'plans');

/** Headers of a stored message, read back through the Gmail API the sandbox serves. */
async function headersOf(threadId: string, messageId: string): Promise<(name: string) => string | undefined> {
  const thread = await reader.getThread(threadId, { format: 'full' });
  const m = thread.messages.find((x) => x.id === messageId);
  if (m === undefined) throw new Error(`message ${messageId} not in thread ${threadId}`);
  return (name) => headerValue(m.headers, name);
}

beforeAll(async () => {
  stack = await startStack({ sandbox: { users: [seed()] }, env: { MAILWARDEN_TOOLS: 'read,manage,drafts' } });
  reader = new GmailMailbox({
    account: 'reader',
    credentials: { ...stack.sandbox.oauthClient, refreshToken: stack.refreshToken },
    tiers: new Set<Tier>(['read']),
    transport: loopbackTransport(stack.sandbox.url),
  });
});
afterAll(async () => {
  await stack?.close();
});

describe('drafts tier on', () => {
  it('lists create_draft and draft_reply, and no tool that sends', async () => {
    const names = (await stack.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['create_draft', 'draft_reply']));
    // A verb that sends or forwards; list_sender_rules only names senders.
    expect(names.filter((n) => /(^|_)(send|forward)(_|$)/.test(n))).toEqual([]);
  });

  it('draft_reply with replyAll: threaded on the last message, to Reply-To, the others in Cc, never me', async () => {
    const r = await stack.call('draft_reply', {
      threadId: plans(),
      body: 'Noon works. See you there!',
      replyAll: true,
    });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured).toMatchObject({ threadId: plans(), inReplyTo: '<p3@example.org>' });
    expect(unfence(r.structured['subject'] as string)).toBe('Re: Pläne für Mittwoch');
    expect((r.structured['to'] as string[]).map(unfence)).toEqual(['Ann Home <ann@home.example>']);
    expect((r.structured['cc'] as string[]).map(unfence)).toEqual([
      'Carol <carol@example.org>',
      'bob@example.org',
    ]);

    const view = stack.sandbox.mailbox(DEMO_ADDRESS);
    const stored = view.messages.find((m) => m.id === r.structured['messageId']);
    expect(stored?.labelIds).toEqual(['DRAFT']);
    expect(stored?.threadId).toBe(plans());
    const h = await headersOf(plans(), stored?.id ?? '');
    expect(h('From')).toBe(DEMO_ADDRESS);
    expect(h('To')).toBe('Ann Home <ann@home.example>');
    expect(h('Cc')).toBe('Carol <carol@example.org>, bob@example.org');
    expect(h('Subject')).toBe('Re: Pläne für Mittwoch');
    expect(h('In-Reply-To')).toBe('<p3@example.org>');
    expect(h('References')).toBe('<p1@example.org> <p2@mailwarden.example> <p3@example.org>');
    expect(h('Message-ID')).toMatch(/^<[\w.-]+@mailwarden\.example>$/);
  });

  it('a second reply answers the last real message, not the draft, and without replyAll only the sender', async () => {
    const r = await stack.call('draft_reply', { threadId: plans(), body: 'Or 1pm?' });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['inReplyTo']).toBe('<p3@example.org>');
    expect(r.structured['cc']).toEqual([]);
    const h = await headersOf(plans(), r.structured['messageId'] as string);
    expect(h('To')).toBe('Ann Home <ann@home.example>');
    expect(h('Cc')).toBeUndefined();
  });

  it('create_draft saves a new thread with To, Cc, Bcc and an encoded subject', async () => {
    const r = await stack.call('create_draft', {
      to: ['Zoë <zoe@example.org>'],
      cc: ['c@example.org'],
      bcc: ['b@example.org'],
      subject: 'Grüße aus Köln',
      body: 'Hallo Zoë,\nbis bald.',
    });
    expect(r.isError, r.text).toBe(false);
    const threadId = r.structured['threadId'] as string;
    const h = await headersOf(threadId, r.structured['messageId'] as string);
    expect([h('To'), h('Cc'), h('Bcc'), h('Subject')]).toEqual([
      'Zoë <zoe@example.org>',
      'c@example.org',
      'b@example.org',
      'Grüße aus Köln',
    ]);
    const thread = stack.sandbox.mailbox(DEMO_ADDRESS).threads.find((t) => t.id === threadId);
    expect(thread?.messageIds).toEqual([r.structured['messageId']]);
  });

  it('refuses CR/LF in any field and bad addresses; nothing is saved', async () => {
    const count = stack.sandbox.mailbox(DEMO_ADDRESS).messages.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: ['ann@example.org\r\nBcc: evil@attacker.example'], body: 'x' }, 'to.0'],
      [{ to: ['ann@example.org'], cc: ['Bob\n <bob@example.org>'], body: 'x' }, 'cc.0'],
      [{ to: ['ann@example.org'], subject: 'Hi\r\nBcc: evil@attacker.example', body: 'x' }, 'subject'],
      [{ to: ['ann@example.org, evil@attacker.example'], body: 'x' }, 'to.0'],
      [{ to: ['not-an-address'], body: 'x' }, 'to.0'],
    ];
    for (const [args, field] of cases) {
      const r = await stack.call('create_draft', args);
      expect(r.error, JSON.stringify(args)).toMatchObject({ code: 'invalid_input', field });
    }
    expect(stack.sandbox.mailbox(DEMO_ADDRESS).messages.length).toBe(count);
  });

  it('the sandbox threads a draft only as Gmail does: threadId, a reference into it, the same subject', async () => {
    const writer = new GmailMailbox({
      account: 'writer',
      credentials: { ...stack.sandbox.oauthClient, refreshToken: stack.refreshToken },
      tiers: new Set<Tier>(['read', 'drafts']),
      transport: loopbackTransport(stack.sandbox.url),
    });
    const raw = (extra: string[], subject: string) =>
      mail(
        [
          `From: ${DEMO_ADDRESS}`,
          'To: ann@example.org',
          `Subject: ${subject}`,
          'Message-ID: <w@mailwarden.example>',
          ...extra,
        ],
        'x',
      );
    const noRefs = await writer.createDraft({ raw: raw([], 'Re: Pläne für Mittwoch'), threadId: plans() });
    expect(noRefs.threadId).not.toBe(plans());
    const otherSubject = await writer.createDraft({
      raw: raw(['In-Reply-To: <p3@example.org>'], 'Re: something else'),
      threadId: plans(),
    });
    expect(otherSubject.threadId).not.toBe(plans());
    const right = await writer.createDraft({
      raw: raw(['In-Reply-To: <p3@example.org>'], 'RE: =?UTF-8?Q?Pl=C3=A4ne_f=C3=BCr_Mittwoch?='),
      threadId: plans(),
    });
    expect(right.threadId).toBe(plans());
  });

  it('every draft is in the action log', () => {
    const lines = readFileSync(join(stack.configDir, 'action-log.jsonl'), 'utf8').trim().split('\n');
    const drafts = lines.map(
      (l) => JSON.parse(l) as { op: string; outcome: string; detail?: Record<string, unknown> },
    );
    // Each write is an intent line before it and an outcome line after it.
    const made = drafts.filter((d) => d.op === 'createDraft' && d.outcome !== 'pending');
    expect(made).toHaveLength(3);
    expect(made.every((d) => d.outcome === 'ok' && typeof d.detail?.['draftId'] === 'string')).toBe(true);
    expect(drafts.filter((d) => d.op === 'createDraft' && d.outcome === 'pending')).toHaveLength(3);
  });
});

describe('drafts tier off (the default)', () => {
  it('the tools are not listed and cannot be called', async () => {
    const other = await startStack({ existingSandbox: stack.sandbox });
    try {
      const names = (await other.client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('create_draft');
      expect(names).not.toContain('draft_reply');
      const count = stack.sandbox.mailbox(DEMO_ADDRESS).messages.length;
      const r = await other
        .call('create_draft', { to: ['ann@example.org'], body: 'x' })
        .catch((e: unknown) => ({
          isError: true,
          structured: {},
          text: String(e),
        }));
      expect(r.isError).toBe(true);
      expect(stack.sandbox.mailbox(DEMO_ADDRESS).messages.length).toBe(count);
    } finally {
      await other.close();
    }
  });
});
