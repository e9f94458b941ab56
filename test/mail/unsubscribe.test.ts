import { describe, expect, it } from 'vitest';
import type { Header, MailMessage, MailThread } from '../../src/mail/types.js';
import {
  bodyUnsubscribeCandidates,
  findUnsubscribeHeaders,
  isOneClickPostValue,
  oneClickOf,
  parseListUnsubscribe,
  parseMailto,
  threadSenderMessage,
} from '../../src/mail/unsubscribe.js';

describe('parseListUnsubscribe (RFC 2369 §2)', () => {
  it('reads angle-bracket URIs separated by commas, in order, classified by scheme', () => {
    const p = parseListUnsubscribe(
      '<https://a.example/u?x=1>, <mailto:leave@a.example>, <http://a.example/u>',
    );
    expect(p.https).toEqual(['https://a.example/u?x=1']);
    expect(p.http).toEqual(['http://a.example/u']);
    expect(p.mailto.map((m) => m.address)).toEqual(['leave@a.example']);
    expect(p.ignoredText).toBe(false);
  });

  it('ignores whitespace and folding inside the brackets', () => {
    const p = parseListUnsubscribe('<https://a.example/unsub\r\n  scribe?id=\t42>');
    expect(p.https).toEqual(['https://a.example/unsubscribe?id=42']);
  });

  it('skips comments, nested and escaped, between and around items', () => {
    const p = parseListUnsubscribe(
      '(Use this (really) to leave \\) the list) <mailto:l@a.example> (or) , (web:) <https://a.example/x>',
    );
    expect(p.mailto.map((m) => m.uri)).toEqual(['mailto:l@a.example']);
    expect(p.https).toEqual(['https://a.example/x']);
  });

  it('ignores a field that does not start with "<"', () => {
    const p = parseListUnsubscribe('https://a.example/x, <https://b.example/y>');
    expect(p.https).toEqual([]);
    expect(p.ignoredText).toBe(true);
  });

  it('stops at anything but a comma after a URI, and at a sub-item that is not bracketed', () => {
    expect(parseListUnsubscribe('<https://a.example/1> junk <https://b.example/2>').https).toEqual([
      'https://a.example/1',
    ]);
    const p = parseListUnsubscribe('<https://a.example/1>, mailto:x@y.example, <https://b.example/2>');
    expect(p.https).toEqual(['https://a.example/1']);
    expect(p.ignoredText).toBe(true);
  });

  it('keeps an unclosed bracket out, and other schemes apart', () => {
    expect(parseListUnsubscribe('<https://a.example/1').https).toEqual([]);
    expect(parseListUnsubscribe('<ftp://a.example/x>, <javascript:alert(1)>').other).toEqual([
      'ftp://a.example/x',
      'javascript:alert(1)',
    ]);
  });

  it('matches schemes case-insensitively', () => {
    const p = parseListUnsubscribe('<HTTPS://A.example/x>, <MAILTO:L@a.example>');
    expect(p.https).toEqual(['HTTPS://A.example/x']);
    expect(p.mailto).toHaveLength(1);
  });
});

describe('parseMailto (RFC 6068)', () => {
  it('decodes the recipient and the subject and body params', () => {
    expect(parseMailto('mailto:sympa@lists.example.org?subject=unsubscribe%20weekly&body=bye%21')).toEqual({
      uri: 'mailto:sympa@lists.example.org?subject=unsubscribe%20weekly&body=bye%21',
      address: 'sympa@lists.example.org',
      subject: 'unsubscribe weekly',
      body: 'bye!',
    });
  });

  it('takes the first of several recipients, or a to= param', () => {
    expect(parseMailto('mailto:a@x.example,b@x.example')?.address).toBe('a@x.example');
    expect(parseMailto('mailto:?to=c%40x.example&subject=off')?.address).toBe('c@x.example');
  });

  it('has no option without a recipient, and survives bad escapes', () => {
    expect(parseMailto('mailto:?subject=x')).toBeUndefined();
    expect(parseMailto('mailto:a@x.example?subject=%E0%A4%A')?.subject).toBe('%E0%A4%A');
  });
});

const h = (name: string, value: string): Header => ({ name, value });

function msg(id: string, headers: Header[], labelIds: string[] = ['INBOX'], at = 0): MailMessage {
  return {
    id,
    threadId: 't',
    labelIds,
    internalDate: at,
    snippet: '',
    sizeEstimate: 0,
    headers,
    root: { partId: '', mimeType: 'text/plain', headers: [], filename: '', size: 0, children: [] },
  };
}

