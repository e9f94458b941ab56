import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import {
  decodePartText,
  extractBody,
  htmlToReadableText,
  listAttachments,
  snippetOf,
} from '../../src/mail/body.js';
import { parseRawMessage } from '../../src/mail/mime.js';
import type { MimeNode } from '../../src/mail/types.js';

function fixture(name: string): MimeNode {
  return parseRawMessage(readFileSync(new URL(`../fixtures/eml/${name}`, import.meta.url))).root;
}

function part(contentType: string | undefined, bytes: Uint8Array | string): MimeNode {
  const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  return {
    partId: '',
    mimeType: (contentType ?? 'text/plain').split(';')[0]?.trim().toLowerCase() ?? 'text/plain',
    headers: contentType === undefined ? [] : [{ name: 'Content-Type', value: contentType }],
    filename: '',
    size: body.length,
    body,
    children: [],
  };
}

describe('decodePartText', () => {
  it('decodes windows-1252 bytes 0x80–0x9F to the characters they stand for', () => {
    expect(decodePartText(fixture('windows-1252.eml'))).toBe(
      'Price: 20 € — ‚low‘ „quoted“ … ‘single’ “double” – dash\n',
    );
  });

  it('decodes ISO-8859-1 quoted-printable', () => {
    expect(decodePartText(fixture('latin1-qp.eml'))).toBe(
      'Liebe Grüße aus Köln!\nSchöne Straße, große Häuser, © 2024.\n',
    );
  });

  it('reads an ISO-8859-1 label as windows-1252 (WHATWG), so mislabelled € and quotes survive', () => {
    expect(
      decodePartText(part('text/plain; charset=iso-8859-1', Buffer.from([0x80, 0x20, 0x93, 0x41, 0x94]))),
    ).toBe('€ “A”');
  });

  it('decodes Shift_JIS (cp932) and ISO-2022-JP bodies', () => {
    expect(decodePartText(fixture('shift-jis.eml'))).toBe(
      '田中様\nお世話になっております。\n①会議は金曜日です。\n',
    );
    expect(decodePartText(fixture('iso-2022-jp.eml'))).toBe(
      '山田様\n明日の会議は午後3時からです。\nよろしくお願いします。\n',
    );
  });

  it('without a charset: UTF-8 when valid, else windows-1252; BOM stripped', () => {
    expect(decodePartText(part(undefined, 'naïve €'))).toBe('naïve €');
    expect(decodePartText(part(undefined, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80])))).toBe('café €');
    expect(decodePartText(part('text/plain; charset=us-ascii', Buffer.from([0x93, 0x78, 0x94])))).toBe('“x”');
    expect(decodePartText(part('text/plain; charset=x-nonsense', 'ok ✓'))).toBe('ok ✓');
    expect(decodePartText(part('text/plain; charset=utf-8', '\uFEFFhello'))).toBe('hello');
    // A BOM outranks the label.
    expect(decodePartText(part('text/plain; charset=windows-1252', '\uFEFFüber'))).toBe('über');
  });

  it('takes an HTML part charset from its <meta> when the header has none', () => {
    const html = Buffer.concat([
      Buffer.from(
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r"></head><body>',
      ),
      Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]),
      Buffer.from('</body></html>'),
    ]);
    expect(htmlToReadableText(decodePartText(part('text/html', html)))).toBe('Привет');
  });

  it('undoes format=flowed (RFC 3676) with space-stuffing and delsp', () => {
    expect(
      decodePartText(
        part(
          'text/plain; format=flowed',
          'This is \r\nflowed.\r\n From here\r\n> quoted \r\n> more\r\n-- \r\nsig',
        ),
      ),
    ).toBe('This is flowed.\nFrom here\n> quoted more\n-- \nsig');
    expect(decodePartText(part('text/plain; format=flowed; delsp=yes', 'ab \r\ncd'))).toBe('abcd');
  });
});

