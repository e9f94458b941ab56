import { afterEach, describe, expect, it } from 'vitest';
import { MailError } from '../../../src/mail/errors.js';
import type { MailThread } from '../../../src/mail/types.js';
import { GmailMailbox } from '../../../src/providers/gmail/mailbox.js';
import { checkEgress } from '../../../src/providers/gmail/egress.js';
import { encodeBatch } from '../../../src/providers/gmail/batch-format.js';
import { loopbackTransport } from '../../../src/providers/gmail/transport.js';
import type { Transport } from '../../../src/providers/gmail/transport.js';
import { ALICE, startHarness } from '../../sandbox/helpers.js';
import type { Harness } from '../../sandbox/helpers.js';
import { fakeTime } from './helpers.js';

/*
 * The client's batch reads (GmailMailbox.getThreads → GmailClient.callMany) against the sandbox
 * over loopback HTTP: what comes back per thread, what is sent again, and what each costs.
 */

let h: Harness;
afterEach(async () => {
  await h.sandbox.close();
});

function mailbox(transport?: Transport): { mb: GmailMailbox; slept: number[] } {
  const time = fakeTime();
  const mb = new GmailMailbox({
    account: 'default',
    credentials: { ...h.sandbox.oauthClient, refreshToken: h.sandbox.refreshTokenFor(ALICE) },
    tiers: new Set(['read']),
    transport: transport ?? loopbackTransport(h.sandbox.url),
    clock: time.clock,
    sleep: time.sleep,
    random: () => 0.5,
  });
  return { mb, slept: time.slept };
}

const allThreads = () => h.sandbox.mailbox(ALICE).threads.map((t) => t.id);