describe('one-click (RFC 8058 §3.1)', () => {
  const lu = h('List-Unsubscribe', '<https://a.example/u>, <mailto:l@a.example>');
  const post = h('List-Unsubscribe-Post', 'List-Unsubscribe=One-Click');

  it('needs the exact pair in List-Unsubscribe-Post on the same message', () => {
    expect(isOneClickPostValue(' List-Unsubscribe=One-Click ')).toBe(true);
    expect(isOneClickPostValue('List-Unsubscribe=One-Click; extra=1')).toBe(false);
    expect(oneClickOf([lu, post], parseListUnsubscribe(lu.value))).toEqual({
      ok: true,
      url: 'https://a.example/u',
    });
    expect(oneClickOf([lu], parseListUnsubscribe(lu.value)).ok).toBe(false);
  });

  it('refuses two List-Unsubscribe fields, two https URIs, or none', () => {
    const two = h('List-Unsubscribe', '<https://evil.example/u>');
    expect(oneClickOf([lu, two, post], parseListUnsubscribe(lu.value)).ok).toBe(false);
    const twoUris = h('List-Unsubscribe', '<https://a.example/1>, <https://b.example/2>');
    expect(oneClickOf([twoUris, post], parseListUnsubscribe(twoUris.value))).toMatchObject({ ok: false });
    const mailOnly = h('List-Unsubscribe', '<mailto:l@a.example>');
    expect(oneClickOf([mailOnly, post], parseListUnsubscribe(mailOnly.value))).toMatchObject({ ok: false });
  });

  it("takes the newest message carrying the header, and that message's own Post header", () => {
    const thread: MailThread = {
      id: 't',
      messages: [
        msg('m1', [h('From', 'List <news@a.example>'), lu, post], ['INBOX'], 1),
        msg('m2', [h('From', 'Me <me@x.example>')], ['SENT'], 2),
        msg('m3', [h('From', 'Editor <ed@a.example>')], ['INBOX', 'UNREAD'], 3),
      ],
    };
    const found = findUnsubscribeHeaders(thread);
    expect(found?.message.id).toBe('m1');
    expect(found?.newerMessages).toBe(2);
    expect(found?.oneClick).toEqual({ ok: true, url: 'https://a.example/u' });
    expect(threadSenderMessage(thread)?.id).toBe('m1');
  });

  it('does not borrow a Post header from another message', () => {
    const thread: MailThread = {
      id: 't',
      messages: [
        msg('m1', [lu, post], ['INBOX'], 1),
        msg('m2', [h('List-Unsubscribe', '<https://b.example/u>')]),
      ],
    };
    const found = findUnsubscribeHeaders(thread);
    expect(found?.message.id).toBe('m2');
    expect(found?.oneClick.ok).toBe(false);
  });

  it("ignores the owner's own messages and finds nothing in a thread without the header", () => {
    const thread: MailThread = { id: 't', messages: [msg('m1', [lu, post], ['SENT'])] };
    expect(findUnsubscribeHeaders(thread)).toBeUndefined();
    expect(threadSenderMessage(thread)).toBeUndefined();
  });
});

describe('bodyUnsubscribeCandidates', () => {
  it('finds labelled links in rendered HTML and plain text, not ordinary links', () => {
    const text = [
      'Read more [https://a.example/article]',
      'Unsubscribe [https://a.example/unsub?u=1] · Email preferences [https://a.example/prefs?u=1]',
      'Unsubscribe: https://a.example/unsub?u=1.',
      'https://a.example/out to opt out of these emails',
      'Se désinscrire [https://a.example/fr/d]',
    ].join('\n');
    expect(bodyUnsubscribeCandidates(text)).toEqual([
      { url: 'https://a.example/unsub?u=1', text: 'Unsubscribe' },
      { url: 'https://a.example/prefs?u=1', text: 'Email preferences' },
      { url: 'https://a.example/out', text: 'to opt out of these emails' },
      { url: 'https://a.example/fr/d', text: 'Se désinscrire' },
    ]);
  });

  it('caps the list', () => {
    const text = Array.from({ length: 9 }, (_, i) => `Unsubscribe https://a.example/u${i}`).join('\n');
    expect(bodyUnsubscribeCandidates(text)).toHaveLength(5);
  });
});