describe('htmlToReadableText', () => {
  const newsletter = (): string => extractBody(fixture('newsletter-html.eml')).text;

  it('renders the HTML-only newsletter with link targets, once each', () => {
    expect(newsletter()).toBe(
      [
        'Big Sale',
        '',
        'Save 50% — Shop the sale [https://deals.example.com/sale?utm=nl].',
        '',
        'https://deals.example.com/blog',
        '',
        'Sale banner',
        '',
        'Questions? help@deals.example.com',
        '',
        'Left cell',
        'Right cell',
        '',
        'Small print stays.',
        '',
        'Unsubscribe [https://deals.example.com/u/123]',
      ].join('\n'),
    );
  });

  it('drops the display:none preheader, class-hidden text, <style>, <script> and data: URIs', () => {
    const text = newsletter();
    expect(text).not.toMatch(/ignore previous instructions/i);
    expect(text).not.toContain('evil.example');
    expect(text).not.toContain('Hidden by class rule');
    expect(text).not.toContain('alert');
    expect(text).not.toContain('display');
    expect(text).not.toContain('data:');
    expect(text).not.toContain('open.gif');
    expect(text).not.toContain('Deals\n'); // <title>
  });

  it('drops the usual hiding tricks but keeps visible text', () => {
    const html = [
      '<p>visible one</p>',
      '<div style="DISPLAY : None">h1</div>',
      '<div style="display&#58;none">h2</div>',
      '<span style="visibility:hidden">h3</span>',
      '<span style="font-size:0px">h4</span>',
      '<span style="opacity:0">h5</span>',
      '<div hidden>h6</div>',
      '<div style="max-height:0;overflow:hidden">h7</div>',
      '<div style="position:absolute;left:-9999px">h8</div>',
      '<div style="text-indent:-10000px">h9</div>',
      '<div id="pre">h10</div><style>#pre { display:none }</style>',
      '<style>@media (max-width:600px){ .mob { display:none } }</style><p class="mob">visible two</p>',
      '<p style="font-size:0.5em;opacity:0.8">visible three</p>',
    ].join('');
    expect(htmlToReadableText(html)).toBe('visible one\n\nvisible two\n\nvisible three');
  });

  it('cannot be desynchronised from the renderer by comments, raw text or escapes', () => {
    const tricks = [
      '<!-- <a title=" --><div style="display:none">h1</div><p title="x">visible</p>',
      '<style>/* <!-- */</style><div style="display:none">h2</div>',
      '<![CDATA[<!--]]><div style="display:none">h3</div>',
      '<div style="display: n\\6f ne">h4</div>',
      '<style>.x\\31 { visibility: hidden }</style><span class="x1">h5</span>',
      '<DIV STYLE="DISPLAY:NONE">h6</DIV><div/style="display:none">h7</div>',
    ].join('');
    expect(htmlToReadableText(tricks)).toBe('visible');
  });

  it('stays fast on hostile markup', () => {
    const started = Date.now();
    htmlToReadableText('<a "'.repeat(50_000) + '<style>'.repeat(20_000) + '/*'.repeat(20_000));
    htmlToReadableText(`<div style="${'/*'.repeat(50_000)}">x</div>`);
    expect(htmlToReadableText('<div>'.repeat(5_000) + 'deep')).toBe('deep');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('shows link targets except when the label already is the target, or it is an in-page/data link', () => {
    expect(htmlToReadableText('<a href="https://example.com/">https://example.com</a>')).toBe(
      'https://example.com',
    );
    expect(htmlToReadableText('<a href="https://evil.example/login">https://bank.example/login</a>')).toBe(
      'https://bank.example/login [https://evil.example/login]',
    );
    expect(
      htmlToReadableText(
        '<a href="https://x.example/a"><img src="data:image/png;base64,AAAA" alt="Click"></a>',
      ),
    ).toBe('Click [https://x.example/a]');
    expect(htmlToReadableText('<a href="https://x.example/only"></a>')).toBe('https://x.example/only');
    expect(htmlToReadableText('<a href="#top">Top</a> <a href="data:text/html,hi">Data</a>')).toBe(
      'Top Data',
    );
    expect(htmlToReadableText('<a href="https://x.example/?a=1&amp;b=2">Go</a>')).toBe(
      'Go [https://x.example/?a=1&b=2]',
    );
  });

  it('can leave link targets out (for snippets)', () => {
    expect(htmlToReadableText('<a href="https://x.example/">Go</a>', { links: false })).toBe('Go');
  });
});

describe('extractBody', () => {
  it('prefers text/plain in multipart/alternative', () => {
    expect(extractBody(fixture('alternative-qp.eml'))).toEqual({
      text: 'Bonjour Bob,\n\nShall we meet at the café on Tuesday? This line is long enough that the encoder had to wrap it with a soft line break.\nPrice: 5 € = cheap.',
      source: 'text',
      hidden: [],
    });
    expect(extractBody(fixture('nested-mixed-related.eml'))).toEqual({
      text: 'Hi Bob,\nthe report is attached.',
      source: 'text',
      hidden: [],
    });
  });

  it('uses the HTML when the text/plain alternative is an empty stub, and for HTML-only mail', () => {
    const raw = [
      'Content-Type: multipart/alternative; boundary=a',
      '',
      '--a',
      'Content-Type: text/plain',
      '',
      '   ',
      '--a',
      'Content-Type: text/html',
      '',
      '<p>Rich <b>text</b></p>',
      '--a--',
    ].join('\r\n');
    expect(extractBody(parseRawMessage(raw).root)).toEqual({ text: 'Rich text', source: 'html', hidden: [] });
    expect(extractBody(fixture('newsletter-html.eml')).source).toBe('html');
  });

  it('concatenates inline text parts of multipart/mixed in order, skipping attachments', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary=m',
      '',
      '--m',
      'Content-Type: text/plain',
      '',
      'Part one.',
      '--m',
      'Content-Type: text/plain; name=notes.txt',
      'Content-Disposition: attachment; filename=notes.txt',
      '',
      'attached notes',
      '--m',
      'Content-Type: text/calendar; method=REQUEST',
      '',
      'BEGIN:VCALENDAR',
      '--m',
      'Content-Type: text/plain',
      'Content-Disposition: inline',
      '',
      'Part two.',
      '--m--',
    ].join('\r\n');
    const root = parseRawMessage(raw).root;
    expect(extractBody(root)).toEqual({ text: 'Part one.\n\nPart two.', source: 'text', hidden: [] });
    expect(listAttachments(root)).toEqual([
      { partId: '1', filename: 'notes.txt', mimeType: 'text/plain', size: 14, inline: false },
      { partId: '2', filename: '', mimeType: 'text/calendar', size: 15, inline: false },
    ]);
  });

  it("reports 'none' when there is no text", () => {
    const raw = 'Content-Type: application/pdf; name=a.pdf\nContent-Transfer-Encoding: base64\n\nJVBERi0=\n';
    expect(extractBody(parseRawMessage(raw).root)).toEqual({
      text: '',
      source: 'none',
      hidden: [],
      emptyReason: 'no-text-part',
    });
  });
});

