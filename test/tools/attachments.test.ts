import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { DEMO_ADDRESS, DEMO_FACTS } from '../../src/sandbox/corpus/index.js';
import { startStack } from '../helpers/stack.js';
import type { Stack } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

interface Entry {
  name: string;
  size: number;
  charset: string;
  guessedCharset: boolean;
  chars: number;
  from?: number;
  text?: string;
}
interface ReadOut {
  format: string;
  detected: string;
  filename: string;
  entries: Entry[];
  skipped: Array<{ name: string; reason: string }>;
  listing?: Array<{ name: string; size: number }>;
  totalChars: number;
  nextOffset?: number;
}
interface Attachment {
  filename: string;
  mimeType: string;
  partId: string;
}
interface ThreadOut {
  messages: Array<{ id: string; attachments: Attachment[] }>;
}

const FENCED = /^\u27E6mail [0-9a-f]+\u27E7[\s\S]*\u27E6\/mail [0-9a-f]+\u27E7$/;

let stack: Stack;
let withDir: Stack;
let downloadDir: string;
const tid = (key: string) => stack.sandbox.threadIdForKey(DEMO_ADDRESS, key);

beforeAll(async () => {
  stack = await startStack();
  downloadDir = tempDir('mailwarden-downloads-');
  withDir = await startStack({
    existingSandbox: stack.sandbox,
    env: { MAILWARDEN_DOWNLOAD_DIR: downloadDir },
  });
});
afterAll(async () => {
  await withDir?.close();
  await stack?.close();
});

describe('read_attachment on the demo DMARC reports', () => {
  it('reads the XML inside the zip, fenced', async () => {
    const r = await stack.call('read_attachment', {
      threadId: tid(DEMO_FACTS.keys.dmarcZip),
      filename: DEMO_FACTS.dmarcFiles.zip,
    });
    expect(r.isError).toBe(false);
    const out = r.structured as unknown as ReadOut;
    expect(out).toMatchObject({ format: 'zip', detected: 'zip archive', skipped: [] });
    expect(unfence(out.filename)).toBe(DEMO_FACTS.dmarcFiles.zip);
    const [entry] = out.entries;
    expect(unfence(entry?.name ?? '')).toBe(DEMO_FACTS.dmarcFiles.xmlInZip);
    expect(entry).toMatchObject({ charset: 'utf-8', guessedCharset: false, from: 0 });
    expect(entry?.text).toMatch(FENCED);
    expect(unfence(entry?.text ?? '')).toMatch(
      /^<\?xml[\s\S]*<org_name>mailhub\.example<\/org_name>[\s\S]*<\/feedback>\n$/,
    );
    expect(r.text.startsWith('Text between')).toBe(true);
  });

  it('reads the XML inside the gzip by messageId and partId', async () => {
    const thread = (
      await stack.call('get_thread', { threadId: tid(DEMO_FACTS.keys.dmarcGzip), bodies: 'none' })
    ).structured as unknown as ThreadOut;
    const m = thread.messages[0];
    const a = m?.attachments.find((x) => unfence(x.filename) === DEMO_FACTS.dmarcFiles.gzip);
    const r = await stack.call('read_attachment', { messageId: m?.id, partId: a?.partId });
    expect(r.isError).toBe(false);
    const out = r.structured as unknown as ReadOut;
    expect(out.format).toBe('gzip');
    expect(unfence(out.entries[0]?.name ?? '')).toBe(DEMO_FACTS.dmarcFiles.gzip.replace(/\.gz$/, ''));
    expect(out.entries[0]?.text).toMatch(FENCED);
    expect(unfence(out.entries[0]?.text ?? '')).toContain('<org_name>Postbox Mail</org_name>');
  });

  it('lists the zip without reading it, and pages with offset', async () => {
    const threadId = tid(DEMO_FACTS.keys.dmarcZip);
    const list = await stack.call('read_attachment', {
      threadId,
      filename: DEMO_FACTS.dmarcFiles.zip,
      list: true,
    });
    const listed = list.structured as unknown as ReadOut;
    expect(listed.listing?.map((l) => unfence(l.name))).toEqual([DEMO_FACTS.dmarcFiles.xmlInZip]);
    expect(listed.entries).toEqual([]);
    const first = (
      await stack.call('read_attachment', { threadId, filename: DEMO_FACTS.dmarcFiles.zip, maxChars: 1000 })
    ).structured as unknown as ReadOut;
    expect(first.nextOffset).toBe(1000);
    const second = (
      await stack.call('read_attachment', {
        threadId,
        filename: DEMO_FACTS.dmarcFiles.zip,
        maxChars: 1000,
        offset: 1000,
      })
    ).structured as unknown as ReadOut;
    expect(second.entries[0]?.from).toBe(1000);
  });

  it('refuses a PNG with a pointer to download_attachment', async () => {
    let found: { threadId: string; messageId: string; partId: string } | undefined;
    for (const key of DEMO_FACTS.keys.withAttachments) {
      const t = (await stack.call('get_thread', { threadId: tid(key), bodies: 'none' }))
        .structured as unknown as ThreadOut;
      for (const m of t.messages) {
        const png = m.attachments.find((a) => unfence(a.mimeType) === 'image/png');
        if (png) found = { threadId: tid(key), messageId: m.id, partId: png.partId };
      }
      if (found) break;
    }
    expect(found).toBeDefined();
    const r = await stack.call('read_attachment', found ?? {});
    expect(r.isError).toBe(true);
    expect(r.error).toMatchObject({
      code: 'unsupported',
      message: expect.stringMatching(/PNG image.*download_attachment/),
    });
  });

  it('says which attachments exist when the one asked for does not', async () => {
    const r = await stack.call('read_attachment', {
      threadId: tid(DEMO_FACTS.keys.dmarcZip),
      filename: 'nope.txt',
    });
    expect(r.error).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(/\/1\b/),
    });
  });
});

