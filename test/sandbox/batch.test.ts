import { afterEach, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { ALICE, BOB, startHarness } from './helpers.js';

/*
 * POST /batch/gmail/v1 in the form of Google's batch guide: a multipart/mixed body of
 * application/http parts, answered by a multipart/mixed 200 whose parts carry each call's own
 * status, paired by Content-ID "response-<id>". Bodies here are written by hand, not by the
 * client's encoder, so the format is checked against the guide and not against itself.
 */

let h: Harness;
afterEach(async () => {
  await h.sandbox.close();
});

const tid = (key: string): string => h.sandbox.threadIdForKey(ALICE, key);

function body(boundary: string, calls: Array<{ id: string; line: string; headers?: string[] }>): string {
  return (
    calls
      .map((c) =>
        [
          `--${boundary}`,
          'Content-Type: application/http',
          `Content-ID: <${c.id}>`,
          '',
          c.line,
          ...(c.headers ?? []),
          '',
          '',
        ].join('\r\n'),
      )
      .join('') + `--${boundary}--\r\n`
  );
}

async function batch(text: string, token?: string, boundary = 'batch_foobarbaz') {
  const res = await fetch(`${h.sandbox.url}/batch/gmail/v1`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token ?? (await h.token())}`,
      'Content-Type': `multipart/mixed; boundary=${boundary}`,
    },
    body: text,
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The answer's parts read plainly: Content-ID, inner status line, inner JSON. */
function parts(answer: { contentType: string; text: string }) {
  const boundary = /boundary=([^;]+)/.exec(answer.contentType)?.[1] ?? '';
  expect(answer.contentType).toMatch(/^multipart\/mixed; boundary=/);
  expect(answer.text.trimEnd().endsWith(`--${boundary}--`)).toBe(true);
  return answer.text
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => {
      const [outer = '', inner = ''] = chunk.replace(/^\r\n/, '').split(/\r\n\r\n(.*)/s);
      const [head = '', json = ''] = inner.split(/\r\n\r\n(.*)/s);
      return {
        outer,
        contentId: /Content-ID: <([^>]*)>/.exec(outer)?.[1],
        status: head.split('\r\n')[0],
        headers: head,
        json: json.trim() === '' ? undefined : (JSON.parse(json) as Record<string, unknown>),
      };
    });
}

describe('POST /batch/gmail/v1', () => {
  it('answers each call in its own part, in order, with its Content-ID and status; quota per inner call', async () => {
    h = await startHarness();
    await h.token();
    h.sandbox.resetStats();
    const answer = await batch(
      body('batch_foobarbaz', [
        { id: 'item1', line: `GET /gmail/v1/users/me/threads/${tid('welcome')}?format=metadata HTTP/1.1` },
        { id: 'item2', line: `GET /gmail/v1/users/me/threads/ffffffffffffffff` },
        { id: 'item3', line: 'GET /gmail/v1/users/me/labels HTTP/1.1' },
        { id: 'item4', line: `GET /gmail/v1/users/me/threads/${tid('project')}?format=minimal` },
      ]),
    );
    expect(answer.status).toBe(200);
    const got = parts(answer);
    expect(got.map((p) => p.contentId)).toEqual([
      'response-item1',
      'response-item2',
      'response-item3',
      'response-item4',
    ]);
    for (const p of got) expect(p.outer).toContain('Content-Type: application/http');
    expect(got.map((p) => p.status)).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 200 OK',
      'HTTP/1.1 200 OK',
    ]);
    expect(got[0]?.json).toMatchObject({ id: tid('welcome') });
    expect(got[1]?.json).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    expect((got[2]?.json?.['labels'] as unknown[]).length).toBeGreaterThan(0);
    expect((got[3]?.json?.['messages'] as unknown[]).length).toBe(3);

    // One HTTP request; four API calls, each charged as if sent alone (threads.get 10, labels.list 1).
    const stats = h.sandbox.stats();
    expect(stats.requests).toBe(1);
    expect(stats.apiCalls).toBe(4);
    expect(stats.quotaUnits).toBe(3 * 10 + 1);
    expect(stats.byMethod['batch']).toEqual({ requests: 1, apiCalls: 0, quotaUnits: 0 });
    expect(stats.byMethod['threads.get']).toEqual({ requests: 0, apiCalls: 3, quotaUnits: 30 });
  });

  it('a part can fail on its own (injected 429 and 503, spent quota) while the batch answers 200', async () => {
    h = await startHarness({ quotaUnitsPerMinute: 25 });
    await h.token();
    h.sandbox.faults.script([
      { method: 'threads.get', kind: '429', times: 1, retryAfterSeconds: 3 },
      { method: 'labels.list', kind: 'http503', times: 1 },
    ]);
    const line = (key: string) => `GET /gmail/v1/users/me/threads/${tid(key)}?format=minimal`;
    const got = parts(
      await batch(
        body('batch_x1', [
          { id: 'a', line: line('welcome') },
          { id: 'b', line: line('project') },
          { id: 'c', line: 'GET /gmail/v1/users/me/labels' },
          { id: 'd', line: line('invoice') },
          { id: 'e', line: line('stale') },
        ]),
        undefined,
        'batch_x1',
      ),
    );
    expect(got.map((p) => p.status)).toEqual([
      'HTTP/1.1 429 Too Many Requests', // the scripted fault
      'HTTP/1.1 200 OK', // 10 units
      'HTTP/1.1 503 Service Unavailable', // the scripted fault
      'HTTP/1.1 200 OK', // 20 units
      'HTTP/1.1 429 Too Many Requests', // 30 would pass the budget of 25
    ]);
    expect(got[0]?.headers).toContain('Retry-After: 3');
    expect(got[4]?.json).toMatchObject({
      error: { code: 429, errors: [{ reason: 'userRateLimitExceeded' }] },
    });
    expect(h.sandbox.stats().quotaUnits).toBe(20);
  });

  it("checks each call's own token and scope; the outer Authorization applies where a call sets none", async () => {
    h = await startHarness();
    const readonly = await h.token(ALICE, ['gmail.readonly']);
    const bobs = await h.token(BOB);
    const got = parts(
      await batch(
        body('batch_s', [
          { id: '1', line: `GET /gmail/v1/users/me/threads/${tid('welcome')}?format=minimal` },
          {
            id: '2',
            line: `POST /gmail/v1/users/me/threads/${tid('welcome')}/trash`,
          },
          { id: '3', line: 'GET /gmail/v1/users/me/profile', headers: [`Authorization: Bearer ${bobs}`] },
        ]),
        readonly,
        'batch_s',
      ),
    );
    expect(got.map((p) => p.status)).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 403 Forbidden',
      'HTTP/1.1 200 OK',
    ]);
    expect(got[1]?.json).toMatchObject({ error: { errors: [{ reason: 'insufficientPermissions' }] } });
    expect(got[2]?.json).toMatchObject({ emailAddress: BOB });
    // The refused trash changed nothing.
    const welcome = h.sandbox.mailbox(ALICE).messages.filter((m) => m.threadId === tid('welcome'));
    for (const m of welcome) expect(m.labelIds).not.toContain('TRASH');
  });

  it('refuses more than 100 calls, and malformed bodies, with a 400 and runs none of them', async () => {
    h = await startHarness();
    await h.token();
    h.sandbox.resetStats();
    const calls = Array.from({ length: 101 }, (_, i) => ({
      id: `c${i}`,
      line: 'GET /gmail/v1/users/me/profile',
    }));
    const tooMany = await batch(body('batch_many', calls), undefined, 'batch_many');
    expect(tooMany.status).toBe(400);
    expect(JSON.parse(tooMany.text)).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    expect(h.sandbox.stats().apiCalls).toBe(0);
    expect(h.sandbox.stats().quotaUnits).toBe(0);
    // 100 is allowed.
    expect((await batch(body('batch_many', calls.slice(0, 100)), undefined, 'batch_many')).status).toBe(200);

    const bad = async (text: string, contentType: string) => {
      const res = await fetch(`${h.sandbox.url}/batch/gmail/v1`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${await h.token()}`, 'Content-Type': contentType },
        body: text,
      });
      return res.status;
    };
    expect(await bad('{"not":"multipart"}', 'application/json')).toBe(400);
    expect(await bad('', 'multipart/mixed; boundary=b')).toBe(400);
    expect(
      await bad('--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--', 'multipart/mixed; boundary=b'),
    ).toBe(400);
    expect(
      await bad(
        '--b\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n--b--',
        'multipart/mixed; boundary=b',
      ),
    ).toBe(400);
    expect(await bad('\u0000\u0001--b--garbage', 'multipart/mixed; boundary="')).toBe(400);
    // Still serving.
    expect((await h.gmail('profile')).status).toBe(200);
  });
});
