import { describe, expect, it } from 'vitest';
import { extractBody } from '../../src/mail/body.js';
import {
  buildDraft,
  cleanHeaderText,
  parseRecipient,
  parseRecipients,
  replyRecipients,
  replySubject,
  replyThreading,
  rfc5322Date,
} from '../../src/mail/draft.js';
import type { DraftSpec } from '../../src/mail/draft.js';
import { MailError } from '../../src/mail/errors.js';
import { headerValue, parseAddressList } from '../../src/mail/headers.js';
import { parseRawMessage } from '../../src/mail/mime.js';

const ME = { name: '', address: 'me@example.com' };
const NOW = Date.UTC(2026, 10, 30, 12, 5, 9);

function spec(over: Partial<DraftSpec> = {}): DraftSpec {
  return {
    from: ME,
    to: [{ name: 'Ann', address: 'ann@example.org' }],
    cc: [],
    bcc: [],
    subject: 'Lunch',
    body: 'See you at noon.\n',
    date: NOW,
    messageId: '<abc-1@example.com>',
    ...over,
  };
}

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof MailError && e.code === 'invalid_input') return e.field;
    throw e;
  }
  throw new Error('expected invalid_input');
}

/** The header block: every physical line and the unfolded headers. */
function head(raw: string): { lines: string[] } {
  return { lines: (raw.split('\r\n\r\n')[0] ?? '').split('\r\n') };
}

describe('recipients', () => {
  it('takes a bare address or a display name with one', () => {
    expect(parseRecipient('to.0', 'ann@example.org')).toEqual({ name: '', address: 'ann@example.org' });
    expect(parseRecipient('to.0', '"Smith, Ann" <ann@example.org>')).toEqual({
      name: 'Smith, Ann',
      address: 'ann@example.org',
    });
  });

  it('refuses header injection through CR or LF, naming the field', () => {
    expect(fieldOf(() => parseRecipients('to', ['a@b.example', 'x@y.example\r\nBcc: evil@z.example']))).toBe(
      'to.1',
    );
    expect(fieldOf(() => parseRecipient('cc.0', 'Ann\n <ann@example.org>'))).toBe('cc.0');
  });

  it('refuses two addresses in one item, malformed and non-ASCII addresses, hiding characters', () => {
    expect(fieldOf(() => parseRecipient('to.0', 'a@b.example, c@d.example'))).toBe('to.0');
    expect(fieldOf(() => parseRecipient('to.0', 'not an address'))).toBe('to.0');
    expect(fieldOf(() => parseRecipient('to.0', 'ann@exämple.org'))).toBe('to.0');
    expect(fieldOf(() => parseRecipient('to.0', 'ann@localhost'))).toBe('to.0');
    expect(fieldOf(() => parseRecipient('to.0', 'Ann\u202Egro.elpmaxe <ann@example.org>'))).toBe('to.0');
  });
});

