import { describe, expect, it } from 'vitest';
import type { Transport } from '../../../src/providers/gmail/transport.js';
import {
  TOKEN_URL,
  googleError,
  json,
  makeClient,
  recordingTransport,
  rejection,
  tokenOk,
} from './helpers.js';
import type { Handler } from './helpers.js';

const gmailOnly =
  (answer: Handler): Handler =>
  (req, n) =>
    req.url === TOKEN_URL ? tokenOk() : answer(req, n);

describe('GmailClient error mapping', () => {
  it('403 insufficientPermissions names the scope and the tier that grants it', async () => {
    const rec = recordingTransport(
      gmailOnly(() => googleError(403, 'insufficientPermissions', 'Insufficient Permission')),
    );
    const client = makeClient(['read', 'manage'], rec.transport);
    const e = await rejection(
      client.call('messages.modify', { params: { id: 'abc' }, body: { addLabelIds: ['STARRED'] } }),
    );
    expect(e.code).toBe('insufficient_scope');
    expect(e.message).toContain('https://www.googleapis.com/auth/gmail.modify');
    expect(e.message).toContain('"manage" tier');
    expect(e.message).toContain('`mailwarden auth`');
  });

  it('404 → not_found, 400 and 409 → invalid_input with Google’s message, other 403 → not_authorized', async () => {
    const cases: Array<[Response, string, RegExp]> = [
      [googleError(404, 'notFound', 'Requested entity was not found.'), 'not_found', /not found/],
      [googleError(400, 'invalidArgument', 'Invalid label name'), 'invalid_input', /Invalid label name/],
      [googleError(409, 'conflict', 'Label name exists or conflicts'), 'invalid_input', /conflicts/],
      [
        googleError(403, 'forbidden', 'Mail service not enabled'),
        'not_authorized',
        /Mail service not enabled/,
      ],
    ];
    for (const [response, code, message] of cases) {
      const rec = recordingTransport(gmailOnly(() => response.clone()));
      const e = await rejection(
        makeClient(['read', 'manage'], rec.transport).call('labels.create', { body: { name: 'x' } }),
      );
      expect(e.code).toBe(code);
      expect(e.message).toMatch(message);
    }
  });
});

describe('GmailClient requests', () => {
  it('204 answers undefined and batchModify is charged 50 units', async () => {
    const rec = recordingTransport(gmailOnly(() => json(204, null)));
    const client = makeClient(['read', 'manage'], rec.transport);
    const out = await client.call('messages.batchModify', {
      body: { ids: ['a', 'b'], removeLabelIds: ['INBOX'] },
    });
    expect(out).toBeUndefined();
    expect(client.usage()).toEqual({ requests: 2, quotaUnits: 50 });
    const sent = rec.gmail()[0];
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent?.body ?? '')).toEqual({ ids: ['a', 'b'], removeLabelIds: ['INBOX'] });
  });

  it('counts every attempt, retries and token included', async () => {
    const rec = recordingTransport(
      gmailOnly((_r, n) => (n.gmail === 1 ? googleError(503, 'backendError', 'x') : json(200, { id: 't' }))),
    );
    const client = makeClient(['read'], rec.transport);
    await client.call('threads.get', { params: { id: 't' }, query: { format: 'minimal' } });
    expect(client.usage()).toEqual({ requests: 3, quotaUnits: 20 });
  });

  it('a path id outside Gmail’s id alphabet is invalid_input naming the parameter, nothing sent', async () => {
    const rec = recordingTransport();
    const client = makeClient(['read', 'manage'], rec.transport);
    const e = await rejection(client.call('messages.trash', { params: { id: 'a/../../send' } }));
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('id');
    expect(rec.sent).toHaveLength(0);
  });

  it('a write endpoint outside the enabled tiers is refused before any token is fetched', async () => {
    const rec = recordingTransport();
    const e = await rejection(
      makeClient(['read'], rec.transport).call('threads.trash', { params: { id: 'abc' } }),
    );
    expect(e.code).toBe('forbidden_operation');
    expect(e.message).toMatch(/"manage" tier/);
    expect(rec.sent).toHaveLength(0);
  });

  it('never follows redirects (a 3xx could carry the bearer past the checkpoint)', async () => {
    const inits: RequestInit[] = [];
    const transport: Transport = (url, init) => {
      inits.push(init);
      return Promise.resolve(url === TOKEN_URL ? tokenOk() : json(200, {}));
    };
    await makeClient(['read'], transport).call('labels.list');
    expect(inits.map((i) => i.redirect)).toEqual(['error', 'error']);
  });

  it('an abort during a request stops it and is not retried', async () => {
    const ctl = new AbortController();
    const rec = recordingTransport(
      gmailOnly(() => {
        ctl.abort();
        throw new DOMException('aborted', 'AbortError');
      }),
    );
    const client = makeClient(['read'], rec.transport);
    await expect(client.call('labels.list', { signal: ctl.signal })).rejects.toThrow(/abort/i);
    expect(rec.gmail()).toHaveLength(1);
  });
});
