import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/*
 * Issue 10, classes 3 and 7 through the real server: what a result shows is what is there —
 * the file on disk, the request that would be made, the attachment found by its shown name —
 * and nothing a person cannot see reaches the model.
 */

let stack: Stack;
let dir: string;
let newsletter: string;
let attachmentThread: string;
let exportThread: string;
let invisibleThread: string;

const mail = (headers: string[], body: string): string => [...headers, '', body].join('\r\n');

// A Cyrillic "о" in the host, a zero-width space and a right-to-left override in the query.
const LOOKALIKE_URL = 'https://news.n\u043erthwind-bank.com/u?id=1\u200B&x=\u202Eevil';
const LOOKALIKE_HREF = 'https://news.xn--nrthwind-bank-i7k.com/u?id=1%E2%80%8B&x=%E2%80%AEevil';

// Format characters the old hand list missed, U+2028/2029, bidi, tags, and emoji sequences.
const INVISIBLE_SUBJECT =
  'Inv\u0600oi\u06DDce\u070F \u0890p\u08E2a\u{110BD}i\u{13430}d\u{1BCA0} \u{1D173}now \u{E0041}\u202E👩\u200D💻 ❤\uFE0F';
const INVISIBLE_BODY = 'line one\u2028line two\u2029line three\r\nfour\u0085five\u000Csix\u200B\u2060';

beforeAll(async () => {
  dir = tempDir('mailwarden-files-urls-');
  stack = await startStack({ env: { MAILWARDEN_DOWNLOAD_DIR: dir } });
  const deliver = (raw: string): string => stack.sandbox.deliver(DEMO_ADDRESS, raw, ['INBOX']).threadId;
  newsletter = deliver(
    mail(
      [
        'From: Northwind Bank News <news@northwind-bank.com>',
        `To: ${DEMO_ADDRESS}`,
        'Subject: Your December statement is ready',
        'Message-ID: <nw-dec@northwind-bank.com>',
        `List-Unsubscribe: <${LOOKALIKE_URL}>, <http://n0rthwind-bank.com/u>`,
        'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
      ],
      'Your statement is ready.',
    ),
  );
  attachmentThread = deliver(
    mail(
      [
        'From: Ada <ada@example.org>',
        `To: ${DEMO_ADDRESS}`,
        'Subject: the report',
        'Message-ID: <att-names@example.org>',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
      ],
      [
        '--b1',
        'Content-Type: text/plain',
        '',
        'See attached.',
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        // RFC 2231: fence brackets, a zero-width space, an RLO and a CRLF inside the name.
        "Content-Disposition: attachment; filename*=utf-8''report%20%E2%9F%A6final%E2%9F%A7%E2%80%8B%E2%80%AE%0D%0Anext.txt",
        '',
        'quarterly numbers',
        '--b1--',
        '',
      ].join('\r\n'),
    ),
  );
  exportThread = deliver(
    mail(
      [
        'From: Ada <ada@example.org>',
        `To: ${DEMO_ADDRESS}`,
        'Subject: =?utf-8?B?' +
          Buffer.from('Q4 \u27E6plan\u27E7 👩\u200D💻 ❤\uFE0F \u202Ereview\u200B\u2028ok').toString(
            'base64',
          ) +
          '?=',
        'Message-ID: <export-name@example.org>',
      ],
      'The plan.',
    ),
  );
  invisibleThread = deliver(
    mail(
      [
        'From: Ada <ada@example.org>',
        `To: ${DEMO_ADDRESS}`,
        `Subject: =?utf-8?B?${Buffer.from(INVISIBLE_SUBJECT).toString('base64')}?=`,
        'Message-ID: <invisible-2@example.org>',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: base64',
      ],
      Buffer.from(INVISIBLE_BODY).toString('base64'),
    ),
  );
});
afterAll(async () => {
  await stack?.close();
});