describe('GmailMailbox.getThreads (Gmail batch requests)', () => {
  it('reads every thread in batches of at most 50 calls: one HTTP request per 50, each call counted and charged', async () => {
    h = await startHarness();
    const { mb } = mailbox();
    await mb.getProfile();
    const ids = allThreads();
    // 120 reads: the sandbox's threads, repeated, so three batches are needed (50, 50, 20).
    const wanted = Array.from({ length: 120 }, (_, i) => ids[i % ids.length] as string);
    h.sandbox.resetStats();
    const before = mb.usage();
    const got = await mb.getThreads(wanted, { format: 'metadata', metadataHeaders: ['From'] });
    expect(got.map((t) => (t as MailThread).id)).toEqual(wanted);
    const s = h.sandbox.stats();
    expect(s.requests).toBe(3);
    expect(s.byMethod['threads.get']).toEqual({ requests: 0, apiCalls: 120, quotaUnits: 1200 });
    // The client's own counters agree: three requests, the inner calls' units.
    expect(mb.usage()).toEqual({ requests: before.requests + 3, quotaUnits: before.quotaUnits + 1200 });
  });

  it('sends again only the call that got 429, after the Retry-After, and returns all the others as they came', async () => {
    h = await startHarness();
    const { mb, slept } = mailbox();
    await mb.getProfile();
    const ids = allThreads().slice(0, 6);
    h.sandbox.faults.script([
      { method: 'threads.get', kind: '429', skip: 2, times: 1, retryAfterSeconds: 2 },
    ]);
    h.sandbox.resetStats();
    const got = await mb.getThreads(ids, { format: 'full' });
    expect(got.map((t) => (t instanceof MailError ? t.code : t.id))).toEqual(ids);
    const s = h.sandbox.stats();
    expect(s.byMethod['batch']?.requests).toBe(2);
    // Six calls, then the one that was refused: seven API calls, six of them charged.
    expect(s.byMethod['threads.get']).toEqual({ requests: 0, apiCalls: 7, quotaUnits: 60 });
    expect(slept).toContain(2000);
  });

  it("a call that keeps failing with 503 ends as that thread's error once the retries are spent", async () => {
    h = await startHarness();
    const { mb } = mailbox();
    await mb.getProfile();
    const ids = allThreads().slice(0, 4);
    h.sandbox.faults.script([{ method: 'threads.get', path: new RegExp(`${ids[1]}$`), kind: 'http503' }]);
    h.sandbox.resetStats();
    const got = await mb.getThreads(ids, { format: 'metadata' });
    expect(got.map((t) => (t instanceof MailError ? t.code : t.id))).toEqual([
      ids[0],
      'upstream_unavailable',
      ids[2],
      ids[3],
    ]);
    // The policy's 4 attempts: the first batch of 4 calls, then 3 batches of that one call.
    expect(h.sandbox.stats().byMethod['batch']?.requests).toBe(4);
    expect(h.sandbox.stats().byMethod['threads.get']?.apiCalls).toBe(4 + 3);
  });

  it('a thread that is gone is its own not_found error, exactly as a direct threads.get gives it', async () => {
    h = await startHarness();
    const { mb } = mailbox();
    const ids = allThreads().slice(0, 3);
    const gone = 'ffffffffffffffff';
    const got = await mb.getThreads([ids[0] as string, gone, ids[1] as string], { format: 'full' });
    expect((got[0] as MailThread).id).toBe(ids[0]);
    expect((got[2] as MailThread).id).toBe(ids[1]);
    const direct = await mb.getThread(gone, { format: 'full' }).catch((e: unknown) => e);
    expect(got[1]).toBeInstanceOf(MailError);
    expect(direct).toBeInstanceOf(MailError);
    expect({ code: (got[1] as MailError).code, message: (got[1] as MailError).message }).toEqual({
      code: (direct as MailError).code,
      message: (direct as MailError).message,
    });
    expect((got[1] as MailError).code).toBe('not_found');
  });

  it('sends nothing once the call is aborted: no later batch goes out', async () => {
    h = await startHarness();
    const ids = allThreads();
    const wanted = Array.from({ length: 120 }, (_, i) => ids[i % ids.length] as string);
    const controller = new AbortController();
    const late: string[] = [];
    let batches = 0;
    const loop = loopbackTransport(h.sandbox.url);
    // The first batch comes back and the call is aborted before another request could leave.
    const transport: Transport = async (url, init) => {
      if (controller.signal.aborted) late.push(url);
      const res = await loop(url, init);
      if (url.includes('/batch/')) {
        batches += 1;
        controller.abort();
      }
      return res;
    };
    const { mb } = mailbox(transport);
    await mb.getProfile();
    await expect(mb.getThreads(wanted, { format: 'metadata', signal: controller.signal })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(batches).toBeGreaterThan(0);
    // Nothing is handed to the transport once the call was aborted: not the third batch, no retry.
    expect(late).toEqual([]);
  });
});

describe('the egress checkpoint on a batch', () => {
  const tiers = new Set(['read', 'manage'] as const);
  const url = 'https://gmail.googleapis.com/batch/gmail/v1';
  const ct = 'multipart/mixed; boundary=batch_t';
  const one = (line: string) => encodeBatch('batch_t', [{ contentId: '0', http: `${line}\r\n\r\n` }]);

  it('passes a batch of reads in the form the client writes, charged as its calls', () => {
    const body = encodeBatch('batch_t', [
      { contentId: '0', http: 'GET /gmail/v1/users/me/threads/abc?format=full\r\n\r\n' },
      { contentId: '1', http: 'GET /gmail/v1/users/me/threads/def?format=metadata\r\n\r\n' },
    ]);
    expect(checkEgress({ method: 'POST', url, body, contentType: ct }, tiers)).toMatchObject({
      name: 'batch',
      units: 20,
    });
  });

  it('refuses a batch that carries a write, a send, another host, headers of its own, or a different body', () => {
    const refused = (body: string, contentType = ct) =>
      expect(() => checkEgress({ method: 'POST', url, body, contentType }, tiers)).toThrow(/refused/);
    refused(one('POST /gmail/v1/users/me/threads/abc/trash'));
    refused(one('POST /gmail/v1/users/me/messages/send'));
    refused(one('GET /gmail/v1/users/me/settings/forwardingAddresses'));
    refused(one('GET https://evil.example/gmail/v1/users/me/threads/abc'));
    refused(one('GET /gmail/v1/users/me/threads/abc?alt=media'));
    refused(
      encodeBatch('batch_t', [
        { contentId: '0', http: 'GET /gmail/v1/users/me/threads/abc\r\nAuthorization: Bearer x\r\n\r\n' },
      ]),
    );
    // A second, differently bounded body hidden after the first: not the bytes the client writes.
    refused(`${one('GET /gmail/v1/users/me/threads/abc')}--other\r\n`);
    refused(one('GET /gmail/v1/users/me/threads/abc'), 'multipart/mixed; boundary=other');
    const many = encodeBatch(
      'batch_t',
      Array.from({ length: 101 }, (_, i) => ({
        contentId: String(i),
        http: 'GET /gmail/v1/users/me/profile\r\n\r\n',
      })),
    );
    refused(many);
    expect(() => checkEgress({ method: 'GET', url }, tiers)).toThrow(/refused/);
  });
});
