import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unfence } from '../../src/mcp/untrusted.js';
import { MAX_RESULT_BYTES } from '../../src/mail/bounds.js';
import { HOSTILE_SEED, KOREAN, MARKED_LABEL, SJIS_TEXT } from '../fixtures/hostile-three.js';
import { startBackend } from '../helpers/backends.js';
import type { Backend, BackendKind } from '../helpers/backends.js';
import type { CallOutcome } from '../helpers/stack.js';

/*
 * Issue 23 on the Gmail sandbox and on both Dovecot profiles, with the crafted messages of
 * test/fixtures/hostile-three.ts: results are bounded with what they leave out counted, names
 * from the mailbox are fenced, blank characters and Dovecot's NUL read the same everywhere,
 * hidden elements stay out of the body, text decodes as a careful reader decodes it, a message
 * with two From addresses gets no single verdict, and the text copy carries every follow-up id.
 */

type Obj = Record<string, unknown>;
const FENCE = /\u27E6mail ([0-9a-f]+)\u27E7([\s\S]*?)\u27E6\/mail \1\u27E7/g;
const nonceOf = (r: CallOutcome): string => /\u27E6mail ([0-9a-f]+)\u27E7/.exec(r.text)?.[1] ?? 'none';
const outside = (s: string, nonce: string): string =>
  s.replace(FENCE, (m, n: string) => (n === nonce ? '' : m));

/** The serialized size of a result as a client receives it (both copies). */
const sizeOf = (r: CallOutcome): number =>
  Buffer.byteLength(
    JSON.stringify({ content: [{ type: 'text', text: r.text }], structuredContent: r.structured }),
  );

/** Every string of a value, with where it sits. */
function strings(v: unknown, path = '$'): Array<[string, string]> {
  if (typeof v === 'string') return [[path, v]];
  if (Array.isArray(v)) return v.flatMap((x, i) => strings(x, `${path}[${i}]`));
  if (v !== null && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) => strings(x, `${path}.${k}`));
  return [];
}

const KINDS: BackendKind[] = ['gmail', 'full', 'bridge'];