describe('listAttachments', () => {
  it('lists the PDF and the inline related image with their part ids and sizes', () => {
    expect(listAttachments(fixture('nested-mixed-related.eml'))).toEqual([
      { partId: '0.1', filename: '', mimeType: 'image/png', size: 70, inline: true },
      { partId: '1', filename: 'Q3 report.pdf', mimeType: 'application/pdf', size: 77, inline: false },
    ]);
  });

  it('lists RFC 2231 and RFC 2047 named files with exact names', () => {
    expect(
      listAttachments(fixture('rfc2231-filename.eml')).map((a) => [a.partId, a.filename, a.mimeType]),
    ).toEqual([
      ['1', '報告書 — final version 2024.pdf', 'application/pdf'],
      ['2', 'Grüße.txt', 'text/plain'],
      ['3', 'Résumé.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ]);
  });

  it('lists message/rfc822 and passes through a provider attachmentId', () => {
    const root: MimeNode = {
      partId: '',
      mimeType: 'multipart/mixed',
      headers: [],
      filename: '',
      size: 0,
      children: [
        { ...part('text/plain', 'hi'), partId: '0' },
        { ...part('message/rfc822', 'Subject: x\r\n\r\ny'), partId: '1' },
        {
          partId: '2',
          mimeType: 'application/zip',
          headers: [{ name: 'Content-Disposition', value: 'attachment; filename="r.zip"' }],
          filename: 'r.zip',
          size: 1234,
          attachmentId: 'ANGjdJ_abc',
          children: [],
        },
      ],
    };
    expect(listAttachments(root)).toEqual([
      { partId: '1', filename: '', mimeType: 'message/rfc822', size: 15, inline: false },
      {
        partId: '2',
        filename: 'r.zip',
        mimeType: 'application/zip',
        size: 1234,
        attachmentId: 'ANGjdJ_abc',
        inline: false,
      },
    ]);
  });

  it('lists nothing for plain messages', () => {
    expect(listAttachments(fixture('alternative-qp.eml'))).toEqual([]);
    expect(listAttachments(fixture('newsletter-html.eml'))).toEqual([]);
  });
});

describe('snippetOf', () => {
  it('collapses whitespace and cuts at max characters', () => {
    expect(snippetOf(fixture('nested-mixed-related.eml'))).toBe('Hi Bob, the report is attached.');
    expect(snippetOf(fixture('alternative-qp.eml'), 20)).toBe('Bonjour Bob, Shall w');
    expect(snippetOf(fixture('iso-2022-jp.eml'), 5)).toBe('山田様 明');
  });

  it('leaves link targets and hidden preheaders out of HTML snippets', () => {
    expect(snippetOf(fixture('newsletter-html.eml'), 60)).toBe(
      'Big Sale Save 50% — Shop the sale. https://deals.example.com',
    );
  });

  it('never cuts a surrogate pair', () => {
    expect(snippetOf(part('text/plain; charset=utf-8', 'ab😀cd'), 3)).toBe('ab😀');
  });
});