describe('list_unsubscribe shows the request that would be made', () => {
  it('the URL as requested, the host in punycode beside its Unicode form, the lookalike flagged', async () => {
    const r = await stack.call('list_unsubscribe', { threadId: newsletter });
    expect(r.isError, r.text).toBe(false);
    const o = r.structured['options'] as {
      oneClickUrl: string;
      https: Array<Record<string, unknown>>;
      http: Array<Record<string, unknown>>;
    };
    expect(unfence(o.oneClickUrl)).toBe(LOOKALIKE_HREF);
    const [https] = o.https.map((u) =>
      Object.fromEntries(Object.entries(u).map(([k, v]) => [k, typeof v === 'string' ? unfence(v) : v])),
    );
    expect(https).toEqual({
      url: LOOKALIKE_HREF,
      host: 'news.xn--nrthwind-bank-i7k.com',
      hostUnicode: 'news.n\u043erthwind-bank.com',
      lookalike: true,
      resembles: 'news.northwind-bank.com',
    });
    expect(
      o.http.map((u) => [unfence(u['url'] as string), u['lookalike'], unfence(u['resembles'] as string)]),
    ).toEqual([['http://n0rthwind-bank.com/u', true, 'northwind-bank.com']]);
    // Nothing hidden: the zero-width space and the override are visible as %E2%80%8B / %E2%80%AE.
    expect(r.text).not.toMatch(/[\u200B\u202E]/);
  });

  it('unsubscribe dryRun would call exactly the URL list_unsubscribe showed', async () => {
    const r = await stack.call('unsubscribe', { threadId: newsletter, dryRun: true });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured['outcome']).toBe('would_call');
    expect(unfence(r.structured['wouldCall'] as string)).toBe(LOOKALIKE_HREF);
  });
});

describe('attachments are found and saved under the name shown', () => {
  const SHOWN = 'report [final] next.txt';

  it('get_thread shows the name cleaned, on one line; read_attachment finds it by that name', async () => {
    const t = await stack.call('get_thread', { threadId: attachmentThread });
    const atts = (t.structured['messages'] as Array<{ attachments: Array<{ filename: string }> }>)[0]
      ?.attachments;
    expect(atts?.map((a) => unfence(a.filename))).toEqual([SHOWN]);
    const r = await stack.call('read_attachment', {
      threadId: attachmentThread,
      filename: atts?.[0]?.filename,
    });
    expect(r.isError, r.text).toBe(false);
    expect(unfence(r.structured['filename'] as string)).toBe(SHOWN);
    expect(unfence((r.structured['entries'] as Array<{ text: string }>)[0]?.text ?? '')).toBe(
      'quarterly numbers',
    );
    const bare = await stack.call('read_attachment', { threadId: attachmentThread, filename: SHOWN });
    expect(bare.isError, bare.text).toBe(false);
  });

  it('download_attachment reports the path it wrote: same name on disk, same bytes', async () => {
    const r = await stack.call('download_attachment', { threadId: attachmentThread, filename: SHOWN });
    expect(r.isError, r.text).toBe(false);
    const savedAs = unfence(r.structured['savedAs'] as string);
    const path = unfence(r.structured['path'] as string);
    expect(savedAs).toBe(SHOWN);
    expect(path).toBe(join(r.structured['directory'] as string, savedAs));
    expect(readdirSync(dir)).toContain(savedAs);
    expect(readFileSync(path, 'utf8')).toBe('quarterly numbers');
    expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(r.structured['sha256']);
  });

  it('export_thread reports the file it wrote when the subject holds characters results rewrite', async () => {
    const r = await stack.call('export_thread', { threadId: exportThread });
    expect(r.isError, r.text).toBe(false);
    const savedAs = unfence(r.structured['savedAs'] as string);
    expect(savedAs).toBe('Q4 [plan] 👩\u200D💻 ❤\uFE0F review ok.md');
    const path = unfence(r.structured['path'] as string);
    expect(readdirSync(dir)).toContain(savedAs);
    const bytes = readFileSync(path);
    expect(bytes.byteLength).toBe(r.structured['bytes']);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(r.structured['sha256']);
  });
});

describe('characters a person cannot see never reach the model', () => {
  it('strips every format character, keeps emoji whole, turns U+2028/2029 and CR into newlines', async () => {
    const r = await stack.call('get_thread', { threadId: invisibleThread });
    expect(r.isError, r.text).toBe(false);
    const m = (r.structured['messages'] as Array<{ subject: string; body: string }>)[0];
    expect(unfence(m?.subject ?? '')).toBe('Invoice paid now 👩\u200D💻 ❤\uFE0F');
    expect(unfence(m?.body ?? '')).toBe('line one\nline two\nline three\nfour\nfive\nsix');
    expect(r.text).not.toMatch(/[\p{Cf}\u2028\u2029\r](?<!\u200D)/u);
    const hit = await stack.call('search', { query: 'rfc822msgid:invisible-2@example.org' });
    const subject = (hit.structured['threads'] as Array<{ subject: string }>)[0]?.subject ?? '';
    expect(unfence(subject)).toBe('Invoice paid now 👩\u200D💻 ❤\uFE0F');
  });
});