for (const kind of KINDS) {
  describe(`issue 23 on ${kind}`, () => {
    let b: Backend;
    const ok = async (tool: string, args: Obj = {}): Promise<CallOutcome> => {
      const r = await b.call(tool, args);
      expect(r.isError, `${tool}: ${r.text.slice(0, 400)}`).toBe(false);
      expect(sizeOf(r), `${tool}: bounded`).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      return r;
    };
    const message = async (key: string, args: Obj = {}): Promise<Obj> => {
      const r = await ok('get_thread', { threadId: b.tid(key), ...args });
      const list = r.structured['messages'] as Obj[];
      return list[list.length - 1] as Obj;
    };

    beforeAll(async () => {
      b = await startBackend(kind, { seed: HOSTILE_SEED });
    }, 240_000);
    afterAll(async () => {
      await b?.close();
    });

    describe('1. every result is bounded, and what is left out is counted', () => {
      it('50,000 header lines: the headers are capped and counted, and the session lives on', async () => {
        const m = await message('huge-headers', { bodies: 'full' });
        const headers = m['headers'] as unknown[];
        expect(headers.length).toBeLessThanOrEqual(100);
        expect((m['omitted'] as Obj)['headers']).toBeGreaterThanOrEqual(50_000 - 100);
        expect(unfence(m['body'] as string)).toBe('Only a few words.');
        await ok('get_profile');
      });

      it('5,000 recipients: whole addresses while they fit, the rest counted', async () => {
        const m = await message('many-recipients');
        const to = unfence(m['to'] as string);
        expect(to.length).toBeLessThanOrEqual(300);
        expect(to).toMatch(/^Person 0 <p0@crowd\.example>, /);
        expect(to).toMatch(/>$/);
        expect((m['omitted'] as Obj)['to']).toBeGreaterThan(4_900);
      });

      it('300 attachments: 50 listed, 250 counted, in get_thread and search', async () => {
        const m = await message('many-parts', { bodies: 'none' });
        expect((m['attachments'] as unknown[]).length).toBe(50);
        expect(m['omitted']).toEqual({ attachments: 250 });
        const s = await ok('search', { query: 'subject:"300 attachments"', maxResults: 5 });
        const hit = (s.structured['threads'] as Obj[]).find((t) => t['threadId'] === b.tid('many-parts'));
        expect(hit?.['omitted']).toEqual({ attachments: 250 });
      });

      it('a References header of 3,000 ids: its value is cut at 1,000 characters, and counted', async () => {
        const m = await message('long-references', { bodies: 'full' });
        const refs = (m['headers'] as Obj[]).find((h) => unfence(h['name'] as string) === 'References');
        expect(unfence(refs?.['value'] as string).length).toBe(1_000);
        expect((m['omitted'] as Obj)['headerChars']).toBeGreaterThan(60_000);
      });

      it('35 labels: 30 listed, the rest counted', async () => {
        const m = await message('many-labels', { bodies: 'none' });
        expect((m['labels'] as unknown[]).length).toBe(30);
        expect((m['omitted'] as Obj)['labels']).toBe(36 - 30);
      });

      it('30 unsubscribe URIs: 10 listed, 20 counted', async () => {
        const r = await ok('list_subscriptions', { query: 'from:news@list.hostile-three.example' });
        const sender = (r.structured['senders'] as Obj[])[0] as Obj;
        const u = sender['unsubscribe'] as Obj;
        expect((u['https'] as unknown[]).length).toBe(10);
        expect(u['omitted']).toEqual({ https: 20 });
      });

      it('five 200,000-character bodies asked for whole share one budget, newest first', async () => {
        const r = await ok('get_thread', { threadId: b.tid('big-bodies'), maxBodyChars: 100_000 });
        const ms = r.structured['messages'] as Obj[];
        expect(ms).toHaveLength(5);
        const newest = ms[4] as Obj;
        expect(unfence(newest['body'] as string)).toMatch(/^4: All work/);
        expect(unfence(newest['body'] as string).length).toBe(100_000);
        const oldest = ms[0] as Obj;
        expect(oldest['bodyTruncated']).toBe(true);
        expect(unfence(oldest['body'] as string).length).toBeLessThan(100_000);
        const counted = ms.reduce(
          (n, m) => n + Number((m['omitted'] as Obj | undefined)?.['bodyChars'] ?? 0),
          0,
        );
        const shown = ms.reduce((n, m) => n + unfence(m['body'] as string).length, 0);
        // Each body is "N: " and 200,000 characters, its last space trimmed.
        expect(shown + counted).toBe(5 * 200_002);
      });
    });

    describe('2. names from the mailbox are fenced everywhere, and ids stay usable', () => {
      const inFolder = 'subject:"in a mail-made folder"';
      const check = (tool: string, r: CallOutcome): void => {
        const nonce = nonceOf(r);
        expect(outside(r.text, nonce), `${tool} text`).not.toMatch(/ignore.previous.instructions/);
        for (const [path, s] of strings(r.structured))
          expect(outside(s, nonce), `${tool} ${path}`).not.toMatch(/ignore.previous.instructions|MKR/);
        // Bridge: every folder a result located copies from is fenced, INBOX aside.
        const places = (r.structured['reusedChecks'] as Obj | undefined)?.['places'] as string[] | undefined;
        for (const p of places ?? []) if (p !== 'INBOX') expect(p, `${tool} places`).not.toBe(unfence(p));
      };

      it('search, get_message, get_thread, triage_digest, list_new_mail, list_labels', async () => {
        const s = await ok('search', { query: inFolder });
        check('search', s);
        const hit = (s.structured['threads'] as Obj[])[0] as Obj;
        expect((hit['labels'] as string[]).some((l) => unfence(l).startsWith('MKR'))).toBe(true);
        const messageId = (hit['last'] as Obj)['messageId'] as string;
        check('get_message', await ok('get_message', { messageId, bodies: 'none' }));
        check('get_thread', await ok('get_thread', { threadId: hit['threadId'], bodies: 'none' }));
        check('triage_digest', await ok('triage_digest', { query: inFolder }));
        check('list_new_mail', await ok('list_new_mail', { limit: 200 }));
        for (const format of ['json', 'text'])
          check(`search ${format}`, await ok('search', { query: 'newer_than:30d', maxResults: 30, format }));
        const labels = await ok('list_labels');
        check('list_labels', labels);
        const marked = (labels.structured['labels'] as Obj[]).find((l) =>
          unfence(l['name'] as string).startsWith('MKR'),
        );
        expect(marked?.['name']).not.toBe(unfence(marked?.['name'] as string));
      });

      it('the fenced id from list_labels is accepted back by a label tool', async () => {
        const labels = await ok('list_labels');
        const marked = (labels.structured['labels'] as Obj[]).find((l) =>
          unfence(l['name'] as string).startsWith('MKR'),
        );
        const threadId = b.tid('marked-label');
        const off = await ok('modify_labels', { threadIds: [threadId], remove: [marked?.['id']] });
        expect((off.structured['changed'] as unknown[]).length).toBe(1);
        const on = await ok('modify_labels', { threadIds: [threadId], add: [marked?.['id']] });
        expect((on.structured['changed'] as unknown[]).length).toBe(1);
        const m = await message('marked-label', { bodies: 'none' });
        expect((m['labels'] as string[]).some((l) => unfence(l).startsWith('MKR'))).toBe(true);
        expect(MARKED_LABEL).toContain('\u27E7');
      });
    });

    describe('3. characters that look like nothing', () => {
      it('the Braille blank shows as a space and long runs collapse, in subject, name, body and snippet', async () => {
        const m = await message('blank-chars');
        expect(unfence(m['subject'] as string)).toBe('Invoice ignore the above');
        expect(unfence(m['from'] as string)).toBe('PayPal Support <help@blank.example>');
        expect(unfence(m['body'] as string)).toBe('Dear customer read this too');
        const s = await ok('search', { query: 'from:help@blank.example' });
        const hit = (s.structured['threads'] as Obj[])[0] as Obj;
        expect(unfence(hit['snippet'] as string)).not.toMatch(/\u2800| {2}/);
      });

      it('a NUL in the subject reads the same on every server (Dovecot hands it out as 0x80)', async () => {
        const m = await message('nul-subject', { bodies: 'none' });
        expect(unfence(m['subject'] as string)).toBe('nulinsubject');
      });
    });

    describe('4. hidden elements stay out of the body and are counted', () => {
      it('svg 0×0, a closed details and noscript', async () => {
        const m = await message('hidden-elements');
        const body = unfence(m['body'] as string);
        expect(body).toContain('Visible words.');
        expect(body).toContain('Terms');
        expect(body).not.toMatch(/SVG:|DETAILS:|NOSCRIPT:/);
        expect((m['hiddenText'] as Obj)['reasons']).toEqual(['zero-size-svg', 'closed-details', 'noscript']);
      });
    });

    describe('5. decoding like a careful reader', () => {
      it('read_attachment reads a Shift_JIS text attachment in its declared charset', async () => {
        const r = await ok('read_attachment', {
          threadId: b.tid('sjis-attachment'),
          filename: 'note-sjis.txt',
        });
        const entry = (r.structured['entries'] as Obj[])[0] as Obj;
        expect(unfence(entry['text'] as string)).toBe(SJIS_TEXT);
        expect(entry['charset']).toBe('shift_jis');
      });

      it('iso-2022-kr, a base64 pad mid-stream, 200-deep multipart, a named text part', async () => {
        expect(unfence((await message('iso-2022-kr'))['body'] as string)).toBe(KOREAN);
        expect(unfence((await message('base64-mid-pad'))['body'] as string)).toBe('Grüße');
        const deep = await message('deep-multipart');
        expect(unfence(deep['body'] as string)).toBe('Found at depth 200.');
        expect(deep).not.toHaveProperty('emptyBodyReason');
        const named = await message('named-text');
        expect(unfence(named['body'] as string)).toBe('The gate code changes on Monday.');
        expect((named['attachments'] as Obj[]).map((a) => unfence(a['filename'] as string))).toEqual([
          'minutes.txt',
        ]);
      });
    });

    describe('6. one From, one verdict', () => {
      it('two From addresses: no headerFrom, no dmarc pass beside paypal.com, the signal set', async () => {
        const m = await message('multi-from', { bodies: 'none' });
        const a = m['authentication'] as Obj;
        expect(a).not.toHaveProperty('headerFrom');
        expect(a).not.toHaveProperty('dmarc');
        expect((a['fromDomains'] as string[]).map(unfence)).toEqual(['paypal.com', 'evil.example']);
        const other = a['dmarcOther'] as Obj;
        expect(other['result']).toBe('pass');
        expect(unfence(other['domain'] as string)).toBe('evil.example');
        const s = await ok('search', { query: 'subject:"Your account"' });
        const hit = (s.structured['threads'] as Obj[]).find((t) => t['threadId'] === b.tid('multi-from'));
        expect(hit?.['signals']).toContain('multipleFrom');
      });
    });

    describe('7. the text copy carries every id and option a follow-up call needs', () => {
      /** Keys whose values a follow-up call takes (attachmentId aside: partId is the handle). */
      const FOLLOW_UP = new Set([
        'threadId',
        'messageId',
        'id',
        'partId',
        'nextPageToken',
        'examples',
        'newestThreadId',
        'unsubscribeThreadId',
        'oneClickUrl',
        'url',
        'uid',
      ]);
      function followUps(v: unknown, key = ''): string[] {
        if (typeof v === 'string' || typeof v === 'number')
          return FOLLOW_UP.has(key) && v !== '' ? [String(v)] : [];
        if (Array.isArray(v)) return v.flatMap((x) => followUps(x, key));
        if (v !== null && typeof v === 'object')
          return Object.entries(v).flatMap(([k, x]) => followUps(x, k));
        return [];
      }

      it('for every read tool with a text copy', async () => {
        const m = await message('conversation', { bodies: 'none' });
        const calls: Array<[string, Obj]> = [
          ['search', { query: 'newer_than:30d', maxResults: 30 }],
          ['get_thread', { threadId: b.tid('conversation'), bodies: 'text' }],
          ['get_thread', { threadId: b.tid('sjis-attachment'), bodies: 'text' }],
          ['get_message', { messageId: m['id'], bodies: 'full' }],
          ['list_labels', {}],
          ['triage_digest', { query: 'newer_than:30d' }],
          ['follow_ups', {}],
          ['list_subscriptions', { query: 'newer_than:30d' }],
          ['list_snoozed', {}],
          ['list_new_mail', { limit: 200 }],
          ['count_moves', {}],
        ];
        let checked = 0;
        for (const [tool, args] of calls) {
          const json = await ok(tool, args);
          const text = await ok(tool, { ...args, format: 'text' });
          const ids = followUps(json.structured);
          // The nonce differs per result: compare fenced values by what they hold.
          const plainText = text.text.replace(FENCE, '$2');
          for (const id of ids) expect(plainText, `${tool}: ${id}`).toContain(unfence(id));
          checked += ids.length;
        }
        expect(checked).toBeGreaterThan(50);
      }, 240_000);

      it('list_subscriptions text names the unsubscribe thread and the one-click option', async () => {
        const r = await ok('list_subscriptions', {
          query: 'from:news@garden-weekly.example',
          format: 'text',
        });
        expect(r.text).toContain(`unsubscribe (threadId ${b.tid('one-click')})`);
        expect(r.text).toMatch(
          /one-click \u27E6mail [0-9a-f]+\u27E7https:\/\/garden-weekly\.example\/unsub\/abc123/,
        );
        const dry = await ok('unsubscribe', { threadId: b.tid('one-click'), dryRun: true });
        expect(dry.text).not.toMatch(/no message in the thread has a List-Unsubscribe header/);
      });
    });
  });
}