describe('download_attachment and export_thread', () => {
  it('refuse when MAILWARDEN_DOWNLOAD_DIR is unset, saying how to set it', async () => {
    for (const [tool, args] of [
      [
        'download_attachment',
        { threadId: tid(DEMO_FACTS.keys.dmarcZip), filename: DEMO_FACTS.dmarcFiles.zip },
      ],
      ['export_thread', { threadId: tid(DEMO_FACTS.keys.dmarcZip) }],
    ] as const) {
      const r = await stack.call(tool, args);
      expect(r.isError).toBe(true);
      expect(r.error).toMatchObject({
        code: 'forbidden_operation',
        message: expect.stringMatching(/MAILWARDEN_DOWNLOAD_DIR/),
      });
    }
  });

  it('save the attachment bytes, never overwriting, never through a planted symlink, and log it', async () => {
    const outside = tempDir('mailwarden-outside-');
    symlinkSync(join(outside, DEMO_FACTS.dmarcFiles.zip), join(downloadDir, DEMO_FACTS.dmarcFiles.zip));
    const args = { threadId: tid(DEMO_FACTS.keys.dmarcZip), filename: DEMO_FACTS.dmarcFiles.zip };
    const one = await withDir.call('download_attachment', args);
    const two = await withDir.call('download_attachment', args);
    expect(one.isError).toBe(false);
    const stem = DEMO_FACTS.dmarcFiles.zip.replace(/\.zip$/, '');
    expect(unfence(one.structured['savedAs'] as string)).toBe(`${stem} (1).zip`);
    expect(unfence(two.structured['savedAs'] as string)).toBe(`${stem} (2).zip`);
    expect(readdirSync(outside)).toEqual([]);
    const bytes = readFileSync(unfence(one.structured['path'] as string));
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(one.structured['sha256']);
    expect(one.structured).toMatchObject({ detected: 'zip archive', renamed: true, bytes: bytes.length });
    const log = readFileSync(join(withDir.configDir, 'action-log.jsonl'), 'utf8');
    expect(log).toContain('"op":"saveAttachment"');
  });

  it('export_thread writes markdown with the body fenced and the names in code spans', async () => {
    const r = await withDir.call('export_thread', {
      threadId: tid(DEMO_FACTS.keys.dmarcZip),
      saveAs: '../report',
    });
    expect(r.isError).toBe(false);
    expect(unfence(r.structured['savedAs'] as string)).toBe('report.md');
    const md = readFileSync(unfence(r.structured['path'] as string), 'utf8');
    expect(md).toMatch(/^# `Report domain: mailwarden\.example/);
    expect(md).toContain(`\`${DEMO_FACTS.dmarcFiles.zip}\``);
    expect(md).toMatch(/\n```text\n[\s\S]+\n```\n/);
    expect(md).toContain('- **Sender authentication:**');
  });

  it('export_thread json is what get_thread shows, without fences', async () => {
    const threadId = tid(DEMO_FACTS.keys.dmarcGzip);
    const r = await withDir.call('export_thread', { threadId, format: 'json' });
    const file = JSON.parse(readFileSync(unfence(r.structured['path'] as string), 'utf8')) as Record<
      string,
      unknown
    >;
    const view = (await withDir.call('get_thread', { threadId })).structured;
    expect(file['threadId']).toBe(threadId);
    expect(JSON.stringify(file)).not.toContain('\u27E6mail');
    const unfenceDeep = (v: unknown): unknown =>
      typeof v === 'string'
        ? unfence(v)
        : Array.isArray(v)
          ? v.map(unfenceDeep)
          : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unfenceDeep(x)]))
            : v;
    expect(file).toEqual(unfenceDeep(view));
  });
});