describe('buildDraft', () => {
  it('writes CRLF headers, a msg-id, an RFC 5322 date and a 7bit body for ASCII text', () => {
    const raw = buildDraft(spec());
    const { lines } = head(raw);
    expect(lines).toEqual([
      'From: me@example.com',
      'To: Ann <ann@example.org>',
      'Subject: Lunch',
      'Date: Mon, 30 Nov 2026 12:05:09 +0000',
      'Message-ID: <abc-1@example.com>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset="UTF-8"',
      'Content-Transfer-Encoding: 7bit',
    ]);
    expect(raw.endsWith('\r\n\r\nSee you at noon.\r\n')).toBe(true);
    expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it('encodes non-ASCII subject and names per RFC 2047, folded under 76 columns, and decodes back', () => {
    const subject = 'Réunion: budget 2027 — ¿qué tal? 日本語の件名もここにあります、とても長い';
    const raw = buildDraft(
      spec({ subject, to: [{ name: 'Zoë Ångström', address: 'zoe@example.org' }], body: 'Grüße 👋\n' }),
    );
    const { lines } = head(raw);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(76);
    expect(lines.join('\n')).not.toMatch(/[^\x20-\x7e\n]/);
    const parsed = parseRawMessage(raw);
    expect(headerValue(parsed.headers, 'Subject')).toBe(subject);
    expect(parseAddressList(headerValue(parsed.headers, 'To') ?? '')).toEqual([
      { name: 'Zoë Ångström', address: 'zoe@example.org' },
    ]);
    expect(headerValue(parsed.headers, 'Content-Transfer-Encoding')).toBe('base64');
    expect(extractBody(parsed.root).text.trimEnd()).toBe('Grüße 👋');
  });

  it('encodes ASCII text that would read as an encoded-word, and quotes names with specials', () => {
    const raw = buildDraft(
      spec({ subject: 'about =?utf-8?q?x?=', to: [{ name: 'Smith, Ann', address: 'ann@example.org' }] }),
    );
    const parsed = parseRawMessage(raw);
    expect(headerValue(parsed.headers, 'Subject')).toBe('about =?utf-8?q?x?=');
    expect(raw).toContain('To: "Smith, Ann" <ann@example.org>');
  });

  it('keeps Cc and Bcc and threading headers', () => {
    const raw = buildDraft(
      spec({
        cc: [{ name: '', address: 'c@example.org' }],
        bcc: [{ name: '', address: 'b@example.org' }],
        inReplyTo: '<p@x.example>',
        references: ['<root@x.example>', '<p@x.example>'],
      }),
    );
    expect(raw).toContain('\r\nCc: c@example.org\r\n');
    expect(raw).toContain('\r\nBcc: b@example.org\r\n');
    expect(raw).toContain('\r\nIn-Reply-To: <p@x.example>\r\n');
    expect(raw).toContain('\r\nReferences: <root@x.example> <p@x.example>\r\n');
  });

  it('refuses a subject or name that would add a header', () => {
    expect(fieldOf(() => buildDraft(spec({ subject: 'Hi\r\nBcc: evil@z.example' })))).toBe('subject');
    expect(fieldOf(() => buildDraft(spec({ subject: 'Hi\nX: y' })))).toBe('subject');
    expect(fieldOf(() => buildDraft(spec({ to: [{ name: 'A\rB', address: 'ann@example.org' }] })))).toBe(
      'to.0',
    );
    expect(fieldOf(() => buildDraft(spec({ body: 'hidden \u{E0041}\u{E0042}' })))).toBe('body');
  });

  it('a body line of any content stays in the body', () => {
    const raw = buildDraft(spec({ body: 'line one\r\nBcc: evil@z.example\r\n\r\nend' }));
    const parsed = parseRawMessage(raw);
    expect(headerValue(parsed.headers, 'Bcc')).toBeUndefined();
    expect(extractBody(parsed.root).text).toContain('Bcc: evil@z.example');
  });

  it('formats dates in UTC', () => {
    expect(rfc5322Date(Date.UTC(2027, 0, 3, 4, 5, 6))).toBe('Sun, 3 Jan 2027 04:05:06 +0000');
  });
});

describe('replies', () => {
  it('adds Re: once', () => {
    expect(replySubject('Lunch')).toBe('Re: Lunch');
    expect(replySubject('Re: Lunch')).toBe('Re: Lunch');
    expect(replySubject('RE:Lunch')).toBe('RE:Lunch');
    expect(replySubject('Re[2]: Lunch')).toBe('Re[2]: Lunch');
    expect(replySubject('Fwd: Lunch')).toBe('Re: Fwd: Lunch');
    expect(replySubject('  Lunch   plans ')).toBe('Re: Lunch plans');
  });

  it('cleans a parent subject of controls and hiding characters instead of refusing it', () => {
    expect(cleanHeaderText('Invoice\u202E fdp.exe\u0007 due')).toBe('Invoice fdp.exe due');
  });

  it('threads on the parent: References + its Message-ID, In-Reply-To the parent', () => {
    expect(replyThreading({ messageId: '<p@x>', references: '<a@x> <b@x>', inReplyTo: '<b@x>' })).toEqual({
      inReplyTo: '<p@x>',
      references: ['<a@x>', '<b@x>', '<p@x>'],
    });
    expect(replyThreading({ messageId: '<p@x>', references: undefined, inReplyTo: '<b@x>' })).toEqual({
      inReplyTo: '<p@x>',
      references: ['<b@x>', '<p@x>'],
    });
    expect(
      replyThreading({ messageId: undefined, references: '<a@x>', inReplyTo: undefined }),
    ).toBeUndefined();
    const many = Array.from({ length: 30 }, (_, i) => `<m${i}@x>`).join(' ');
    const t = replyThreading({ messageId: '<p@x>', references: many, inReplyTo: undefined });
    expect(t?.references).toHaveLength(20);
    expect(t?.references[0]).toBe('<m0@x>');
    expect(t?.references.at(-1)).toBe('<p@x>');
  });

  it('replies to Reply-To, else From; reply-all adds To and Cc minus me and duplicates', () => {
    const parent = {
      from: 'Ann <ann@example.org>',
      replyTo: undefined,
      to: 'me@example.com, Bob <bob@example.org>',
      cc: 'ANN@example.org, Carol <carol@example.org>, "Me Again" <ME@example.com>',
    };
    expect(replyRecipients(parent, 'me@example.com', false)).toEqual({
      to: [{ name: 'Ann', address: 'ann@example.org' }],
      cc: [],
      skipped: [],
    });
    const all = replyRecipients(parent, 'me@example.com', true);
    expect(all.to.map((a) => a.address)).toEqual(['ann@example.org']);
    expect(all.cc.map((a) => a.address)).toEqual(['bob@example.org', 'carol@example.org']);
    const viaReplyTo = replyRecipients(
      { ...parent, replyTo: 'List <list@example.org>' },
      'me@example.com',
      false,
    );
    expect(viaReplyTo.to).toEqual([{ name: 'List', address: 'list@example.org' }]);
  });

  it('a reply to my own message goes to its recipients; unwritable addresses are skipped', () => {
    const r = replyRecipients(
      {
        from: 'Me <me@example.com>',
        replyTo: undefined,
        to: 'dan@example.org, bad@exämple.org',
        cc: undefined,
      },
      'me@example.com',
      false,
    );
    expect(r.to.map((a) => a.address)).toEqual(['dan@example.org']);
    expect(r.skipped).toEqual(['bad@exämple.org']);
  });
});
