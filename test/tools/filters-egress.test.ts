import { describe, expect, it } from 'vitest';
import { MailError } from '../../src/mail/errors.js';
import { TIERS } from '../../src/policy/tiers.js';
import { GmailMailbox } from '../../src/providers/gmail/mailbox.js';
import type { FilterInput } from '../../src/providers/mailbox.js';
import { CREDENTIALS, TOKEN_URL, json, makeClient, recordingTransport } from '../providers/gmail/helpers.js';

/**
 * "Filters never forward" (docs/architecture.md, promise 1) at the two places below the tools: the egress
 * checkpoint refuses any filter body that mentions forwarding, whatever builds it, and the
 * provider cannot put a forward field into a body even when one is smuggled in at run time.
 */

const FILTERS = 'https://gmail.googleapis.com/gmail/v1/users/me/settings/filters';
const S = 'https://gmail.googleapis.com/gmail/v1/users/me/settings';

async function attempt(method: string, url: string, body?: string): Promise<{ code?: string; seen: number }> {
  const rec = recordingTransport();
  const client = makeClient([...TIERS], rec.transport);
  try {
    await client.request(body === undefined ? { method, url } : { method, url, body });
    return { seen: rec.sent.length };
  } catch (e) {
    return { code: e instanceof MailError ? e.code : String(e), seen: rec.sent.length };
  }
}

describe('the checkpoint refuses forwarding filters with every tier on', () => {
  const bodies = [
    JSON.stringify({ criteria: { from: 'a@x.example' }, action: { forward: 'evil@z.example' } }),
    JSON.stringify({
      criteria: { from: 'a@x.example' },
      action: { addLabelIds: ['INBOX'], Forward: 'e@z.example' },
    }),
    JSON.stringify({
      criteria: { from: 'a@x.example', forward: 'e@z.example' },
      action: { addLabelIds: ['X'] },
    }),
    JSON.stringify({ filter: [{ action: { forwardTo: 'e@z.example' } }] }),
    // Spellings another JSON reader could see differently: escapes, duplicate keys.
    '{"criteria":{"from":"a"},"action":{"\\u0066orward":"e@z.example"}}',
    '{"criteria":{"from":"a"},"action":{"addLabelIds":["X"]},"action":{"forward":"e@z.example"}}',
  ];
  for (const body of bodies) {
    it(body, async () => {
      expect(await attempt('POST', FILTERS, body)).toEqual({ code: 'forbidden_operation', seen: 0 });
    });
  }

  it('the forwarding settings themselves are not reachable', async () => {
    const body = JSON.stringify({ forwardingEmail: 'e@z.example' });
    expect(await attempt('POST', `${S}/forwardingAddresses`, body)).toEqual({
      code: 'forbidden_operation',
      seen: 0,
    });
    expect(await attempt('PUT', `${S}/autoForwarding`, JSON.stringify({ enabled: true }))).toEqual({
      code: 'forbidden_operation',
      seen: 0,
    });
    expect(await attempt('PUT', `${S}/filters/abc`, '{}')).toEqual({ code: 'forbidden_operation', seen: 0 });
  });

  it('a label-only filter body passes', async () => {
    const body = JSON.stringify({ criteria: { from: 'a@x.example' }, action: { addLabelIds: ['Label_1'] } });
    expect(await attempt('POST', FILTERS, body)).toEqual({ seen: 2 });
  });
});

describe('GmailMailbox.createFilter writes label actions only', () => {
  it('drops a forward smuggled into the input at run time', async () => {
    const rec = recordingTransport((req) =>
      req.url === TOKEN_URL
        ? json(200, { access_token: 't', expires_in: 3599 })
        : json(200, { id: 'f1', criteria: { from: 'a@x.example' }, action: { addLabelIds: ['Label_1'] } }),
    );
    const mailbox = new GmailMailbox({
      account: 'default',
      credentials: CREDENTIALS,
      tiers: new Set(TIERS),
      transport: rec.transport,
    });
    const smuggled = {
      criteria: { from: 'a@x.example', forward: 'e@z.example' },
      action: { addLabelIds: ['Label_1'], removeLabelIds: [], forward: 'e@z.example' },
      forward: 'e@z.example',
    } as unknown as FilterInput;
    const created = await mailbox.createFilter(smuggled);
    expect(created.id).toBe('f1');
    const sent = rec.gmail();
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]?.body ?? '')).toEqual({
      criteria: { from: 'a@x.example' },
      action: { addLabelIds: ['Label_1'] },
    });
  });

  it('reads back an existing forwarding address for audit', async () => {
    const rec = recordingTransport((req) =>
      req.url === TOKEN_URL
        ? json(200, { access_token: 't', expires_in: 3599 })
        : json(200, {
            filter: [
              { id: 'f9', criteria: { from: 'boss@x.example' }, action: { forward: 'me@home.example' } },
            ],
          }),
    );
    const mailbox = new GmailMailbox({
      account: 'default',
      credentials: CREDENTIALS,
      tiers: new Set(['read' as const]),
      transport: rec.transport,
    });
    expect(await mailbox.listFilters()).toEqual([
      {
        id: 'f9',
        criteria: { from: 'boss@x.example' },
        action: { addLabelIds: [], removeLabelIds: [], forward: 'me@home.example' },
      },
    ]);
  });
});
